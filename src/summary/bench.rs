//! One `abprof bench` sample judged by the rulebook, with what it ran on (`bench.json` beside
//! its `sample.json`), so the results history can record it and import it later.
use super::rules::{sample_rejections, Expectations, Rejection};
use super::{Metric, MetricInput};
use crate::measure::Sample;
use crate::study::facts::{HostFacts, VariantFacts};
use crate::study::run_folders::BenchFolder;
use crate::telemetry::sampler::TelemetrySample;
use serde::{Deserialize, Serialize};

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

/// The one type a bench's `bench.json` holds.
impl crate::study::documents::BenchFactsDoc for BenchFacts {}

/// A bench sample with its verdict.
#[derive(Debug, Clone)]
pub(crate) struct BenchRun {
    pub(crate) facts: BenchFacts,
    pub(crate) sample: Sample,
    pub(crate) rejections: Vec<Rejection>,
    /// Its metrics' values, from its record and telemetry series.
    pub(crate) values: Vec<(Metric, f64)>,
}

/// Judges `sample` (its telemetry `series` beside it) as a locked-length sample of one request.
pub(crate) fn judge_bench(facts: BenchFacts, sample: Sample, series: &[TelemetrySample]) -> BenchRun {
    let exp = Expectations {
        prompt_tokens: facts.expected_prompt_tokens,
        locked_length: true,
        timing_blocks: 1,
        ..Expectations::default()
    };
    let rejections = sample_rejections(&sample, &exp);
    let values = Metric::values(MetricInput { sample: &sample, series });
    BenchRun { facts, sample, rejections, values }
}

/// The bench sample in `folder` (its sample and what it ran on), typed here: the folder's
/// reader is generic, as this type lives a floor above it.
pub(crate) fn load_bench(folder: &BenchFolder) -> anyhow::Result<BenchRun> {
    let facts: BenchFacts = folder.read_facts()?;
    let sample = folder.read_sample()?;
    let series = folder.sample_folder().series(&sample);
    Ok(judge_bench(facts, sample, &series))
}
