//! Each variant's decode step time against its bandwidth floor (docs/methodology.md §18), from
//! the study's `roofline.json` and the variant's accepted samples.
use crate::measure::Sample;
use crate::roofline::bandwidth::{Bandwidth, Target};
use crate::roofline::bytes::{KvShape, WeightBytes};
use crate::roofline::{floor_ms, StepBytes, VariantInputs};
use crate::stats::median;
use serde::{Deserialize, Serialize};

/// One variant's floor and where it stands against it, with every input the arithmetic used.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct DecodeFloor {
    /// The memory decode streams from.
    pub(crate) target: Target,
    /// Tokens of context a decode step attends to, over the decode: prompt + N/2 (median over
    /// the accepted samples).
    pub(crate) context_tokens: Option<f64>,
    pub(crate) weights: Option<WeightBytes>,
    pub(crate) kv: Option<KvShape>,
    /// Bytes of one decode step at `context_tokens`, by class.
    pub(crate) bytes: Option<StepBytes>,
    pub(crate) bandwidth: Option<Bandwidth>,
    /// `bytes.total ÷ bandwidth.gb_per_s`, in ms.
    pub(crate) floor_ms: Option<f64>,
    /// One decode step: 1000 ÷ the median (N−1) decode TPS (the eval interval holds N−1 steps).
    pub(crate) ms_per_step: Option<f64>,
    /// `100 × ms_per_step ÷ floor_ms`: 100% is decode at the bandwidth limit.
    pub(crate) pct_of_floor: Option<f64>,
    /// `bytes.total ÷ ms_per_step`: the bandwidth decode used, in GB/s.
    pub(crate) achieved_gb_per_s: Option<f64>,
    /// What the arithmetic does not model for this variant.
    pub(crate) caveats: Vec<String>,
    /// Why a figure above is missing, one line each.
    pub(crate) missing: Vec<String>,
}

/// The floor of a variant from its recorded inputs and its accepted samples.
pub(crate) fn decode_floor(inputs: &VariantInputs, samples: &[&Sample], n_minus_1_tps: Option<f64>) -> DecodeFloor {
    let mut missing = inputs.problems.clone();
    let contexts: Vec<f64> =
        samples.iter().filter_map(|s| Some(s.prompt_tokens()? as f64 + s.completion_tokens()? as f64 / 2.0)).collect();
    let context_tokens = median(&contexts);
    let ms_per_step = n_minus_1_tps.filter(|t| t.is_finite() && *t > 0.0).map(|t| 1000.0 / t);
    if samples.is_empty() {
        missing.push("no accepted sample".into());
    } else if ms_per_step.is_none() {
        missing.push("no accepted sample with two or more output tokens: no step time".into());
    }
    let bytes = match (&inputs.weights, &inputs.kv, context_tokens) {
        (Some(w), Some(kv), Some(c)) => Some(StepBytes::at(w, kv, c)),
        (Some(_), Some(_), None) if !samples.is_empty() => {
            missing.push("no accepted sample with token counts: no context length".into());
            None
        }
        _ => None,
    };
    let floor = bytes.as_ref().zip(inputs.bandwidth.as_ref()).map(|(b, bw)| floor_ms(b.total, bw.gb_per_s));
    let mut caveats = inputs.weights.as_ref().map_or_else(Vec::new, |w| w.caveats.clone());
    if samples.iter().any(|s| s.draft.is_some()) {
        caveats.push(
            "speculative decoding: a step verifies several drafted tokens and the draft model reads bytes too; the floor is of one target step".into(),
        );
    }
    DecodeFloor {
        target: inputs.target.clone(),
        context_tokens,
        weights: inputs.weights.clone(),
        kv: inputs.kv.clone(),
        pct_of_floor: ms_per_step.zip(floor).map(|(m, f)| 100.0 * m / f),
        achieved_gb_per_s: ms_per_step.zip(bytes.as_ref()).map(|(m, b)| b.total / (m / 1e3) / 1e9),
        bytes,
        bandwidth: inputs.bandwidth.clone(),
        floor_ms: floor,
        ms_per_step,
        caveats,
        missing,
    }
}
