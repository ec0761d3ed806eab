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
    let (base, cand) = (base.as_slice(), cand.as_slice());
    let (hb, hc) = (bandwidth(base), bandwidth(cand));
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut buf = Vec::with_capacity(base.len().max(cand.len()));
    let mut ratios: Vec<f64> = Vec::with_capacity(resamples);
    for _ in 0..resamples {
        let mb = smoothed_resample_median(base, hb, &mut rng, &mut buf);
        let mc = smoothed_resample_median(cand, hc, &mut rng, &mut buf);
        ratios.push(100.0 * ((mc - mb).exp() - 1.0));
    }
    ratios.sort_by(|a, b| a.total_cmp(b));
    let tail = (1.0 - confidence) / 2.0;
    let at = |q: f64| ratios[((resamples as f64 - 1.0) * q).round() as usize];
    Some(ChangeCi { lo_pct: at(tail), hi_pct: at(1.0 - tail), confidence, resamples, seed })
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
