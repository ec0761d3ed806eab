//! Anytime-valid intervals for a study that decides after every block (docs/methodology.md §17):
//! a repeated confidence interval over the study's known cap. An adaptive study looks at its
//! interval after its first blocks and after every block from then on, up to `max_samples`; a
//! 95% interval at each look would exclude the truth at *some* look far more often than 5%
//! (simulated: early stops covered 50–95%). Each look's t-interval is therefore taken at one
//! smaller two-sided level α′ (Pocock's constant boundary, on Student's t), chosen so that
//! Gaussian paired log ratios cross it at any look up to the cap in exactly α of simulated
//! paths: every interval the study prints, wherever it stops, then holds the truth with 1 − α
//! together.
use super::stats::MIN_VALUES;
use super::t_test::two_sided_quantile;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::StandardNormal;
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

/// Simulated null paths the level is calibrated on (its rate is then known to about ±0.15%).
const PATHS: usize = 20_000;
const SEED: u64 = 20;

/// The two-sided level of each look of a study that looks after `first` blocks and every block
/// up to `max`, so that all its looks hold the truth together with 1 − `alpha`. A study that
/// cannot look twice gets `alpha` itself.
pub(crate) fn per_look_alpha(first: usize, max: usize, alpha: f64) -> f64 {
    let first = first.max(MIN_VALUES);
    if max <= first {
        return alpha;
    }
    type Memo = Mutex<HashMap<(usize, usize, u64), f64>>;
    static MEMO: OnceLock<Memo> = OnceLock::new();
    let memo = MEMO.get_or_init(|| Mutex::new(HashMap::new()));
    let key = (first, max, alpha.to_bits());
    if let Some(a) = memo.lock().expect("memo").get(&key) {
        return *a;
    }
    let a = calibrate(first, max, alpha);
    memo.lock().expect("memo").insert(key, a);
    a
}

fn calibrate(first: usize, max: usize, alpha: f64) -> f64 {
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
    let crossing = |a: f64| -> f64 {
        let q: Vec<f64> = (first..=max).map(|n| two_sided_quantile(a, n as f64 - 1.0)).collect();
        t.chunks(looks).filter(|path| path.iter().zip(&q).any(|(t, q)| t > q)).count() as f64 / PATHS as f64
    };
    // Bonferroni's α/looks crosses at most α; α itself at least α.
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

    #[test]
    fn more_looks_take_a_smaller_level_between_bonferroni_and_alpha() {
        assert_eq!(per_look_alpha(3, 3, 0.05), 0.05);
        let (a8, a18) = (per_look_alpha(3, 10, 0.05), per_look_alpha(3, 20, 0.05));
        assert!(0.05 / 8.0 < a8 && a8 < 0.05, "{a8}");
        assert!(0.05 / 18.0 < a18 && a18 < a8, "{a18}");
        assert_eq!(per_look_alpha(2, 10, 0.05), a8, "no look before 3 values a side");
        eprintln!("per-look alpha: 3..10 {a8:.4}, 3..20 {a18:.4}");
    }
}
