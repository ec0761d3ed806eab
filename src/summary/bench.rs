//! One `abprof bench` sample judged by the rulebook, with what it ran on (`bench.json` beside
//! its `sample.json`), so the results history can record it and import it later.
use super::rules::{sample_rejections, Expectations, Rejection};
use crate::measure::Sample;
use crate::study::evidence::read_json;
use crate::study::facts::{HostFacts, VariantFacts};
use serde::{Deserialize, Serialize};
use std::path::Path;

pub(crate) const BENCH_FACTS_FILE: &str = "bench.json";

/// What a bench sample ran on and is judged against.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct BenchFacts {
    pub(crate) variant: VariantFacts,
    pub(crate) host: HostFacts,
    /// The server arguments after `-m MODEL`.
    pub(crate) common_args: Vec<String>,
    pub(crate) expected_prompt_tokens: Option<u64>,
    pub(crate) ignore_eos: bool,
}

/// A bench sample with its verdict.
#[derive(Debug, Clone)]
pub(crate) struct BenchRun {
    pub(crate) facts: BenchFacts,
    pub(crate) sample: Sample,
    pub(crate) rejections: Vec<Rejection>,
}

/// Judges `sample` as a locked-length sample of one request.
pub(crate) fn judge_bench(facts: BenchFacts, sample: Sample) -> BenchRun {
    let exp = Expectations {
        prompt_tokens: facts.expected_prompt_tokens,
        locked_length: true,
        timing_blocks: 1,
        ..Expectations::default()
    };
    let rejections = sample_rejections(&sample, &exp);
    BenchRun { facts, sample, rejections }
}

/// The bench sample in `dir` (its `sample.json` and `bench.json`).
pub(crate) fn load_bench(dir: &Path) -> anyhow::Result<BenchRun> {
    let facts: BenchFacts = read_json(&dir.join(BENCH_FACTS_FILE))?;
    let sample: Sample = read_json(&crate::measure::SampleFiles::new(dir).record())?;
    Ok(judge_bench(facts, sample))
}
