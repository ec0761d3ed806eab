//! Anytime-valid intervals for a study that decides after every block (docs/methodology.md §17):
//! repeated confidence intervals over the study's known cap. An adaptive study looks at its
//! interval after its first blocks and after every block from then on, up to `max_samples`; a
//! 95% interval at each look would exclude the truth at *some* look far more often than 5%
//! (simulated: early stops covered 50–95%). Each look's t-interval is therefore taken at a
//! smaller two-sided level, from a boundary calibrated so that Gaussian paired log ratios cross
//! it at some look up to the cap in exactly the boundary's α of simulated paths.
//!
//! Two boundaries, chosen by simulation (§17 gives the candidates' figures): difference verdicts
//! take a Haybittle–Peto boundary — the looks on 2 and 3 degrees of freedom (3 and 4 blocks) at
//! the strict level [`PETO_INTERIM`], the later looks before the cap at one looser level that
//! spends [`INTERIM_SHARE`] of α, the cap's look at the level that spends the rest — so a study
//! that runs to its cap pays less for having looked than under Pocock's constant level (used
//! before: the interval at the cap 1.4× a plain one; here about 1.1×), a clear change still stops
//! at its first looks (O'Brien and Fleming's boundary, the other candidate, held it back for
//! blocks on Student's t with 2 degrees of freedom), and a change of a few times the noise stops
//! before the cap. The equivalence verdict ("the same within ±m") takes Pocock's constant level at
//! 2α, the repeated form of the two one-sided tests at α each, over the looks between the look on 2
//! degrees of freedom and the cap, so a study where nothing changed can stop early: the look on 2
//! degrees of freedom (whose interval is wider than any margin it could be asked) and the cap (the
//! look a study that could not stop runs to anyway) take [`PETO_INTERIM`], which leaves the looks
//! that can stop it a looser level.
use super::stats::MIN_VALUES;
use super::t_test::two_sided_quantile;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::StandardNormal;
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

/// Simulated null paths a boundary at [`ALPHA`] is calibrated on (its rate is then known to
/// about ±0.15%); a boundary at a smaller α (a sweep's point) takes proportionally more, so that
/// its rate is known to the same share of itself.
const PATHS: usize = 20_000;
const SEED: u64 = 20;

/// The family-wise error of a study's difference verdicts; its equivalence verdicts spend 2α
/// two-sided, α on each side (docs/methodology.md §17).
pub(crate) const ALPHA: f64 = 0.05;

/// The strict level of a boundary's first looks (and of the equivalence boundary's cap): Peto's
/// |z| > 3 is 0.0027; a t-interval from 3 blocks at this level still calls a 15% change at 1%
/// noise.
pub(crate) const PETO_INTERIM: f64 = 0.003;

/// The share of α the looks before the cap spend in the difference boundary
/// ([`Shape::HaybittlePeto`]); the cap spends the rest. Chosen by simulation (docs/methodology.md
/// §17): the largest share whose smallest change called in 80% of 10-block studies stays within
/// 1.06× a fixed 10-block paired t's (0.6 reached 1.09×, at the bound of 1.1×).
pub(crate) const INTERIM_SHARE: f64 = 0.55;

/// The looks that take [`PETO_INTERIM`] in the difference boundary, from the first a study can
/// take (3 blocks): their t-intervals rest on 2 and 3 degrees of freedom, so only a change far
/// beyond the noise crosses there.
const STRICT_LOOKS: usize = 2;

/// How a boundary spends its α over the looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Shape {
    /// [`PETO_INTERIM`] at the first [`STRICT_LOOKS`] looks; one looser level from the next look
    /// to the one before the cap, such that the looks before the cap cross in [`INTERIM_SHARE`] of
    /// α; the rest at the cap.
    HaybittlePeto,
    /// One level at every look.
    Pocock,
    /// One level at every look before the cap but one on 2 degrees of freedom (3 blocks);
    /// [`PETO_INTERIM`] at those two.
    PocockInner,
}

/// The per-look levels of a study that looks after `first` blocks and every block up to `max`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Boundary {
    first: usize,
    max: usize,
    shape: Shape,
    /// The calibrated levels.
    levels: Levels,
}

/// A boundary's calibrated levels.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Levels {
    /// The strict looks' level: [`PETO_INTERIM`] at the study's α, scaled with a smaller α (a
    /// sweep's point, at α over its family's comparisons), so that its strict looks do not spend
    /// more than its whole α.
    strict: f64,
    /// The cap's (Haybittle–Peto), every look's (Pocock) or the inner looks' (Pocock inner); the
    /// study's α itself when it looks once.
    level: f64,
    /// Haybittle–Peto's looser level from the third look to the one before the cap.
    interim: f64,
}

impl Boundary {
    /// The boundary of difference verdicts: Haybittle and Peto's at [`ALPHA`].
    pub(crate) fn difference(first: usize, max: usize) -> Boundary {
        Boundary::calibrated(first, max, Shape::HaybittlePeto, ALPHA)
    }

    /// The boundary of the equivalence verdict: Pocock's between the look on 2 degrees of freedom
    /// and the cap (at every look where there is none between them), at 2 × [`ALPHA`] two-sided.
    pub(crate) fn equivalence(first: usize, max: usize) -> Boundary {
        Boundary::calibrated(first, max, Boundary::equivalence_shape(first, max), 2.0 * ALPHA)
    }

    /// Pocock's level between the look on 2 degrees of freedom and the cap, where there is a look
    /// between them; at every look otherwise.
    fn equivalence_shape(first: usize, max: usize) -> Shape {
        if max > first.max(MIN_VALUES + 1) {
            Shape::PocockInner
        } else {
            Shape::Pocock
        }
    }

    /// A boundary of `shape` whose looks hold the truth together with 1 − `alpha`.
    pub(crate) fn calibrated(first: usize, max: usize, shape: Shape, alpha: f64) -> Boundary {
        let first = first.max(MIN_VALUES);
        if max <= first {
            return Boundary { first, max, shape, levels: Levels { strict: alpha, level: alpha, interim: alpha } };
        }
        type Memo = Mutex<HashMap<(usize, usize, Shape, u64), Levels>>;
        static MEMO: OnceLock<Memo> = OnceLock::new();
        let memo = MEMO.get_or_init(|| Mutex::new(HashMap::new()));
        let key = (first, max, shape, alpha.to_bits());
        let known = memo.lock().expect("memo").get(&key).copied();
        let levels = known.or_else(|| committed(first, max, shape, alpha)).unwrap_or_else(|| {
            let levels = calibrate(first, max, shape, alpha);
            memo.lock().expect("memo").insert(key, levels);
            levels
        });
        Boundary { first, max, shape, levels }
    }

    /// The two-sided level of the look after `n` blocks (looks past the cap take the cap's).
    pub(crate) fn alpha_at(&self, n: usize) -> f64 {
        if self.max <= self.first {
            return self.levels.level;
        }
        look_level(self.shape, self.levels, n.clamp(self.first, self.max), self.max)
    }
}

/// The committed levels of a boundary the studies use most (`super::boundary_table`), where the
/// table has it: the same numbers [`calibrate`] gives (the sim tier checks every entry), without
/// the simulation in every process that asks.
fn committed(first: usize, max: usize, shape: Shape, alpha: f64) -> Option<Levels> {
    super::boundary_table::LEVELS
        .iter()
        .find(|e| (e.0, e.1) == (first, max) && e.2 == format!("{shape:?}") && e.3.to_bits() == alpha.to_bits())
        .map(|e| Levels { strict: e.4, level: e.5, interim: e.6 })
}

/// The boundaries the committed table holds: the first looks a study takes (`--samples` 3 to 5)
/// with every cap to 30 and the rounder caps to 200, each with its difference and its equivalence
/// boundary.
#[cfg(test)]
fn committed_keys() -> Vec<(usize, usize, Shape, f64)> {
    let mut keys = Vec::new();
    for first in MIN_VALUES..=5 {
        for max in (first + 1..=30).chain([40, 50, 60, 80, 100, 150, 200]) {
            let eq = Boundary::equivalence_shape(first, max);
            keys.push((first, max, Shape::HaybittlePeto, ALPHA));
            keys.push((first, max, eq, 2.0 * ALPHA));
        }
    }
    keys
}

/// Look `n`'s level of a boundary whose cap is `max`, with calibrated `levels`.
fn look_level(shape: Shape, levels: Levels, n: usize, max: usize) -> f64 {
    match shape {
        Shape::HaybittlePeto if n < MIN_VALUES + STRICT_LOOKS && n < max => levels.strict,
        Shape::HaybittlePeto if n < max => levels.interim,
        Shape::PocockInner if n == MIN_VALUES || n == max => levels.strict,
        _ => levels.level,
    }
}

fn calibrate(first: usize, max: usize, shape: Shape, alpha: f64) -> Levels {
    let strict = PETO_INTERIM * (alpha / ALPHA).min(1.0);
    let looks = max - first + 1;
    let mut rng = ChaCha8Rng::seed_from_u64(SEED);
    // |t| of the mean at every look of every null path.
    let paths = (PATHS as f64 * (ALPHA / alpha).max(1.0)).ceil() as usize;
    let mut t = vec![0.0; paths * looks];
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
    // The share of null paths that cross one of the looks `first..=last` at `levels`.
    let crossing = |levels: Levels, last: usize| -> f64 {
        let q: Vec<f64> =
            (first..=last).map(|n| two_sided_quantile(look_level(shape, levels, n, max), n as f64 - 1.0)).collect();
        let crossed = t.chunks(looks).filter(|path| path.iter().zip(&q).any(|(t, q)| t > q)).count();
        crossed as f64 / paths as f64
    };
    // The level in (lo, hi) at which `crossed` crosses `target`: more crossings at a looser level.
    let solve = |crossed: &dyn Fn(f64) -> f64, target: f64, (mut lo, mut hi): (f64, f64)| {
        for _ in 0..20 {
            let mid = (lo * hi).sqrt();
            if crossed(mid) > target {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        lo
    };
    // Nearly 0 crosses less than α, α itself at least α (the earlier looks cross too).
    let bounds = (1e-6, alpha);
    match shape {
        Shape::HaybittlePeto => {
            // The looser interim level first, where there is a look for it, then the cap's. It is
            // never stricter than the first looks': with many looks, the strict level alone may
            // spend the share, and the cap takes what is left.
            let interim = if max > first.max(MIN_VALUES + STRICT_LOOKS) {
                let interim_crossed = |x: f64| crossing(Levels { strict, level: alpha, interim: x }, max - 1);
                solve(&interim_crossed, INTERIM_SHARE * alpha, (strict, alpha))
            } else {
                strict
            };
            let level = solve(&|x| crossing(Levels { strict, level: x, interim }, max), alpha, bounds);
            Levels { strict, level, interim }
        }
        Shape::Pocock | Shape::PocockInner => {
            let level = solve(&|x| crossing(Levels { strict, level: x, interim: x }, max), alpha, bounds);
            Levels { strict, level, interim: level }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The committed table (`src/summary/boundary_table.rs`) holds exactly what [`calibrate`]
    /// gives for every key of [`committed_keys`], to the bit. `ABPROF_WRITE_BOUNDARY_TABLE=1
    /// scripts/test --sim -E 'test(committed_boundary)'` writes it anew from the calibration.
    #[test]
    fn sim_the_committed_boundary_table_is_what_calibration_gives() {
        let rows: Vec<String> = committed_keys()
            .into_iter()
            .map(|(first, max, shape, alpha)| {
                let l = calibrate(first, max, shape, alpha);
                format!(
                    "    ({first}, {max}, \"{shape:?}\", {alpha:?}, {:?}, {:?}, {:?}),",
                    l.strict, l.level, l.interim
                )
            })
            .collect();
        let text = format!(
            "//! The calibrated levels of the boundaries studies use most (docs/methodology.md §17): written by\n\
             //! `sequential.rs`'s `sim_the_committed_boundary_table_is_what_calibration_gives` from the\n\
             //! calibration itself, which the sim tier checks every entry against. Not edited by hand.\n\
             \n\
             /// (first look, cap, shape (`sequential::Shape` by name), α, strict level, cap's or every look's level, interim level)\n\
             #[rustfmt::skip]\n\
             pub(super) const LEVELS: &[(usize, usize, &str, f64, f64, f64, f64)] = &[\n{}\n];\n",
            rows.join("\n")
        );
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/summary/boundary_table.rs");
        if std::env::var_os("ABPROF_WRITE_BOUNDARY_TABLE").is_some() {
            std::fs::write(&path, &text).unwrap();
        }
        let committed = std::fs::read_to_string(&path).unwrap();
        assert!(
            committed == text,
            "src/summary/boundary_table.rs differs from the calibration: write it anew (this test's doc)"
        );
        assert_eq!(super::super::boundary_table::LEVELS.len(), committed_keys().len());
    }

    /// Haybittle–Peto's looks on 2 and 3 degrees of freedom take [`PETO_INTERIM`], the later looks
    /// before the cap one looser level (never stricter, however many looks), the cap the rest;
    /// Pocock's one level lies between Bonferroni's α/looks and α; the equivalence boundary's look
    /// on 2 degrees of freedom and its cap take [`PETO_INTERIM`] and the looks between one level; a
    /// study whose first look has more degrees of freedom takes no strict look; a study that looks
    /// once takes α.
    #[test]
    fn each_shape_spends_alpha_as_it_should() {
        let hp = Boundary::difference(3, 10);
        assert_eq!(Boundary::difference(3, 3).alpha_at(3), ALPHA);
        assert_eq!(hp.alpha_at(3), PETO_INTERIM);
        assert_eq!(hp.alpha_at(4), PETO_INTERIM);
        let interim = hp.alpha_at(5);
        assert!(PETO_INTERIM < interim && interim < ALPHA, "{interim}");
        assert_eq!(hp.alpha_at(9), interim);
        let cap = hp.alpha_at(10);
        assert!(interim < cap && cap < ALPHA, "{cap}");
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
        let many = Boundary::difference(3, 60);
        assert!(many.alpha_at(10) >= PETO_INTERIM, "the interim looks are never the stricter: {}", many.alpha_at(10));
        let from_five = Boundary::difference(5, 10);
        assert!(from_five.alpha_at(5) > PETO_INTERIM, "a look on 4 degrees of freedom is not strict");
        assert!(Boundary::equivalence(5, 10).alpha_at(5) > PETO_INTERIM);
        let two_looks = Boundary::equivalence(3, 4);
        assert_eq!(two_looks.alpha_at(3), two_looks.alpha_at(4), "no look between: Pocock's over both");
        let cap20 = Boundary::difference(3, 20).alpha_at(20);
        eprintln!(
            "Haybittle–Peto 3..10: interim {interim:.4}, cap {cap:.4}; 3..20: interim {:.4}, cap {cap20:.4}; Pocock 3..10 {:.4}; equivalence (Pocock between the first look and the cap, 2α) {eq:.4}",
            Boundary::difference(3, 20).alpha_at(5),
            pocock.alpha_at(3)
        );
    }
}
