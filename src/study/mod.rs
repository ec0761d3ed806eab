//! The A/B driver: a study file, the interleaved order, isolation hooks on every exit path, and
//! an evidence folder written after every sample.
pub mod schedule;
