//! `--metric` and `--threshold`: which metric a judgement reads and how far its confidence
//! interval must lie from no change.
use crate::summary::Metric;
use clap::Args;

/// Judgement: the metric and the threshold its 95% interval must lie beyond (ab's --fail-on
/// gate; bisect's good/bad call).
#[derive(Args, Debug, Clone)]
pub(crate) struct JudgementArgs {
    /// The metric judged.
    #[arg(long, value_enum, default_value = "decode")]
    pub(crate) metric: Metric,
    /// % change the interval must lie beyond (ab --fail-on: default 0; bisect: default half the
    /// change measured between good and bad).
    #[arg(long, value_name = "PCT", value_parser = threshold_pct)]
    pub(crate) threshold: Option<f64>,
}

fn threshold_pct(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(x) if x.is_finite() && x >= 0.0 => Ok(x),
        _ => Err(format!("{s:?} is not a percentage >= 0")),
    }
}
