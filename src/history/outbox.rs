//! The outbox (docs/methodology.md §15 "outbox"): a study that finished while its PostgreSQL
//! history could not be reached is kept in a SQLite history of its own beside the default one,
//! `pending.db`, until `abprof history push` sends it. A push is idempotent: the database
//! recognizes a study it already holds by its identity, and a study leaves the outbox only
//! once the database has it.
use super::backend::History;
use super::error::HistoryError;
use super::location::pending_path;
use super::record::RecordedStudy;
use super::row::Store;
use super::sqlite::SqliteStore;
use serde::Serialize;
use std::path::PathBuf;
use std::time::Instant;

/// What `abprof history push` did.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Pushed {
    pub(crate) history: String,
    pub(crate) pending: PathBuf,
    pub(crate) studies: Vec<RecordedStudy>,
}

/// Sends every study in the outbox to `history`, each in its own transaction, and removes it
/// from the outbox once sent.
pub(crate) fn push(history: &mut History) -> Result<Pushed, HistoryError> {
    let pending = pending_path()?;
    let mut done = Pushed { history: history.location.to_string(), pending: pending.clone(), studies: Vec::new() };
    if !pending.exists() {
        return Ok(done);
    }
    let mut outbox = SqliteStore::open(&pending)?;
    for s in outbox.studies()? {
        let t0 = Instant::now();
        let recorded = history.record(&s.record)?;
        outbox.delete(&s.record.identity)?;
        done.studies.push(RecordedStudy { write_ms: t0.elapsed().as_secs_f64() * 1000.0, ..recorded });
    }
    Ok(done)
}
