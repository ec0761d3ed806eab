//! The real Pi coding agent end to end (docs/methodology.md §11), the final realism gate: a Pi
//! study is the study loop with the Pi agent as every sample's load (`measure::pi`), interleaved
//! like `abprof ab`, under the same hooks, idle gate and telemetry, resumable; its report is
//! `summary::pi`.
mod error;
mod prompt;
mod study;

pub use crate::measure::pi::{judge_answer, parse_transcript, CodeOutcome, CodeRun};
pub(crate) use error::PiError;
pub(crate) use prompt::PiMode;
pub(crate) use study::{pi_version, OnSample, PiStudy};
