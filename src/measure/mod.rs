//! ONE sample: start the server cold → health → idle gate → the load → stop → parse → a typed
//! record. Every artefact lands in the sample's evidence folder as soon as it exists, so a failure
//! at any step loses nothing that was already measured.
pub mod calibrate;
mod chat;
mod files;
mod launcher;
mod load;
mod observer;
pub mod pi;
mod record;
mod run;
#[cfg(test)]
mod run_tests;

pub use chat::ChatLoad;
pub use files::SampleFiles;
pub use load::{Load, LoadRun};
pub use observer::{NoObserver, SampleObserver, SamplePhase};
pub use record::{ExpectOutcome, PiRun, Sample, SampleExtra, ServerTiming, StreamMetrics, TracerRun};
pub use run::{run_sample, save_record, SampleError, SampleSpec};
