//! The outbox (docs/methodology.md §15 "outbox"): a study that finished while its PostgreSQL
//! history could not be reached is kept in a SQLite history of its own, one per database
//! (src/history/location.rs `pending_path`), until `abprof history push` sends it. A push is
//! idempotent: the database recognizes a study it already holds by its identity, and a study
//! leaves the outbox only once the database has it.
use super::backend::History;
use super::error::HistoryError;
use super::location::{outbox_dir, unnamed_pending_path};
use super::record::RecordedStudy;
use super::row::Store;
use super::sqlite::SqliteStore;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// What `abprof history push` did.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Pushed {
    pub(crate) history: String,
    pub(crate) pending: PathBuf,
    pub(crate) studies: Vec<RecordedStudy>,
    /// Other outboxes that still hold studies: other databases', and the one outbox of an
    /// abprof before per-database outboxes (`unnamed`: its studies' database is not known).
    pub(crate) waiting: Vec<Waiting>,
}

/// An outbox this push did not send.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Waiting {
    pub(crate) outbox: PathBuf,
    pub(crate) studies: usize,
    pub(crate) unnamed: bool,
}

/// Sends every study in the outbox file `pending` to `history`, each in its own transaction,
/// and removes it from the outbox once sent.
pub(crate) fn push(history: &mut History, pending: &Path) -> Result<Pushed, HistoryError> {
    let mut done = Pushed {
        history: history.location.to_string(),
        pending: pending.to_path_buf(),
        studies: Vec::new(),
        waiting: Vec::new(),
    };
    if pending.exists() {
        let mut outbox = SqliteStore::open(pending)?;
        for s in outbox.studies()? {
            let t0 = Instant::now();
            let recorded = history.record(&s.record)?;
            outbox.delete(&s.record.identity)?;
            done.studies.push(RecordedStudy { write_ms: t0.elapsed().as_secs_f64() * 1000.0, ..recorded });
        }
    }
    done.waiting = waiting_besides(pending)?;
    Ok(done)
}

/// The outboxes other than `sent` that hold a study.
fn waiting_besides(sent: &Path) -> Result<Vec<Waiting>, HistoryError> {
    let mut files: Vec<(PathBuf, bool)> = unnamed_pending_path().map(|p| (p, true)).into_iter().collect();
    if let Ok(dir) = outbox_dir() {
        let mut named: Vec<PathBuf> = std::fs::read_dir(dir)
            .map(|rd| rd.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "db")).collect())
            .unwrap_or_default();
        named.sort();
        files.extend(named.into_iter().map(|p| (p, false)));
    }
    let mut waiting = Vec::new();
    for (outbox, unnamed) in files {
        if outbox == sent || !outbox.is_file() {
            continue;
        }
        let studies = SqliteStore::open(&outbox)?.count()?;
        if studies > 0 {
            waiting.push(Waiting { outbox, studies, unnamed });
        }
    }
    Ok(waiting)
}
