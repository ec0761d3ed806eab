//! Why a study file cannot run.
use std::path::PathBuf;
use thiserror::Error;

#[derive(Debug, Error)]
pub(crate) enum StudyFileError {
    #[error("cannot read study file {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("study file {path} is not valid: {message}")]
    Parse { path: PathBuf, message: String },
    #[error("study needs {0}")]
    Missing(&'static str),
    #[error("study file contradicts itself: {0}")]
    Contradiction(String),
    #[error("hook {0:?} cannot be split like a shell would (unbalanced quotes?) or is empty")]
    BadHook(String),
    #[error("study file: {0}")]
    OutOfBounds(String),
    /// An input the study cannot run with, found before anything is created (a variant's
    /// server arguments, the prompt file).
    #[error("{0}")]
    Refused(String),
}
