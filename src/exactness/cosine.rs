//! The numerical fallback gate (docs/methodology.md §12): when a candidate is not bit
//! exact, its output distribution must still be close, cosine similarity ≥ 0.99.
//!
//! The server reports only the top-k logprobs of each position, so the vectors compared are
//! those: at each position, the union of both sides' top-k token ids, each side's logprob for
//! every id of the union. An id outside one side's top-k has an unknown logprob that is at most
//! that side's k-th logprob; it is filled with exactly that k-th logprob — the tightest bound
//! known, and a value that neither invents probability (0 would claim certainty) nor makes the
//! norm infinite (−∞).
//!
//! Caveat, for readers of the number: logprob vectors share a large negative offset, so their
//! cosine is high even for different distributions (two disjoint top-5 sets of a real model
//! score around 0.94). A position below 0.99 is therefore a real difference; 0.99 or above is
//! not proof of equality — that is what the exact/equal-tokens verdicts are for.
use super::tokens::Alternative;
use serde::{Deserialize, Serialize};

pub(crate) const COSINE_THRESHOLD: f64 = 0.99;

/// How missing ids are filled, recorded with every report so the number can be read correctly.
pub(crate) const FILL_RULE: &str =
    "union of both top-k id sets; an id missing from one side's top-k gets that side's k-th (lowest reported) logprob";

/// Per-position and overall cosine similarity of the aligned top-k logprob vectors.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct CosineSummary {
    pub(crate) threshold: f64,
    /// Cosine of all compared positions' aligned vectors laid end to end.
    pub(crate) overall: Option<f64>,
    /// The lowest per-position cosine and where it is.
    pub(crate) min: Option<f64>,
    pub(crate) min_at: Option<usize>,
    /// Positions whose cosine is below the threshold.
    pub(crate) below_threshold: Vec<usize>,
    /// Cosine at each compared position (0-based generated-token index).
    pub(crate) per_position: Vec<f64>,
    /// Overall and every position at or above the threshold (false when nothing was compared).
    pub(crate) pass: bool,
    pub(crate) fill: String,
}

/// The two aligned vectors of one position.
pub(crate) fn aligned(a: &[Alternative], b: &[Alternative]) -> (Vec<f64>, Vec<f64>) {
    let floor = |side: &[Alternative]| side.iter().map(|t| t.logprob).fold(f64::INFINITY, f64::min);
    let (fa, fb) = (floor(a), floor(b));
    let mut ids: Vec<u32> = a.iter().map(|t| t.id).collect();
    ids.extend(b.iter().map(|t| t.id).filter(|id| !a.iter().any(|t| t.id == *id)));
    let value = |side: &[Alternative], id: u32, fill: f64| side.iter().find(|t| t.id == id).map_or(fill, |t| t.logprob);
    ids.iter().map(|&id| (value(a, id, fa), value(b, id, fb))).unzip()
}

fn cosine_parts(x: &[f64], y: &[f64]) -> (f64, f64, f64) {
    let dot = x.iter().zip(y).map(|(p, q)| p * q).sum();
    let nx = x.iter().map(|p| p * p).sum();
    let ny = y.iter().map(|q| q * q).sum();
    (dot, nx, ny)
}

fn cosine_of(dot: f64, nx: f64, ny: f64) -> f64 {
    match (nx > 0.0, ny > 0.0) {
        // One square root of the product: for identical vectors (dot = nx = ny) IEEE's
        // sqrt(x·x) = x makes the similarity exactly 1, where sqrt(x)·sqrt(x) can miss it by an ulp.
        (true, true) => (dot / (nx * ny).sqrt()).clamp(-1.0, 1.0),
        // Both all-zero (every reported token certain) is the same distribution.
        (false, false) => 1.0,
        _ => 0.0,
    }
}

/// Summarizes positions `0..pairs.len()`, each a pair of top-k lists.
pub(crate) fn summarize<'a>(pairs: impl Iterator<Item = (&'a [Alternative], &'a [Alternative])>) -> CosineSummary {
    let (mut dot, mut nx, mut ny) = (0.0, 0.0, 0.0);
    let mut per_position = Vec::new();
    for (a, b) in pairs {
        let (x, y) = aligned(a, b);
        let (d, px, py) = cosine_parts(&x, &y);
        dot += d;
        nx += px;
        ny += py;
        per_position.push(cosine_of(d, px, py));
    }
    let overall = (!per_position.is_empty()).then(|| cosine_of(dot, nx, ny));
    let (min_at, min) = per_position
        .iter()
        .enumerate()
        .min_by(|a, b| a.1.total_cmp(b.1))
        .map(|(i, v)| (Some(i), Some(*v)))
        .unwrap_or((None, None));
    let below_threshold: Vec<usize> =
        per_position.iter().enumerate().filter(|(_, c)| **c < COSINE_THRESHOLD).map(|(i, _)| i).collect();
    let pass = overall.is_some_and(|o| o >= COSINE_THRESHOLD) && below_threshold.is_empty();
    CosineSummary {
        threshold: COSINE_THRESHOLD,
        overall,
        min,
        min_at,
        below_threshold,
        per_position,
        pass,
        fill: FILL_RULE.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identical_vectors_are_exactly_similar() {
        for x in [0.1, 1.0 / 3.0, 2.0_f64.sqrt(), 12_345.678_9, 7.0e-5] {
            assert_eq!(cosine_of(x, x, x), 1.0, "{x}");
        }
    }

    fn alts(v: &[(u32, f64)]) -> Vec<Alternative> {
        v.iter().map(|&(id, logprob)| Alternative { id, text: format!("t{id}"), logprob }).collect()
    }

    #[test]
    fn identical_lists_score_one_and_order_does_not_matter() {
        let a = alts(&[(1, -0.5), (2, -1.5), (3, -2.0)]);
        let b = alts(&[(2, -1.5), (1, -0.5), (3, -2.0)]);
        let s = summarize(std::iter::once((&a[..], &b[..])));
        assert!((s.per_position[0] - 1.0).abs() < 1e-12);
    }

    #[test]
    fn missing_ids_take_the_sides_lowest_logprob() {
        let a = alts(&[(1, -0.5), (2, -1.5)]);
        let b = alts(&[(1, -0.4), (3, -2.5)]);
        let (x, y) = aligned(&a, &b);
        assert_eq!(x, vec![-0.5, -1.5, -1.5]);
        assert_eq!(y, vec![-0.4, -2.5, -2.5]);
    }

    #[test]
    fn disjoint_top_sets_fail_the_gate_and_are_located() {
        // Position 1 is the SmolLM2 f16-vs-q8_0-KV pair seen on the test bed: disjoint top-5s.
        let same = alts(&[(1, -0.5), (2, -1.5), (3, -2.0), (4, -2.2), (5, -3.0)]);
        let a = alts(&[(359, -1.56), (2316, -1.97), (416, -2.56), (457, -2.76), (915, -3.40)]);
        let b = alts(&[(7585, -1.69), (1230, -3.16), (6736, -3.55), (2851, -3.92), (1035, -3.98)]);
        let s = summarize([(&same[..], &same[..]), (&a[..], &b[..])].into_iter());
        assert_eq!(s.per_position.len(), 2);
        assert!((s.per_position[0] - 1.0).abs() < 1e-12);
        assert!(s.per_position[1] < 0.99 && s.per_position[1] > 0.9, "{}", s.per_position[1]);
        assert_eq!((s.min_at, s.below_threshold.clone()), (Some(1), vec![1]));
        assert!(!s.pass);
        assert!(s.overall.unwrap() < 1.0);
    }

    #[test]
    fn nothing_compared_does_not_pass() {
        let s = summarize(std::iter::empty());
        assert_eq!((s.overall, s.pass), (None, false));
    }
}
