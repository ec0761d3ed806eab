//! ONE sample: start the server cold → health → idle gate → the load → stop → parse → a typed
//! record. Every artefact lands in the sample's evidence folder as soon as it exists, so a failure
//! at any step loses nothing that was already measured.
mod attach;
pub(crate) mod backend_sampling;
pub(crate) mod bench_load;
pub(crate) mod bench_run;
pub(crate) mod calibrate;
mod chat;
mod files;
mod launcher;
mod load;
pub(crate) mod mtp_yardstick;
mod observer;
pub(crate) mod pi;
mod pi_load;
mod record;
mod run;
#[cfg(test)]
mod run_tests;
pub(crate) mod sequence;
pub(crate) mod soak;
pub(crate) mod spec_metrics;
pub(crate) mod speed_bench;

pub(crate) use attach::{AttachSpec, AttachedLoad, ATTACH_ENV};
pub(crate) use bench_load::BenchLoad;
pub(crate) use chat::{ChatLoad, SequenceKind};
pub(crate) use files::SampleFiles;
pub(crate) use load::Load;
pub(crate) use observer::{GateError, GateFailure, NoObserver, SampleObserver, SamplePhase};
pub(crate) use pi_load::{PiLoad, PiSettings};
#[cfg(test)]
pub(crate) use record::ExpectOutcome;
pub(crate) use record::StreamMetrics;
pub(crate) use record::{BinaryChange, FileStamp, PiRun, Sample, SampleExtra, ServerTiming};
pub(crate) use run::{run_sample, save_record, SampleError, SampleSpec, DEFAULT_STOP_TIMEOUT_S};
