//! The results history: every finished study (`ab`, `trace`, `pi`, `bench`, `exactness`) in one
//! SQLite database, written in one transaction from the summary layer's typed result, and the
//! queries over it: listings and regressions between comparable studies (docs/methodology.md
//! §15).
mod comparable;
mod import;
mod migrate;
mod query;
mod record;
mod regressions;
mod schema;
mod write;

pub(crate) use import::{import_folder, records_in, Imported};
pub(crate) use query::{list, Filters, HistoryList, HistoryRow};
pub(crate) use record::{RecordKind, RecordedStudy, StudyRecord};
pub(crate) use regressions::{regressions, Move, Regressions, SeriesFloor};

use rusqlite::Connection;
use std::path::{Path, PathBuf};
use thiserror::Error;

#[derive(Debug, Error)]
pub(crate) enum HistoryError {
    #[error("cannot open the history {path}: {detail}: pass another --history FILE, or --no-history")]
    Open { path: PathBuf, detail: String },
    #[error("is not an abprof history database ({0}): pass another --history FILE")]
    NotHistory(String),
    #[error("was written by a newer abprof (schema version {version}; this abprof knows up to {latest}): update abprof, or pass another --history FILE")]
    Newer { version: u32, latest: u32 },
    #[error("history database error: {0}")]
    Sql(String),
    #[error("{path} {inner}")]
    At { path: PathBuf, inner: Box<HistoryError> },
}

impl HistoryError {
    /// The error with the database it concerns in front.
    fn at(self, path: &Path) -> HistoryError {
        match self {
            e @ (HistoryError::Open { .. } | HistoryError::At { .. }) => e,
            e => HistoryError::At { path: path.into(), inner: Box::new(e) },
        }
    }
}

impl From<rusqlite::Error> for HistoryError {
    fn from(e: rusqlite::Error) -> Self {
        HistoryError::Sql(e.to_string())
    }
}

/// The history database a run writes to or a query reads.
pub(crate) struct History {
    pub(crate) path: PathBuf,
    conn: Connection,
}

impl History {
    /// Opens the history at `path`, creating and migrating it as needed.
    pub(crate) fn open(path: &Path) -> Result<History, HistoryError> {
        Ok(History { path: path.into(), conn: migrate::open(path)? })
    }

    /// Opens the history at `path` if it exists.
    pub(crate) fn open_existing(path: &Path) -> Result<Option<History>, HistoryError> {
        Ok(migrate::open_existing(path)?.map(|conn| History { path: path.into(), conn }))
    }

    /// Writes a finished study in one transaction; a study already in the history (same
    /// identity) is not written twice.
    pub(crate) fn record(&mut self, study: &StudyRecord) -> Result<RecordedStudy, HistoryError> {
        write::record(&mut self.conn, study).map_err(|e| e.at(&self.path))
    }

    pub(crate) fn conn(&self) -> &Connection {
        &self.conn
    }
}

/// Where the history lives unless `--history` says otherwise: `$XDG_DATA_HOME/abprof/history.db`,
/// else `~/.local/share/abprof/history.db`.
pub(crate) fn default_path() -> Option<PathBuf> {
    let data = std::env::var_os("XDG_DATA_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| {
            std::env::var_os("HOME").filter(|h| !h.is_empty()).map(|h| PathBuf::from(h).join(".local/share"))
        })?;
    Some(data.join("abprof").join("history.db"))
}
