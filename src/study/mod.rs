//! THE study driver: a study file, the interleaved order, isolation hooks on every exit path, the
//! idle gate and telemetry around every sample, an evidence folder written after every sample,
//! and resume. `ab`, `pi` and `trace` are configurations of it.
mod ab;
mod binary_watch;
mod chat;
pub(crate) mod documents;
mod drive;
pub mod evidence;
pub(crate) mod facts;
pub mod file;
pub(crate) mod isolation;
mod judge;
mod layout;
mod llama_bench;
pub(crate) mod observer;
mod open;
pub mod pi;
mod port;
mod preflight;
mod progress;
mod quiet_host;
pub(crate) mod roofline;
pub(crate) mod run_folders;
mod run_record;
pub(crate) mod sample_folder;
pub(crate) mod seal;
pub(crate) mod sweep;
pub(crate) mod trace_capture;
pub(crate) mod trace_folder;

pub use ab::run_ab;
pub(crate) use drive::{run_study_with, Outcome, StudyRun};
pub use evidence::NextBlock;
pub use judge::{Judge, StudyJudge};
pub(crate) use open::{load_study_file, open, OpenError, Shape, StudyFacts, StudyFolder};
pub(crate) use preflight::check_study;
pub(crate) use sweep::run_sweep;
