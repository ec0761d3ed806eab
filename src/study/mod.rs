//! THE study driver: a study file, the interleaved order, isolation hooks on every exit path, the
//! idle gate and telemetry around every sample, an evidence folder written after every sample,
//! and resume. `ab`, `pi` and `trace` are configurations of it.
mod chat;
mod drive;
pub mod evidence;
pub mod facts;
pub mod file;
pub mod isolation;
pub mod observer;
pub mod trace_capture;

pub use chat::ChatStudy;
pub use drive::{check_study, run_study as run_study_with, sample_files, Outcome, StudyConfig, StudyContext, StudyRun};

/// Runs (or resumes) an A/B study: every sample one streamed chat request.
pub fn run_study(file: &file::StudyFile, root: &std::path::Path, resume: bool) -> anyhow::Result<StudyRun> {
    run_study_with(file, root, resume, &mut ChatStudy::default())
}
