//! The MTP yardstick's aggregate block per variant (docs/methodology.md §4.1): the PR script's
//! fields — aggregate acceptance, total drafted, wall time — as medians over the accepted samples,
//! the acceptance with its 95% interval, beside the study's verdicts.
use crate::measure::Sample;
use crate::stats::median;
use serde::{Deserialize, Serialize};

/// One variant's block: every accepted sample's aggregate, and their medians.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct MtpYardstickFigures {
    /// Requests each accepted sample answered (nine when whole).
    pub(crate) requests: Vec<usize>,
    /// Per sample: accepted / drafted over its nine responses' `timings`; a sample that drafted
    /// nothing has none.
    pub(crate) acceptance: Vec<f64>,
    pub(crate) acceptance_median: Option<f64>,
    /// The 95% t-interval of the mean aggregate acceptance (3 or more samples that drafted).
    pub(crate) acceptance_ci: Option<[f64; 2]>,
    /// Per sample: Σ `timings.draft_n`, Σ `draft_n_accepted`.
    pub(crate) drafted: Vec<u64>,
    pub(crate) accepted: Vec<u64>,
    pub(crate) drafted_median: Option<f64>,
    /// Per sample: the nine requests' wall time, ms.
    pub(crate) wall_ms: Vec<f64>,
    pub(crate) wall_ms_median: Option<f64>,
    /// Per sample: Σ predicted tokens / Σ predicted ms of the nine, tok/s.
    pub(crate) decode_tps: Vec<f64>,
    pub(crate) decode_tps_median: Option<f64>,
}

/// The block of `samples` (a variant's accepted ones); `None` when none ran the yardstick.
pub(crate) fn figures(samples: &[&Sample]) -> Option<MtpYardstickFigures> {
    let runs: Vec<_> = samples.iter().filter_map(|s| s.extra.mtp_yardstick.as_ref()).map(|y| &y.totals).collect();
    if runs.is_empty() {
        return None;
    }
    let acceptance: Vec<f64> = runs.iter().filter_map(|t| t.acceptance).collect();
    let drafted: Vec<u64> = runs.iter().map(|t| t.drafted).collect();
    let wall_ms: Vec<f64> = runs.iter().filter_map(|t| t.wall_ms).collect();
    let decode_tps: Vec<f64> = runs.iter().filter_map(|t| t.decode_tps).collect();
    Some(MtpYardstickFigures {
        requests: runs.iter().map(|t| t.requests).collect(),
        acceptance_median: median(&acceptance),
        acceptance_ci: acceptance_interval(&acceptance),
        acceptance,
        drafted_median: median(&drafted.iter().map(|&d| d as f64).collect::<Vec<_>>()),
        drafted,
        accepted: runs.iter().map(|t| t.accepted).collect(),
        wall_ms_median: median(&wall_ms),
        wall_ms,
        decode_tps_median: median(&decode_tps),
        decode_tps,
    })
}
/// The 95% t-interval of the mean of `rates` (3 or more), clipped to [0, 1].
pub(crate) fn acceptance_interval(rates: &[f64]) -> Option<[f64; 2]> {
    if rates.len() < 3 {
        return None;
    }
    let (lo, hi) = super::t_test::one_sample(rates).interval(0.05);
    Some([lo.clamp(0.0, 1.0), hi.clamp(0.0, 1.0)])
}
