//! Good, bad or not yet known (docs/methodology.md §19): a probed commit is bad only when the 95%
//! interval of its change against the good build lies wholly beyond the threshold, on the side of
//! the change measured between good and bad; good only when it lies wholly on the other side.
//! Anything in between takes more samples.
use crate::summary::stats::{paired_log_ratios, probe_change_ci, ChangeCi, Measured, PooledSpread, Verdict};
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

/// The call of a step that reached the sample cap undecided (docs/methodology.md §19): the side
/// of the threshold its interval's centre lies on. The threshold sits midway between good and
/// bad, so at the cap the centre is several standard errors from it and the call is rarely
/// wrong (simulated: `a_bisect_of_a_6_percent_step_names_the_first_bad_commit`), while stopping
/// there would end nearly every bisect of a small step on a noisy host. Without an interval
/// there is nothing to call.
pub(crate) fn call_at_cap(r: &Reading, threshold: f64) -> Call {
    match (call(r, threshold), r.ci) {
        (Call::Undecided, Some(ci)) => {
            let c = ci.center_pct();
            if !c.is_finite() {
                Call::Undecided
            } else if (threshold < 0.0 && c < threshold) || (threshold >= 0.0 && c > threshold) {
                Call::Bad
            } else {
                Call::Good
            }
        }
        (c, _) => c,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reading(ci: Option<(f64, f64)>) -> Reading {
        Reading {
            metric: Metric::ServerDecodeTps,
            change_pct: ci.map(|(a, b)| (a + b) / 2.0),
            ci: ci.map(|(lo_pct, hi_pct)| ChangeCi {
                lo_pct,
                hi_pct,
                confidence: 0.95,
                resamples: 1,
                seed: 1,
                ..ChangeCi::default()
            }),
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
    fn at_the_cap_the_centre_of_the_interval_calls_the_step() {
        let t = threshold_pct(-6.0, None);
        assert_eq!(call_at_cap(&reading(Some((-4.5, -1.0))), t), Call::Good);
        assert_eq!(call_at_cap(&reading(Some((-5.5, -1.0))), t), Call::Bad);
        assert_eq!(call_at_cap(&reading(Some((-9.0, -6.0))), t), Call::Bad);
        assert_eq!(call_at_cap(&reading(None), t), Call::Undecided);
        let t = threshold_pct(8.0, None);
        assert_eq!(call_at_cap(&reading(Some((3.0, 6.0))), t), Call::Bad);
        assert_eq!(call_at_cap(&reading(Some((1.0, 6.0))), t), Call::Good);
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
