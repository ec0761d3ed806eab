//! Simulated studies judged by the production functions (docs/methodology.md §8): the real
//! interleaved order of `schedule.rs`, per-sample noise, steady and drifting hosts (the drift moves
//! between the two samples of a block, since they run minutes apart), slow outlier samples, and
//! rejected samples that leave the sides unbalanced. Each simulation test asserts the bounds the
//! method promises, seeded, so a change that breaks one fails the suite.
use super::stats::Measured;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::StandardNormal;

/// How the host's speed moves from one sample slot to the next, on the log scale.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Drift {
    Steady,
    /// This fraction faster (or slower: the sign is drawn per study) per sample slot.
    Linear(f64),
    /// A random walk with this standard deviation per sample slot.
    RandomWalk(f64),
}

/// The simulated host.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Host {
    /// Per-sample noise (sd of the log value, ≈ the CV).
    pub(crate) noise: f64,
    pub(crate) drift: Drift,
    /// Chance that a sample is an outlier: disturbed, 15–30% slow.
    pub(crate) outliers: f64,
    /// Reject one sample of the study at random (unbalanced sides).
    pub(crate) reject_one: bool,
}

impl Host {
    pub(crate) const fn iid(noise: f64) -> Host {
        Host { noise, drift: Drift::Steady, outliers: 0.0, reject_one: false }
    }
}

/// The hosts every bound is checked on: i.i.d. at 1% and 3% noise, linear and random-walk drift,
/// one outlier in 10, one rejected sample.
pub(crate) const HOSTS: [Host; 6] = [
    Host::iid(0.01),
    Host::iid(0.03),
    Host { drift: Drift::Linear(0.005), ..Host::iid(0.02) },
    Host { drift: Drift::RandomWalk(0.01), ..Host::iid(0.02) },
    Host { outliers: 0.1, ..Host::iid(0.02) },
    Host { reject_one: true, ..Host::iid(0.02) },
];

/// A study of `blocks` blocks of a baseline and one candidate `effect` times as fast, in the order
/// `schedule::interleaved` plans (A B | B A | …): the baseline's and the candidate's accepted values.
pub(crate) fn study(rng: &mut ChaCha8Rng, host: &Host, blocks: usize, effect: f64) -> [Vec<Measured>; 2] {
    let sign = if rng.random_bool(0.5) { 1.0 } else { -1.0 };
    let mut level = 0.0;
    let mut sides: [Vec<Measured>; 2] = [Vec::new(), Vec::new()];
    for slot in crate::schedule::interleaved(2, blocks, None) {
        level += match host.drift {
            Drift::Steady => 0.0,
            Drift::Linear(step) => sign * step,
            Drift::RandomWalk(sd) => sd * rng.sample::<f64, _>(StandardNormal),
        };
        let z: f64 = rng.sample(StandardNormal);
        let mut log = level + host.noise * z;
        if host.outliers > 0.0 && rng.random_bool(host.outliers) {
            log += (1.0 - rng.random_range(0.15..0.30f64)).ln();
        }
        let ratio = if slot.variant == 1 { effect } else { 1.0 };
        sides[slot.variant].push(Measured { block: slot.repeat, value: 100.0 * ratio * log.exp() });
    }
    if host.reject_one {
        let side = usize::from(rng.random_bool(0.5));
        let at = rng.random_range(0..sides[side].len());
        sides[side].remove(at);
    }
    sides
}

/// A seeded generator per cell, so cells do not share draws.
pub(crate) fn rng(cell: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(0xab_0f ^ cell.wrapping_mul(0x9e37_79b9_7f4a_7c15))
}

/// The paired t-interval of the blocks' log ratios, in %: the reference the interval's width is
/// measured against (the textbook interval, computed here on its own, not the production code).
pub(crate) fn paired_t_reference(base: &[Measured], cand: &[Measured], confidence: f64) -> Option<(f64, f64)> {
    let d: Vec<f64> = base
        .iter()
        .filter_map(|x| cand.iter().find(|y| y.block == x.block).map(|y| (y.value / x.value).ln()))
        .collect();
    if d.len() < 2 {
        return None;
    }
    let n = d.len() as f64;
    let m = d.iter().sum::<f64>() / n;
    let s = (d.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
    let h = super::t_test::two_sided_quantile(1.0 - confidence, n - 1.0) * s / n.sqrt();
    Some((100.0 * ((m - h).exp() - 1.0), 100.0 * ((m + h).exp() - 1.0)))
}

/// Figures of one cell of fixed-size studies.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Cell {
    pub(crate) studies: usize,
    /// Intervals that excluded 0 (a verdict).
    pub(crate) verdicts: usize,
    /// Intervals that held the true change.
    pub(crate) covered: usize,
    /// Studies with no interval (too few samples).
    pub(crate) none: usize,
    /// Mean of half-width ÷ the paired t reference's, where both exist.
    pub(crate) width_ratio: f64,
}

impl Cell {
    pub(crate) fn rate(&self, k: usize) -> f64 {
        k as f64 / self.studies as f64
    }
}

/// `studies` studies of one cell, each judged by `ci` (the production interval).
pub(crate) fn cell(
    seed: u64,
    host: &Host,
    blocks: usize,
    effect: f64,
    studies: usize,
    ci: impl Fn(&[Measured], &[Measured], u64) -> Option<super::stats::ChangeCi>,
) -> Cell {
    let mut rng = rng(seed);
    let truth = 100.0 * (effect - 1.0);
    let (mut c, mut ratios, mut widths) = (Cell { studies, ..Cell::default() }, 0.0, 0usize);
    for t in 0..studies {
        let [base, cand] = study(&mut rng, host, blocks, effect);
        let Some(ci) = ci(&base, &cand, t as u64) else {
            c.none += 1;
            continue;
        };
        c.verdicts += usize::from(!ci.contains_zero());
        c.covered += usize::from(ci.lo_pct <= truth && truth <= ci.hi_pct);
        if let Some((lo, hi)) = paired_t_reference(&base, &cand, ci.confidence) {
            ratios += ci.half_width_pct() / ((hi - lo) / 2.0);
            widths += 1;
        }
    }
    c.width_ratio = if widths > 0 { ratios / widths as f64 } else { f64::NAN };
    c
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::summary::stats::{change_ci, DEFAULT_SEED};

    /// The figures of the interval before the t model (issue 20): printed, not asserted.
    #[test]
    #[ignore = "a measurement of the smoothed bootstrap, slow at the test profile's opt-level"]
    fn measure_the_bootstrap() {
        for host in &HOSTS {
            for blocks in [2, 3, 4, 5, 6, 8, 10, 20] {
                let c = cell(blocks as u64, host, blocks, 1.0, 2000, |b, c, t| {
                    change_ci(b, c, 2000, DEFAULT_SEED ^ t, 0.95)
                });
                eprintln!(
                    "{host:?} n={blocks}: A/A verdicts {:.4}, coverage {:.4}, width/paired-t {:.3}, none {}",
                    c.rate(c.verdicts),
                    c.rate(c.covered),
                    c.width_ratio,
                    c.none
                );
            }
        }
    }
}
