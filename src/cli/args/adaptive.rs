//! `--until-ci PCT [--max-samples N]`: adaptive sample counts (docs/methodology.md §17); bisect
//! takes `--max-samples` alone (§19).
use clap::Args;

fn positive_pct(s: &str) -> Result<f64, String> {
    let max = crate::bounds::MAX_MARGIN_PCT;
    match s.parse::<f64>() {
        Ok(x) if x.is_finite() && x > 0.0 && x <= max => Ok(x),
        Ok(x) if x.is_finite() && x > max => {
            Err(format!("{s} is above {max}%, abprof's bound (docs/methodology.md §20): a margin that wide calls any slowdown the same; give e.g. 2"))
        }
        _ => Err(format!("{s:?} is not a positive percentage (the interval's half width wanted, e.g. 2)")),
    }
}

/// Adaptive: keep adding interleaved blocks until every candidate's decode interval is narrow.
#[derive(Args, Debug, Clone)]
pub(crate) struct AdaptiveArgs {
    /// Add interleaved blocks (one sample of every variant each) after --samples until every
    /// candidate's 95% interval of decode TPS change is narrower than ±PCT (precision, never
    /// significance, decides).
    #[arg(long, value_name = "PCT", value_parser = positive_pct)]
    pub(crate) until_ci: Option<f64>,
    /// Add interleaved blocks after --samples until every candidate's decode interval excludes 0
    /// (a verdict) or lies inside ±--mei (the same): intervals valid however early the study stops
    /// (docs/methodology.md §17).
    #[arg(long)]
    pub(crate) until_decided: bool,
    /// The minimum effect of interest, %: an interval inside ±PCT is the verdict "same within the
    /// margin", and with --until-decided the study stops there.
    #[arg(long, value_name = "PCT", value_parser = positive_pct)]
    pub(crate) mei: Option<f64>,
    #[command(flatten)]
    pub(crate) limit: MaxSamplesArg,
    /// Blocks the study may add at the end of its schedule to retake blocks that a rule about
    /// the host spoiled (other-workload, abprof-cpu, power-state-changed, isolation-restored):
    /// default 5 plus half the planned blocks (--samples, or --max-samples when adaptive), 0 for
    /// none (docs/methodology.md §7.19).
    #[arg(long, value_name = "N", value_parser = crate::bounds::u32_flag(0, crate::bounds::MAX_SAMPLES))]
    pub(crate) retakes: Option<u32>,
}

/// How far a study may grow by interleaved blocks: ab's --until-ci and bisect's undecided steps
/// share the one flag.
#[derive(Args, Debug, Clone)]
pub(crate) struct MaxSamplesArg {
    /// Stop adding interleaved blocks at N samples per variant (ab with --until-ci: default 20;
    /// bisect, for a step still undecided: default 60, or --samples if more; a probe still
    /// undecided there is skipped, docs/methodology.md §19).
    #[arg(long, value_name = "N", value_parser = crate::bounds::u32_flag(2, crate::bounds::MAX_SAMPLES))]
    pub(crate) max_samples: Option<u32>,
}
