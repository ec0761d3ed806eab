//! The `[pi]` section of a study file: what every Pi sample runs (docs/methodology.md §11).
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// A Pi study: what every Pi sample runs (docs/methodology.md §11).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PiSection {
    pub(crate) pi_bin: PathBuf,
    /// The workload's name (`decode`, …) as recorded in the report.
    pub(crate) mode: String,
    pub(crate) prompt: String,
    /// Bound on one whole pi process.
    pub(crate) timeout_s: u64,
    /// Pi's maxTokens and contextWindow for the model.
    pub(crate) max_tokens: u32,
    pub(crate) context_window: u32,
    pub(crate) python: PathBuf,
    pub(crate) code_timeout_s: u64,
}
