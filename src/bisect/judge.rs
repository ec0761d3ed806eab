//! Good, bad or not yet known (docs/methodology.md §19). A probed commit is called by Wald's
//! sequential probability ratio test between "as good as good" (no change) and "as bad as bad"
//! (twice the threshold, so that the threshold lies midway), on its within-block log ratios with
//! the pooled spread of the steps before it ([`sequential_call`]); a probe that reaches the sample
//! cap undecided is called only when the 95% interval of its change lies wholly on one side of the
//! threshold ([`call`]), else it is inconclusive. The reference step (good against bad) is read
//! by its interval.
use crate::summary::stats::{
    disagree, paired_log_ratios, probe_change_ci, probe_spread_is_own, student_correction, ChangeCi, Measured,
    PooledSpread, Verdict, PROBE_FIRST_BLOCKS,
};
use crate::summary::{Metric, Summary};
use serde::{Deserialize, Serialize};

/// One metric of the candidate (the second variant) against the good build.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub(crate) struct Reading {
    pub(crate) metric: Metric,
    /// Median change vs good, %.
    pub(crate) change_pct: Option<f64>,
    pub(crate) ci: Option<ChangeCi>,
    pub(crate) verdict: Option<Verdict>,
    /// Accepted samples: good, candidate.
    pub(crate) accepted: [usize; 2],
}

impl Reading {
    pub(crate) fn of(s: &Summary, metric: Metric) -> Reading {
        let cand = s.variants.get(1).and_then(|v| v.metric(metric));
        Reading {
            metric,
            change_pct: cand.and_then(|m| m.change_pct),
            ci: cand.and_then(|m| m.ci),
            verdict: cand.and_then(|m| m.verdict),
            accepted: [s.variants.first().map_or(0, |v| v.accepted), s.variants.get(1).map_or(0, |v| v.accepted)],
        }
    }

    /// A probe's reading: its interval is the t-interval of its own within-block log ratios with
    /// their spread pooled with `pool`, the earlier steps' (docs/methodology.md §19), so that a
    /// clear probe is called from its first block; None until the pool holds enough.
    pub(crate) fn of_probe(s: &Summary, metric: Metric, pool: PooledSpread) -> Reading {
        let [base, cand] = [0, 1].map(|i| side(s, metric, i));
        let ci = probe_change_ci(&base, &cand, pool);
        // The verdict word of the interval the probe is called by, not the summary's own (which
        // says "too few samples" below three blocks).
        let verdict = Some(Verdict::from_ci(ci.as_ref(), metric.higher_is_better()));
        Reading { ci, verdict, ..Reading::of(s, metric) }
    }

    /// The change between good and bad when its interval excludes zero: the bisect's reference.
    pub(crate) fn reference_change(&self) -> Option<f64> {
        let ci = self.ci?;
        (!ci.contains_zero()).then_some(self.change_pct?).filter(|c| c.is_finite() && *c != 0.0)
    }
}

/// The candidate's within-block log ratios against good (the second variant against the first)
/// in `s`, paired by block as the summary's interval pairs them.
pub(crate) fn log_ratios(s: &Summary, metric: Metric) -> Vec<f64> {
    paired_log_ratios(&side(s, metric, 0), &side(s, metric, 1))
}

/// Variant `i`'s accepted values of `metric` in `s`, each with its block.
fn side(s: &Summary, metric: Metric, i: usize) -> Vec<Measured> {
    s.variants.get(i).and_then(|v| v.metric(metric)).map_or_else(Vec::new, |m| {
        m.runs.iter().zip(&m.blocks).map(|(&value, &block)| Measured { block, value }).collect()
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Call {
    Good,
    Bad,
    /// The interval reaches the threshold (or there is none yet): more samples.
    Undecided,
}

/// The signed threshold: `given` (a magnitude, %) or half the reference change, on the side of
/// the reference change.
pub(crate) fn threshold_pct(reference_change: f64, given: Option<f64>) -> f64 {
    match given {
        Some(t) => t.abs().copysign(reference_change),
        None => reference_change / 2.0,
    }
}

/// Whether the reference step (bad against good) is clear enough to bisect: with no threshold
/// given, its interval excludes 0 (the threshold is then half its change, midway between good
/// and bad); with one given, its interval lies wholly beyond that threshold.
pub(crate) fn reference_clear(r: &Reading, given: Option<f64>) -> bool {
    match (r.reference_change(), given) {
        (Some(_), None) => true,
        (Some(c), Some(_)) => call(r, threshold_pct(c, given)) == Call::Bad,
        (None, _) => false,
    }
}

/// Whether the reference step may stop taking samples: clear, and with no threshold given, its
/// interval's half-width within a quarter of its change. A reference that stopped the moment it
/// excluded 0 would overstate the change (it stops when the noise happens to enlarge it), and
/// the threshold, half of it, would sit too close to the bad side; the bad probes would then be
/// called wrongly at the cap (docs/methodology.md §19; simulated in bisect/simulate.rs).
pub(crate) fn reference_settled(r: &Reading, given: Option<f64>) -> bool {
    let precise =
        given.is_some() || r.ci.zip(r.reference_change()).is_some_and(|(ci, c)| ci.half_width_pct() <= c.abs() / 4.0);
    reference_clear(r, given) && precise
}

/// Good, bad or undecided for `r` against the signed `threshold`.
pub(crate) fn call(r: &Reading, threshold: f64) -> Call {
    let Some(ci) = r.ci else { return Call::Undecided };
    // Mirror a speed-up onto the side of a slow-down, so one rule covers both directions.
    let (lo, hi, t) =
        if threshold < 0.0 { (ci.lo_pct, ci.hi_pct, threshold) } else { (-ci.hi_pct, -ci.lo_pct, -threshold) };
    if hi < t {
        Call::Bad
    } else if lo > t {
        Call::Good
    } else {
        Call::Undecided
    }
}

/// The error rates of a probe's sequential call: a commit exactly as good as good called bad, or
/// one exactly as bad as bad called good, each at most this often (Wald's bounds, A = ln((1 −
/// β) / α)).
pub(crate) const PROBE_ERROR: f64 = 0.001;

/// A probe's call by Wald's sequential probability ratio test (docs/methodology.md §19): the
/// within-block log ratios `log_ratios` against the good build, each N(μ, σ²), with μ = 0 ("good")
/// against μ = 2·ln(1 + threshold) ("bad": the threshold midway between them on the log scale).
/// σ² is the pooled spread of the earlier steps with the probe's own, or the probe's own where
/// that is larger (from [`MIN_VALUES`] blocks), so that a build noisier than the pool is judged by
/// its own spread; at two blocks a pair that disagrees with the pool ([`disagree`]) waits for a
/// third. σ² is read from few blocks, so it is widened by [`student_correction`] for its degrees
/// of freedom: Wald's bounds hold for a known σ², and a probe's own spread from three blocks is
/// far from known. Undecided below [`PROBE_FIRST_BLOCKS`] blocks.
pub(crate) fn sequential_call(log_ratios: &[f64], pool: PooledSpread, threshold: f64) -> Call {
    let n = log_ratios.len();
    if n < PROBE_FIRST_BLOCKS || disagree(log_ratios, pool) || !threshold.is_finite() || threshold == 0.0 {
        return Call::Undecided;
    }
    let bad = 2.0 * (1.0 + threshold / 100.0).ln();
    let mean = log_ratios.iter().sum::<f64>() / n as f64;
    let spread = if probe_spread_is_own(log_ratios, pool) { PooledSpread::default() } else { pool }.with(log_ratios);
    if spread.df <= 0.0 {
        return Call::Undecided;
    }
    let var = spread.ss / spread.df * student_correction(spread.df);
    if var.is_nan() || var <= 0.0 {
        return Call::Undecided;
    }
    let llr = n as f64 * bad * (mean - bad / 2.0) / var;
    let a = ((1.0 - PROBE_ERROR) / PROBE_ERROR).ln();
    if llr >= a {
        Call::Bad
    } else if llr <= -a {
        Call::Good
    } else {
        Call::Undecided
    }
}

/// What called a probe (docs/methodology.md §19), reported beside the call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum CalledBy {
    /// Wald's test on the pooled spread, as the probe grew.
    #[default]
    Sequential,
    /// Its interval at the sample cap's look, Wald's test still undecided there.
    IntervalAtCap,
}

/// A probe's call, and what made it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ProbeCall {
    pub(crate) call: Call,
    pub(crate) by: CalledBy,
}

/// A probe's call (docs/methodology.md §19): [`sequential_call`] while it grows; at the sample cap
/// (`at_cap`), still undecided, the side of the threshold its interval lies wholly on ([`call`]),
/// else undecided: inconclusive, and skipped as a commit that does not build.
pub(crate) fn probe_call(
    r: &Reading,
    log_ratios: &[f64],
    pool: PooledSpread,
    threshold: f64,
    at_cap: bool,
) -> ProbeCall {
    match sequential_call(log_ratios, pool, threshold) {
        Call::Undecided if at_cap => ProbeCall { call: call(r, threshold), by: CalledBy::IntervalAtCap },
        call => ProbeCall { call, by: CalledBy::Sequential },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reading(ci: Option<(f64, f64)>) -> Reading {
        Reading {
            metric: Metric::ServerDecodeTps,
            change_pct: ci.map(|(a, b)| (a + b) / 2.0),
            ci: ci.map(|(lo_pct, hi_pct)| ChangeCi::bounds(lo_pct, hi_pct, 0.95)),
            verdict: None,
            accepted: [3, 3],
        }
    }

    #[test]
    fn bad_only_when_the_whole_interval_is_past_the_threshold() {
        // A slow-down of 30% between good and bad: threshold -15%.
        let t = threshold_pct(-30.0, None);
        assert_eq!(t, -15.0);
        assert_eq!(call(&reading(Some((-34.0, -26.0))), t), Call::Bad);
        assert_eq!(call(&reading(Some((-3.0, 2.0))), t), Call::Good);
        assert_eq!(call(&reading(Some((-18.0, -9.0))), t), Call::Undecided);
        assert_eq!(call(&reading(None), t), Call::Undecided);
        // A speed-up bisected the same way; a given threshold takes the reference's side.
        let t = threshold_pct(40.0, Some(10.0));
        assert_eq!(t, 10.0);
        assert_eq!(call(&reading(Some((30.0, 50.0))), t), Call::Bad);
        assert_eq!(call(&reading(Some((-2.0, 4.0))), t), Call::Good);
        assert_eq!(call(&reading(Some((5.0, 20.0))), t), Call::Undecided);
        assert_eq!(threshold_pct(-40.0, Some(10.0)), -10.0);
    }

    #[test]
    fn a_probe_whose_interval_reaches_the_threshold_is_not_called_even_at_the_cap() {
        // The interval's centre lies on one side, the interval reaches the other (§19: such a
        // probe is inconclusive and skipped, never called by its centre).
        let t = threshold_pct(-6.0, None);
        assert_eq!(call(&reading(Some((-4.5, -1.0))), t), Call::Undecided);
        assert_eq!(call(&reading(Some((-5.5, -1.0))), t), Call::Undecided);
        assert_eq!(call(&reading(Some((-9.0, -6.0))), t), Call::Bad);
        assert_eq!(call(&reading(Some((-2.9, 1.0))), t), Call::Good);
    }

    #[test]
    fn the_sequential_call_weighs_the_mean_against_the_midway_threshold() {
        // A pool of 20 degrees of freedom at 3% per block.
        let pool = PooledSpread { ss: 20.0 * 0.03f64.powi(2), df: 20.0 };
        let t = -3.0;
        let at = |pct: f64| (1.0 + pct / 100.0f64).ln();
        assert_eq!(sequential_call(&[at(-6.0)], pool, t), Call::Undecided, "one block never calls");
        // A −6% probe and a 0% one: not yet from three blocks (|LLR| 6.3 and 6.1 after the pool's
        // 1.12 of Student's correction, below ln 999 = 6.9), called from four.
        assert_eq!(sequential_call(&[at(-6.5), at(-5.5), at(-6.2)], pool, t), Call::Undecided);
        assert_eq!(sequential_call(&[at(-6.5), at(-5.5), at(-6.2), at(-6.0)], pool, t), Call::Bad);
        assert_eq!(sequential_call(&[at(0.5), at(-0.5), at(0.2)], pool, t), Call::Undecided);
        assert_eq!(sequential_call(&[at(0.5), at(-0.5), at(0.2), at(0.0)], pool, t), Call::Good);
        assert_eq!(sequential_call(&[at(-3.2), at(-2.8), at(-3.0)], pool, t), Call::Undecided, "at the threshold");
        // A probe whose own spread is far wider than the pool's is judged by its own.
        let wild = [at(-12.0), at(2.0), at(-8.0)];
        assert_eq!(sequential_call(&wild, pool, t), Call::Undecided);
        // A spread read from the probe's own three blocks is widened by Student's correction:
        // against a threshold of −15%, these three blocks 10% apart are bad by the plug-in
        // spread (LLR 9.5 ≥ ln 999) but not by the corrected one (2.0), nor by their t-interval.
        let t15 = -15.0;
        let noisy = [at(-20.0), at(-40.0), at(-30.0)];
        assert_eq!(sequential_call(&noisy, pool, t15), Call::Undecided);
        assert_eq!(sequential_call(&[at(-28.0), at(-32.0), at(-30.0)], pool, t15), Call::Bad);
        // Undecided at the cap: the interval decides only when it lies wholly on one side.
        let r = reading(Some((-9.0, -6.0)));
        let bad_at_cap = ProbeCall { call: Call::Bad, by: CalledBy::IntervalAtCap };
        assert_eq!(probe_call(&r, &[at(-3.2), at(-2.8), at(-3.0)], pool, t, true), bad_at_cap);
        let r = reading(Some((-4.0, -1.0)));
        let undecided = ProbeCall { call: Call::Undecided, by: CalledBy::IntervalAtCap };
        assert_eq!(probe_call(&r, &[at(-3.2), at(-2.8), at(-3.0)], pool, t, true), undecided);
        let growing = ProbeCall { call: Call::Undecided, by: CalledBy::Sequential };
        assert_eq!(probe_call(&r, &[at(-3.2), at(-2.8), at(-3.0)], pool, t, false), growing);
        // Called by Wald's test, the cap's look is not the interval's call.
        let sure = probe_call(&r, &[at(-6.5), at(-5.5), at(-6.2), at(-6.0)], pool, t, true);
        assert_eq!(sure, ProbeCall { call: Call::Bad, by: CalledBy::Sequential });
    }

    #[test]
    fn a_reference_needs_an_interval_that_excludes_zero() {
        assert_eq!(reading(Some((-34.0, -26.0))).reference_change(), Some(-30.0));
        assert_eq!(reading(Some((-4.0, 2.0))).reference_change(), None);
        assert_eq!(reading(None).reference_change(), None);
        // No threshold given: a reference that excludes 0 is clear, its threshold half-way.
        assert!(reference_clear(&reading(Some((-9.0, -1.0))), None));
        assert!(!reference_clear(&reading(Some((-9.0, -1.0))), Some(5.0)));
        assert!(reference_clear(&reading(Some((-9.0, -6.0))), Some(5.0)));
        assert!(!reference_clear(&reading(Some((-4.0, 2.0))), None));
    }
}
