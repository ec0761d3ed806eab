//! The A/B driver: a study file, the interleaved order, isolation hooks on every exit path, and
//! an evidence folder written after every sample.
pub mod evidence;
pub mod facts;
pub mod file;
pub mod isolation;
pub mod observer;
mod run;

pub use run::{run_study, Outcome, StudyRun};
