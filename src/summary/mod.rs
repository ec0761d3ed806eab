//! Medians, confidence intervals and verdicts; the seeds' rejection rules.
pub mod rules;
pub mod stats;
