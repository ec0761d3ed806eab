//! abprof — is llama-server variant B faster than variant A, by how much, and which kernels are
//! responsible?
//!
//! Floors, top to bottom; each only uses the ones below it:
//! `cli` → `report` → `summary` → `pi`, `exactness`, `artifact` → `study` → `trace` → `measure` →
//! `telemetry` → `server` → `client` → `variant` → `schedule`, `clock`, `stats`, `atomic_file`, `child`.
//! (`pi` drives its own samples under the study's conditions: hooks, idle gate, telemetry.)
pub(crate) mod artifact;
pub(crate) mod atomic_file;
pub(crate) mod child;
pub mod cli;
pub mod client;
pub mod clock;
pub(crate) mod exactness;
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
