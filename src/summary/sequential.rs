//! Anytime-valid intervals for a study that decides after every block (docs/methodology.md §17):
//! repeated confidence intervals over the study's known cap. An adaptive study looks at its
//! interval after its first blocks and after every block from then on, up to `max_samples`; a
//! 95% interval at each look would exclude the truth at *some* look far more often than 5%
//! (simulated: early stops covered 50–95%). Each look's t-interval is therefore taken at a
//! smaller two-sided level, from a boundary calibrated so that Gaussian paired log ratios cross
//! it at some look up to the cap in exactly the boundary's α of simulated paths.
//!
//! Two boundaries, chosen by simulation (§17 gives the candidates' figures): difference verdicts
//! take Haybittle and Peto's — every look before the cap at the strict level [`PETO_INTERIM`],
//! the cap's look at the level that spends the rest of α — so a study that runs to its cap pays
//! almost nothing for having looked (Pocock's constant level, used before, made the interval at
//! the cap 1.4× a plain one), while a clear change still stops at its first looks (O'Brien and
//! Fleming's boundary, the other candidate, held it back for blocks on Student's t with 2
//! degrees of freedom). The equivalence verdict ("the same within ±m") takes Pocock's constant
//! level at 2α, the repeated form of the two one-sided tests at α each, over the looks between the
//! first and the cap, so a study where nothing changed can stop early: its first look (a t with 2
//! degrees of freedom, whose interval is wider than any margin it could be asked) and its cap (the
//! look a study that could not stop runs to anyway) take [`PETO_INTERIM`], which leaves the looks
//! that can stop it a looser level.
use super::stats::MIN_VALUES;
use super::t_test::two_sided_quantile;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::StandardNormal;
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

/// Simulated null paths a boundary is calibrated on (its rate is then known to about ±0.15%).
const PATHS: usize = 20_000;
const SEED: u64 = 20;

/// The family-wise error of a study's difference verdicts; its equivalence verdicts spend 2α
/// two-sided, α on each side (docs/methodology.md §17).
pub(crate) const ALPHA: f64 = 0.05;

/// The level of every look before the cap in Haybittle and Peto's boundary: Peto's |z| > 3 is
/// 0.0027; a t-interval from 3 blocks at this level still calls a 15% change at 1% noise.
pub(crate) const PETO_INTERIM: f64 = 0.003;

/// How a boundary spends its α over the looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Shape {
    /// [`PETO_INTERIM`] before the cap, the rest at the cap.
    HaybittlePeto,
    /// One level at every look.
    Pocock,
    /// One level at every look between the first and the cap; [`PETO_INTERIM`] at those two.
    PocockInner,
}

/// The per-look levels of a study that looks after `first` blocks and every block up to `max`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Boundary {
    first: usize,
    max: usize,
    shape: Shape,
    /// The calibrated level: the cap's (Haybittle–Peto) or every look's (Pocock); the study's α
    /// itself when it looks once.
    level: f64,
}

impl Boundary {
    /// The boundary of difference verdicts: Haybittle and Peto's at [`ALPHA`].
    pub(crate) fn difference(first: usize, max: usize) -> Boundary {
        Boundary::calibrated(first, max, Shape::HaybittlePeto, ALPHA)
    }

    /// The boundary of the equivalence verdict: Pocock's between the first look and the cap (at
    /// every look where there is none between them), at 2 × [`ALPHA`] two-sided.
    pub(crate) fn equivalence(first: usize, max: usize) -> Boundary {
        let shape = if max >= first.max(MIN_VALUES) + 2 { Shape::PocockInner } else { Shape::Pocock };
        Boundary::calibrated(first, max, shape, 2.0 * ALPHA)
    }

    /// A boundary of `shape` whose looks hold the truth together with 1 − `alpha`.
    pub(crate) fn calibrated(first: usize, max: usize, shape: Shape, alpha: f64) -> Boundary {
        let first = first.max(MIN_VALUES);
        if max <= first {
            return Boundary { first, max, shape, level: alpha };
        }
        type Memo = Mutex<HashMap<(usize, usize, Shape, u64), f64>>;
        static MEMO: OnceLock<Memo> = OnceLock::new();
        let memo = MEMO.get_or_init(|| Mutex::new(HashMap::new()));
        let key = (first, max, shape, alpha.to_bits());
        let known = memo.lock().expect("memo").get(&key).copied();
        let level = known.unwrap_or_else(|| {
            let level = calibrate(first, max, shape, alpha);
            memo.lock().expect("memo").insert(key, level);
            level
        });
        Boundary { first, max, shape, level }
    }

    /// The two-sided level of the look after `n` blocks (looks past the cap take the cap's).
    pub(crate) fn alpha_at(&self, n: usize) -> f64 {
        if self.max <= self.first {
            return self.level;
        }
        look_level(self.shape, self.level, n.clamp(self.first, self.max), self.first, self.max)
    }
}

/// Look `n`'s level of a boundary over looks `first..=max` whose calibrated level is `level`.
fn look_level(shape: Shape, level: f64, n: usize, first: usize, max: usize) -> f64 {
    match shape {
        Shape::HaybittlePeto if n < max => PETO_INTERIM,
        Shape::PocockInner if n == first || n == max => PETO_INTERIM,
        _ => level,
    }
}

fn calibrate(first: usize, max: usize, shape: Shape, alpha: f64) -> f64 {
    let looks = max - first + 1;
    let mut rng = ChaCha8Rng::seed_from_u64(SEED);
    // |t| of the mean at every look of every null path.
    let mut t = vec![0.0; PATHS * looks];
    for path in t.chunks_mut(looks) {
        let (mut sum, mut squares) = (0.0, 0.0);
        for n in 1..=max {
            let z: f64 = rng.sample(StandardNormal);
            sum += z;
            squares += z * z;
            if n >= first {
                let nf = n as f64;
                let m = sum / nf;
                let var = (squares - nf * m * m) / (nf - 1.0);
                path[n - first] = m.abs() / (var / nf).sqrt();
            }
        }
    }
    let crossing = |level: f64| -> f64 {
        let q: Vec<f64> = (first..=max)
            .map(|n| two_sided_quantile(look_level(shape, level, n, first, max), n as f64 - 1.0))
            .collect();
        t.chunks(looks).filter(|path| path.iter().zip(&q).any(|(t, q)| t > q)).count() as f64 / PATHS as f64
    };
    // Bonferroni's α/looks crosses at most α, α itself at least α (the earlier looks cross too).
    let (mut lo, mut hi) = (alpha / looks as f64, alpha);
    for _ in 0..20 {
        let mid = (lo * hi).sqrt();
        if crossing(mid) > alpha {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    lo
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Haybittle–Peto's looks before the cap take [`PETO_INTERIM`] and the cap nearly α;
    /// Pocock's one level lies between Bonferroni's α/looks and α; the equivalence boundary's
    /// first look and cap take [`PETO_INTERIM`] and the looks between one level; a study that looks
    /// once takes α.
    #[test]
    fn each_shape_spends_alpha_as_it_should() {
        let hp = Boundary::difference(3, 10);
        assert_eq!(Boundary::difference(3, 3).alpha_at(3), ALPHA);
        assert_eq!(hp.alpha_at(3), PETO_INTERIM);
        assert_eq!(hp.alpha_at(9), PETO_INTERIM);
        let cap = hp.alpha_at(10);
        assert!(0.035 < cap && cap < ALPHA, "{cap}");
        assert_eq!(hp.alpha_at(12), cap, "past the cap, the cap's level");
        let pocock = Boundary::calibrated(3, 10, Shape::Pocock, ALPHA);
        assert_eq!(pocock.alpha_at(3), pocock.alpha_at(10));
        assert!(ALPHA / 8.0 < pocock.alpha_at(3) && pocock.alpha_at(3) < ALPHA, "{}", pocock.alpha_at(3));
        assert_eq!(Boundary::difference(2, 10), hp, "no look before 3 values a side");
        let equivalence = Boundary::equivalence(3, 10);
        assert_eq!(equivalence.alpha_at(3), PETO_INTERIM, "the first look is strict");
        assert_eq!(equivalence.alpha_at(10), PETO_INTERIM, "so is the cap");
        let eq = equivalence.alpha_at(5);
        assert_eq!(equivalence.alpha_at(4), eq);
        assert_eq!(equivalence.alpha_at(9), eq);
        assert!(pocock.alpha_at(3) < eq && eq < 2.0 * ALPHA, "looser than Pocock's at α over all looks: {eq}");
        let two_looks = Boundary::equivalence(3, 4);
        assert_eq!(two_looks.alpha_at(3), two_looks.alpha_at(4), "no look between: Pocock's over both");
        let cap20 = Boundary::difference(3, 20).alpha_at(20);
        eprintln!(
            "Haybittle–Peto 3..10: cap {cap:.4}; 3..20: cap {cap20:.4}; Pocock 3..10 {:.4}; equivalence (Pocock between the first look and the cap, 2α) {eq:.4}",
            pocock.alpha_at(3)
        );
    }
}
