//! What can go wrong with a history, on any backend: each error one line naming the cause and
//! the fix.
use std::path::PathBuf;
use thiserror::Error;

#[derive(Debug, Error)]
pub(crate) enum HistoryError {
    #[error("cannot open the history {path}: {detail}: pass another --history FILE, or --no-history")]
    Open { path: PathBuf, detail: String },
    #[error("cannot reach the history {url}: {detail}: check that the server is up and the URL right (its sslmode and sslrootcert too), and give the password in PGPASSWORD or ~/.pgpass")]
    Unreachable { url: String, detail: String },
    #[error("is not an abprof history database ({0}): pass another --history FILE")]
    NotHistory(String),
    #[error("was written by a newer abprof (schema version {version}; this abprof knows up to {latest}): update abprof, or pass another --history FILE")]
    Newer { version: u32, latest: u32 },
    #[error("history database error: {0}")]
    Sql(String),
    #[error("{path} {inner}")]
    At { path: String, inner: Box<HistoryError> },
}

impl HistoryError {
    /// The error with the database it concerns in front.
    pub(crate) fn at(self, location: &str) -> HistoryError {
        match self {
            e @ (HistoryError::Open { .. } | HistoryError::At { .. } | HistoryError::Unreachable { .. }) => e,
            e => HistoryError::At { path: location.into(), inner: Box::new(e) },
        }
    }
}

impl From<rusqlite::Error> for HistoryError {
    fn from(e: rusqlite::Error) -> Self {
        HistoryError::Sql(e.to_string())
    }
}
