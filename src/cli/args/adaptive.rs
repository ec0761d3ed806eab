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
    /// (faster or slower, within the margin or not) or holds 0 with its equivalence interval inside
    /// ±--mei (the same): intervals valid however early the study stops (docs/methodology.md §17).
    ///
    /// At the defaults (--samples 3, --max-samples 20, --mei 2) and 1.6% block noise, 4,000
    /// simulated studies a cell:
    ///
    ///   true change          0      +1%    +1.5%    +2%     +3%
    ///   by its sign          —     43.5%   81.7%   97.3%  100.0%
    ///   same (±2%)         97.4%   53.9%   17.3%    2.7%    0.1%
    ///   wrong sign          2.4%    0.1%    0.1%    0.0%    0.0%
    ///   mean blocks         8.48   11.99   11.55    9.58    6.71
    ///
    /// (At 3% block noise half the A/A studies reach the cap undecided: docs/methodology.md §17.)
    #[arg(long, verbatim_doc_comment)]
    pub(crate) until_decided: bool,
    /// The minimum effect of interest, %: "same within the margin" where the interval holds 0 and
    /// the equivalence interval lies inside ±PCT; a change the interval decides inside it is
    /// "faster/slower, within the margin". With --until-decided: 2 when not given.
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
    /// Stop adding interleaved blocks at N samples per variant (ab with --until-ci or
    /// --until-decided: default 20;
    /// bisect, for a step still undecided: default 60, or --samples if more; a probe still
    /// undecided there is skipped, docs/methodology.md §19).
    #[arg(long, value_name = "N", value_parser = crate::bounds::u32_flag(2, crate::bounds::MAX_SAMPLES))]
    pub(crate) max_samples: Option<u32>,
}
