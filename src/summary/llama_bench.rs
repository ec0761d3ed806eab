//! What a llama-bench study's variant ran, as llama-bench printed it (docs/methodology.md §4.4):
//! the model's type, the build and its backends, from its first accepted sample. The tests'
//! figures are metrics like any other ([`super::Metric::LlamaBenchTps`]).
use crate::measure::Sample;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct LlamaBenchBuild {
    /// llama-bench's `model_type` (`qwen3moe 30B.A3B Q4_K - Medium`): compare-llama-bench.py's
    /// "Model" column.
    pub(crate) model_type: String,
    pub(crate) build_commit: String,
    pub(crate) backends: String,
}

/// The build and model of a variant's first accepted llama-bench sample; None for a server study.
pub(crate) fn build(samples: &[&Sample]) -> Option<LlamaBenchBuild> {
    let row = samples.iter().find_map(|s| s.extra.llama_bench.as_ref()?.results.first())?;
    Some(LlamaBenchBuild {
        model_type: row.row.model_type.clone(),
        build_commit: row.row.build_commit.clone(),
        backends: row.row.backends.clone(),
    })
}
