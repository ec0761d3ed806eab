//! ONE sample: start the server cold → health → (idle gate) → one request → stop → parse. Every
//! artefact lands in the sample's evidence folder as soon as it exists, so a failure at any step
//! loses nothing that was already measured.
pub mod calibrate;
mod record;
mod run;

pub use record::{Sample, ServerTiming, StreamMetrics};
pub use run::{run_sample, save_record, NoObserver, SampleError, SampleFiles, SampleObserver, SamplePhase, SampleSpec};
