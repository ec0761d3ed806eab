//! The history as the commands see it, whatever the backend: open it where `--history` says,
//! record a finished study, read every study back; a PostgreSQL history that cannot be reached
//! sends a study's record to the outbox (docs/methodology.md §15 "outbox").
use super::error::HistoryError;
use super::location::{pending_path, HistoryLocation};
use super::record::{RecordedStudy, StudyRecord};
use super::row::{Store, StoredStudy};
use super::{postgres, sqlite};
use std::path::PathBuf;
use std::time::Instant;

/// The history a run writes to or a query reads.
pub(crate) struct History {
    pub(crate) location: HistoryLocation,
    /// None: a PostgreSQL history that could not be reached (why beside it); a study's record
    /// goes to the outbox (src/history/outbox.rs).
    store: Option<Box<dyn Store>>,
    unreachable: Option<String>,
}

/// Where a finished study's record went.
pub(crate) enum Recording {
    Stored(RecordedStudy),
    /// The database could not be reached: the record waits in the outbox for `history push`.
    Pending {
        pending: PathBuf,
        cause: String,
    },
}

fn open_store(location: &HistoryLocation) -> Result<Box<dyn Store>, HistoryError> {
    Ok(match location {
        HistoryLocation::Sqlite(path) => Box::new(sqlite::SqliteStore::open(path)?),
        HistoryLocation::Postgres(t) => Box::new(postgres::PgStore::connect(t).map_err(|e| e.at(&t.url))?),
    })
}

impl History {
    /// Opens the history, creating and migrating it as needed.
    pub(crate) fn open(location: &HistoryLocation) -> Result<History, HistoryError> {
        Ok(History { location: location.clone(), store: Some(open_store(location)?), unreachable: None })
    }

    /// Opens the history if it exists (a PostgreSQL database always does).
    pub(crate) fn open_existing(location: &HistoryLocation) -> Result<Option<History>, HistoryError> {
        match location {
            HistoryLocation::Sqlite(path) if !path.exists() => Ok(None),
            _ => History::open(location).map(Some),
        }
    }

    /// Opens the history a study will be recorded in, before anything of the study is: a
    /// SQLite file that cannot be opened stops the study; a PostgreSQL database that cannot be
    /// reached does not (docs/methodology.md §15 "outbox"): the record waits in the outbox.
    pub(crate) fn open_for_study(location: &HistoryLocation) -> Result<History, HistoryError> {
        match History::open(location) {
            Err(HistoryError::Unreachable { detail, .. }) => {
                Ok(History { location: location.clone(), store: None, unreachable: Some(detail) })
            }
            other => other,
        }
    }

    /// Writes a finished study in one transaction (once: a study already there, same identity,
    /// is not written twice).
    pub(crate) fn record(&mut self, study: &StudyRecord) -> Result<RecordedStudy, HistoryError> {
        let t0 = Instant::now();
        let store = self.store()?;
        let (id, new) = store.record(study).map_err(|e| e.at(&self.location.to_string()))?;
        Ok(RecordedStudy::of(study, id, new, t0))
    }

    /// As [`History::record`] for a study that just finished: a PostgreSQL history that cannot
    /// be reached, or fails the write, gets the record into the outbox instead.
    pub(crate) fn record_study(&mut self, study: &StudyRecord) -> Result<Recording, HistoryError> {
        let error = match self.record(study) {
            Ok(r) => return Ok(Recording::Stored(r)),
            Err(e) => e,
        };
        let HistoryLocation::Postgres(target) = &self.location else { return Err(error) };
        let cause = match error {
            HistoryError::Unreachable { detail, .. } => detail,
            e => e.to_string().replace('\n', " "),
        };
        let pending = pending_path(target)?;
        // Later studies of this run (a sweep's points) go straight to the outbox.
        self.store = None;
        self.unreachable = Some(cause.clone());
        sqlite::SqliteStore::open(&pending)?.record(study)?;
        Ok(Recording::Pending { pending, cause })
    }

    /// Records llama-bench results, each once; how many were new.
    pub(crate) fn record_bench(
        &mut self,
        results: &[super::bench_results::BenchResult],
    ) -> Result<usize, HistoryError> {
        let location = self.location.to_string();
        let store = self.store()?;
        store.record_bench(results).map_err(|e| e.at(&location))
    }

    /// Every recorded llama-bench result, in the order imported.
    pub(crate) fn bench_results(&mut self) -> Result<Vec<super::bench_results::BenchResult>, HistoryError> {
        let location = self.location.to_string();
        let store = self.store()?;
        store.bench_results().map_err(|e| e.at(&location))
    }

    /// The open store, or why there is none (a PostgreSQL history that could not be reached).
    fn store(&mut self) -> Result<&mut Box<dyn Store>, HistoryError> {
        self.store.as_mut().ok_or_else(|| HistoryError::Unreachable {
            url: self.location.to_string(),
            detail: self.unreachable.clone().unwrap_or_default(),
        })
    }

    /// Every recorded study, oldest first.
    pub(crate) fn studies(&mut self) -> Result<Vec<StoredStudy>, HistoryError> {
        let location = self.location.to_string();
        let store = self.store()?;
        store.studies().map_err(|e| e.at(&location))
    }
}
