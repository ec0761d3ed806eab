//! The statistics of a comparison: medians, and a bootstrap confidence interval of the ratio of
//! medians with a verdict word.
//!
//! Studies take 3 cold samples a side (docs/methodology.md §8). A plain (percentile) bootstrap of a
//! median from 3 values can only ever return one of those 3 values, so its interval is [min/max,
//! max/min] and it calls a difference whenever the two sides do not overlap — which happens 1 time
//! in 10 between two identical variants. abprof therefore resamples with Gaussian-kernel smoothing
//! (bandwidth sd·(3/n)^¼, Hall, DiCiccio & Romano 1989): magnitudes count, not only order. It works
//! on log values, because the quantity is a ratio: a resampled median can never go negative and a
//! halving and a doubling are equally far from "no change". Simulated A/A false-positive rate at
//! n = 3: ~3% (plain bootstrap ~9%); see `aa_false_positive_rate_is_near_nominal`.
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::StandardNormal;
use serde::{Deserialize, Serialize};

pub(crate) const DEFAULT_RESAMPLES: usize = 10_000;
pub(crate) const DEFAULT_SEED: u64 = 42;

pub(crate) use crate::stats::{mean, median, stdev};

/// `100 * (candidate / baseline - 1)`, the relative change of docs/methodology.md §8.
pub(crate) fn pct_change(base: f64, cand: f64) -> f64 {
    100.0 * (cand / base - 1.0)
}

/// Median of `xs` with every value moved by `h`·N(0,1) noise, drawn into `buf`.
fn smoothed_resample_median(xs: &[f64], h: f64, rng: &mut ChaCha8Rng, buf: &mut Vec<f64>) -> f64 {
    buf.clear();
    for _ in 0..xs.len() {
        let x = xs[rng.random_range(0..xs.len())];
        let z: f64 = rng.sample(StandardNormal);
        buf.push(x + h * z);
    }
    buf.sort_by(|a, b| a.total_cmp(b));
    let n = buf.len();
    if n % 2 == 1 {
        buf[n / 2]
    } else {
        (buf[n / 2 - 1] + buf[n / 2]) / 2.0
    }
}

fn bandwidth(xs: &[f64]) -> f64 {
    stdev(xs).unwrap_or(0.0) * (3.0 / xs.len() as f64).powf(0.25)
}

/// A confidence interval of the median % change, candidate vs baseline.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub(crate) struct ChangeCi {
    pub(crate) lo_pct: f64,
    pub(crate) hi_pct: f64,
    pub(crate) confidence: f64,
    pub(crate) resamples: usize,
    pub(crate) seed: u64,
}

impl ChangeCi {
    pub(crate) fn contains_zero(&self) -> bool {
        self.lo_pct <= 0.0 && self.hi_pct >= 0.0
    }
}

/// The `confidence` interval of `100*(median(cand)/median(base) - 1)` by the smoothed bootstrap.
/// Needs at least 2 positive values a side (one value has no spread to resample).
pub(crate) fn bootstrap_change_ci(
    base: &[f64],
    cand: &[f64],
    resamples: usize,
    seed: u64,
    confidence: f64,
) -> Option<ChangeCi> {
    if base.len() < 2
        || cand.len() < 2
        || resamples == 0
        || base.iter().chain(cand).any(|x| !x.is_finite() || *x <= 0.0)
    {
        return None;
    }
    let (base, cand): (Vec<f64>, Vec<f64>) =
        (base.iter().map(|x| x.ln()).collect(), cand.iter().map(|x| x.ln()).collect());
    let (lo_pct, hi_pct) =
        smoothed_bootstrap(&[&base, &cand], resamples, seed, confidence, |m| 100.0 * ((m[1] - m[0]).exp() - 1.0));
    Some(ChangeCi { lo_pct, hi_pct, confidence, resamples, seed })
}

/// The `confidence` interval of `stat(resampled medians)` over `resamples` smoothed resamples of
/// every side, drawn side by side in order: the one bootstrap behind every interval here. A side
/// of one value has no spread and resamples to itself.
fn smoothed_bootstrap(
    sides: &[&[f64]],
    resamples: usize,
    seed: u64,
    confidence: f64,
    stat: impl Fn(&[f64]) -> f64,
) -> (f64, f64) {
    let bandwidths: Vec<f64> = sides.iter().map(|s| bandwidth(s)).collect();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut buf = Vec::with_capacity(sides.iter().map(|s| s.len()).max().unwrap_or(0));
    let mut medians = vec![0.0; sides.len()];
    let mut stats: Vec<f64> = Vec::with_capacity(resamples);
    for _ in 0..resamples {
        for ((m, side), h) in medians.iter_mut().zip(sides).zip(&bandwidths) {
            *m = smoothed_resample_median(side, *h, &mut rng, &mut buf);
        }
        stats.push(stat(&medians));
    }
    stats.sort_by(|a, b| a.total_cmp(b));
    let tail = (1.0 - confidence) / 2.0;
    let at = |q: f64| stats[((resamples as f64 - 1.0) * q).round() as usize];
    (at(tail), at(1.0 - tail))
}

/// A confidence interval of a difference, candidate − baseline, in the values' own unit: a
/// kernel category's ms/token across traced samples (docs/methodology.md §10.1).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub(crate) struct DeltaCi {
    pub(crate) lo: f64,
    pub(crate) hi: f64,
    pub(crate) confidence: f64,
    pub(crate) resamples: usize,
    pub(crate) seed: u64,
}

impl DeltaCi {
    pub(crate) fn contains_zero(&self) -> bool {
        self.lo <= 0.0 && self.hi >= 0.0
    }

    /// For a cost (ms/token): an interval wholly above 0 is slower, wholly below faster.
    pub(crate) fn verdict_for_cost(ci: Option<&DeltaCi>) -> Verdict {
        match ci {
            None => Verdict::TooFewSamples,
            Some(c) if c.contains_zero() => Verdict::NoClearDifference,
            Some(c) if c.lo > 0.0 => Verdict::Slower,
            Some(_) => Verdict::Faster,
        }
    }
}

/// One side of a scaled difference: a share measured in each traced sample and the scale it is
/// multiplied by, measured in each untraced sample (or given once).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Scaled<'a> {
    pub(crate) shares: &'a [f64],
    pub(crate) scale: &'a [f64],
}

/// The `confidence` interval of `median(cand.shares)·median(cand.scale) −
/// median(base.shares)·median(base.scale)` by the same smoothed bootstrap as
/// [`bootstrap_change_ci`], on the values themselves (a share may be 0: a kernel category one
/// variant never runs), both the shares' and the scales' spread resampled. Needs at least 2
/// shares and 1 scale a side, all finite.
pub(crate) fn bootstrap_scaled_delta_ci(
    base: Scaled<'_>,
    cand: Scaled<'_>,
    resamples: usize,
    seed: u64,
    confidence: f64,
) -> Option<DeltaCi> {
    let sides = [base.shares, base.scale, cand.shares, cand.scale];
    if base.shares.len() < 2
        || cand.shares.len() < 2
        || base.scale.is_empty()
        || cand.scale.is_empty()
        || resamples == 0
        || sides.iter().any(|s| s.iter().any(|x| !x.is_finite()))
    {
        return None;
    }
    let (lo, hi) = smoothed_bootstrap(&sides, resamples, seed, confidence, |m| m[2] * m[3] - m[0] * m[1]);
    Some(DeltaCi { lo, hi, confidence, resamples, seed })
}

/// The verdict word beside a median change.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Verdict {
    Faster,
    Slower,
    NoClearDifference,
    /// Fewer than 2 accepted samples on a side.
    TooFewSamples,
}

impl Verdict {
    pub(crate) fn word(self) -> &'static str {
        match self {
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
            Verdict::NoClearDifference => "no clear difference",
            Verdict::TooFewSamples => "too few samples",
        }
    }

    /// `higher_is_better`: TPS metrics; false for latencies such as TTFT.
    pub(crate) fn from_ci(ci: Option<&ChangeCi>, higher_is_better: bool) -> Verdict {
        match ci {
            None => Verdict::TooFewSamples,
            Some(c) if c.contains_zero() => Verdict::NoClearDifference,
            Some(c) => {
                if (c.lo_pct > 0.0) == higher_is_better {
                    Verdict::Faster
                } else {
                    Verdict::Slower
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians_and_change() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&[]), None);
        // A measured FlashHead A/B (3 interleaved cold samples a side): 64.14 → 71.09 is +10.84%.
        assert!((pct_change(64.14, 71.09) - 10.835).abs() < 0.01);
    }

    #[test]
    fn the_interval_is_seeded_and_brackets_the_point_estimate() {
        let a = [64.83, 61.75, 64.14];
        let b = [70.00, 71.20, 71.09];
        let ci = bootstrap_change_ci(&a, &b, DEFAULT_RESAMPLES, 7, 0.95).unwrap();
        assert_eq!(ci, bootstrap_change_ci(&a, &b, DEFAULT_RESAMPLES, 7, 0.95).unwrap());
        assert!(ci.lo_pct < 10.84 && 10.84 < ci.hi_pct);
        assert!(ci.lo_pct > 0.0, "the seed's FlashHead result is a clear win: {ci:?}");
        assert_eq!(Verdict::from_ci(Some(&ci), true), Verdict::Faster);
        assert_eq!(Verdict::from_ci(Some(&ci), false), Verdict::Slower);
        assert_eq!(Verdict::from_ci(None, true), Verdict::TooFewSamples);
        assert!(bootstrap_change_ci(&[1.0], &b, 100, 1, 0.95).is_none());
    }

    #[test]
    fn a_scaled_delta_interval_is_in_the_values_unit_and_allows_zero() {
        let scale = [10.0];
        let s = |shares| Scaled { shares, scale: &scale };
        // A category one variant never runs: a share of 0 in every traced sample.
        let (none, some) = ([0.0, 0.0, 0.0], [0.041, 0.044, 0.040]);
        let ci = bootstrap_scaled_delta_ci(s(&none), s(&some), DEFAULT_RESAMPLES, DEFAULT_SEED, 0.95).unwrap();
        assert_eq!(ci, bootstrap_scaled_delta_ci(s(&none), s(&some), DEFAULT_RESAMPLES, DEFAULT_SEED, 0.95).unwrap());
        assert!(ci.lo > 0.3 && ci.hi < 0.5 && ci.lo < 0.41 && 0.41 < ci.hi, "{ci:?}");
        assert_eq!(DeltaCi::verdict_for_cost(Some(&ci)), Verdict::Slower);
        let back = bootstrap_scaled_delta_ci(s(&some), s(&none), DEFAULT_RESAMPLES, DEFAULT_SEED, 0.95).unwrap();
        assert_eq!(DeltaCi::verdict_for_cost(Some(&back)), Verdict::Faster);
        let same = bootstrap_scaled_delta_ci(s(&some), s(&some), DEFAULT_RESAMPLES, DEFAULT_SEED, 0.95).unwrap();
        assert_eq!(DeltaCi::verdict_for_cost(Some(&same)), Verdict::NoClearDifference);
        assert!(bootstrap_scaled_delta_ci(s(&[1.0]), s(&some), 100, 1, 0.95).is_none());
        assert_eq!(DeltaCi::verdict_for_cost(None), Verdict::TooFewSamples);
        // The same shares scaled by measurements that overlap: the scales' spread is in the interval.
        let (slow, fast) = ([10.0, 10.6, 9.5], [10.2, 9.7, 10.9]);
        let ci = bootstrap_scaled_delta_ci(
            Scaled { shares: &some, scale: &slow },
            Scaled { shares: &some, scale: &fast },
            DEFAULT_RESAMPLES,
            DEFAULT_SEED,
            0.95,
        )
        .unwrap();
        assert!(ci.lo < 0.0 && ci.hi > 0.0, "{ci:?}");
    }

    /// The property the smoothing buys: between identical variants, 3 samples a side, the 95%
    /// interval excludes 0 about as rarely as it should, while a 30% effect is still found.
    #[test]
    fn aa_false_positive_rate_is_near_nominal() {
        let mut rng = ChaCha8Rng::seed_from_u64(99);
        let mut draw = |mu: f64, n: usize| -> Vec<f64> {
            (0..n).map(|_| mu + 5.0 * rng.sample::<f64, _>(StandardNormal)).collect()
        };
        let (trials, mut false_pos, mut found) = (200, 0, 0);
        for t in 0..trials {
            let (a, b) = (draw(100.0, 3), draw(100.0, 3));
            if !bootstrap_change_ci(&a, &b, 1000, t, 0.95).unwrap().contains_zero() {
                false_pos += 1;
            }
            let (a, b) = (draw(100.0, 3), draw(130.0, 3));
            if bootstrap_change_ci(&a, &b, 1000, t, 0.95).unwrap().lo_pct > 0.0 {
                found += 1;
            }
        }
        let fp = false_pos as f64 / trials as f64;
        assert!(fp < 0.06, "A/A false-positive rate {fp}");
        assert!(found as f64 / trials as f64 > 0.95, "power at +30%: {found}/{trials}");
    }
}
