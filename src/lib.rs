//! abprof — is llama-server variant B faster than variant A, by how much, and which kernels are
//! responsible?
//!
//! Floors, top to bottom; each only uses the ones below it (`FLOORS` in `tests/layers.rs` checks it):
//! `cli`, `fuzzing` (the fuzz harness's entry points) → `app` (each command from its typed
//! request to its exit status: a study's run, summary, report, history; bench, calibrate, build,
//! bisect, exactness) → `report` → `doctor` (is this host ready to measure) →
//! `history`, `bisect`, `timeline` → `summary` → `exactness` → `study` (THE study loop, and its A/B,
//! Pi and trace configurations) → `measure` (THE sample lifecycle) → `roofline` (decode bytes and
//! memory bandwidth) → `trace` (pure trace analysis), `telemetry`, `server`, `artifact`, `llama_bench`
//! (llama-bench's outputs read) → `client`,
//! `child`, `atomic_file`, `cache_dir`, `runtime_libraries` (what a process mapped) → `variant`, `schedule`, `clock`, `stats`, `schema`, `dylib`,
//! `bounds`, `stop_signal`, `refusal` (the one error kind that exits 2).
pub(crate) mod app;
pub(crate) mod artifact;
pub(crate) mod atomic_file;
pub(crate) mod bisect;
pub(crate) mod bounds;
pub(crate) mod cache_dir;
pub(crate) mod child;
pub mod cli;
pub mod client;
pub mod clock;
pub(crate) mod doctor;
pub(crate) mod dylib;
pub(crate) mod exactness;
#[doc(hidden)] // The fuzz harness's entry points (benches/fuzz.rs), not an API.
pub mod fuzzing;
pub(crate) mod history;
pub(crate) mod llama_bench;
pub(crate) mod measure;
pub(crate) mod refusal;
pub(crate) mod report;
pub(crate) mod roofline;
pub(crate) mod runtime_libraries;
pub(crate) mod schedule;
pub(crate) mod schema;
pub mod server;
pub mod stats;
pub(crate) mod stop_signal;
pub mod study;
pub(crate) mod summary;
pub mod telemetry;
pub(crate) mod timeline;
pub mod trace;
pub mod variant;
