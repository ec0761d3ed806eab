//! abprof — is llama-server variant B faster than variant A, by how much, and which kernels are
//! responsible?
//!
//! Floors, top to bottom; each only uses the ones below it (`tests/layers.rs` checks for cycles):
//! `cli` → `report` → `bisect` (drives builds, studies and their summaries) → `summary` → `pi`,
//! `exactness`, `artifact` → `study` (THE study loop) →
//! `measure` (THE sample lifecycle), `trace` (pure trace analysis) → `telemetry` → `server` →
//! `client` → `variant` → `schedule`, `clock`, `stats`, `atomic_file`, `child`.
pub(crate) mod artifact;
pub(crate) mod atomic_file;
pub(crate) mod bisect;
pub(crate) mod child;
pub mod cli;
pub mod client;
pub mod clock;
pub(crate) mod exactness;
#[doc(hidden)] // The fuzz harness's entry points (benches/fuzz.rs), not an API.
pub mod fuzzing;
pub(crate) mod measure;
pub mod pi;
pub(crate) mod report;
pub(crate) mod schedule;
pub mod server;
pub mod stats;
pub mod study;
pub(crate) mod summary;
pub mod telemetry;
pub mod trace;
pub mod variant;
