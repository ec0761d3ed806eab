//! The community's yardstick, as far as top-k logprobs allow (docs/methodology.md §12): how often
//! both sides pick the same most likely token ("same top-1 %"), and the KL divergence of the
//! baseline's distribution from the candidate's over the top-k, the tail bounded as one bucket,
//! judged against thresholds that depend on what the candidate changed (its [`VariantClass`]).
//!
//! At each compared position the vocabulary is cut into the ids both sides reported in their top-k,
//! one bucket each, and one "other" bucket holding everything else: on each side, 1 − the
//! probability of the shared ids (every reported logprob is exact, so the bucket's mass is exact
//! too). The KL over these buckets is the KL of the two full distributions coarsened to the
//! buckets, so by the data-processing inequality it never exceeds the full-vocabulary KL that
//! `llama-perplexity --kl-divergence` reports; it equals it when the two sides differ only among
//! the shared ids, or by the same ratio across everything outside them.
use super::tokens::Alternative;
use serde::{Deserialize, Serialize};

/// What the candidate changed against the baseline, which sets how close "close" must be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum VariantClass {
    /// The same weights and KV cache type: a kernel, build, flag or environment change.
    SameWeights,
    /// Another KV cache type, the less precise side 8 bits or wider (q8_0, f16, bf16, f32).
    #[serde(rename = "kv-8-bit-or-wider")]
    #[value(name = "kv-8-bit-or-wider")]
    Kv8BitOrWider,
    /// Another KV cache type, the less precise side below 8 bits (q5_0, q5_1, q4_0, q4_1, iq4_nl).
    #[serde(rename = "kv-below-8-bit")]
    #[value(name = "kv-below-8-bit")]
    KvBelow8Bit,
    /// Other weights (another GGUF): reported only; compare with the quantization's published KL.
    DifferentWeights,
}

/// The least a candidate of a class must show: both must hold.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub(crate) struct Thresholds {
    pub(crate) min_same_top1_pct: f64,
    pub(crate) max_mean_kl: f64,
}

/// The one table of thresholds, also in docs/methodology.md §12.
pub(crate) const THRESHOLDS: [(VariantClass, Option<Thresholds>); 4] = [
    (VariantClass::SameWeights, Some(Thresholds { min_same_top1_pct: 99.0, max_mean_kl: 1e-3 })),
    (VariantClass::Kv8BitOrWider, Some(Thresholds { min_same_top1_pct: 95.0, max_mean_kl: 1e-2 })),
    (VariantClass::KvBelow8Bit, Some(Thresholds { min_same_top1_pct: 90.0, max_mean_kl: 5e-2 })),
    (VariantClass::DifferentWeights, None),
];

impl VariantClass {
    pub(crate) fn thresholds(self) -> Option<Thresholds> {
        THRESHOLDS.iter().find(|(c, _)| *c == self).and_then(|(_, t)| *t)
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            VariantClass::SameWeights => "same-weights",
            VariantClass::Kv8BitOrWider => "kv-8-bit-or-wider",
            VariantClass::KvBelow8Bit => "kv-below-8-bit",
            VariantClass::DifferentWeights => "different-weights",
        }
    }

    /// From the two sides' models and KV cache types (`kv=`; llama-server's default is f16).
    pub(crate) fn of(
        base_model: &std::path::Path,
        base_kv: Option<&str>,
        model: &std::path::Path,
        kv: Option<&str>,
    ) -> Self {
        let (a, b) = (base_kv.unwrap_or("f16"), kv.unwrap_or("f16"));
        if base_model != model {
            VariantClass::DifferentWeights
        } else if a == b {
            VariantClass::SameWeights
        } else if kv_bits(a).min(kv_bits(b)) >= 8 {
            VariantClass::Kv8BitOrWider
        } else {
            VariantClass::KvBelow8Bit
        }
    }
}

/// Bits per value of a KV cache type (crate::variant::KV_TYPES), ignoring block scales.
fn kv_bits(kv: &str) -> u32 {
    match kv {
        "f32" => 32,
        "f16" | "bf16" => 16,
        "q8_0" => 8,
        "q5_0" | "q5_1" => 5,
        _ => 4,
    }
}

/// The "other" bucket of a side never goes below this: a side whose shared ids hold all its
/// probability (up to rounding) must not make the KL infinite.
pub(crate) const OTHER_FLOOR: f64 = 1e-9;

/// How the tail is bounded, recorded with every report so the number can be read correctly.
pub(crate) const TAIL_RULE: &str = "KL(baseline || candidate) over the ids both top-k lists hold, plus one bucket \
     for everything else (1 - their probability on each side, floored at 1e-9); a lower bound of the \
     full-vocabulary KL";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Yardstick {
    pub(crate) class: VariantClass,
    /// The class's thresholds; none for different weights.
    pub(crate) thresholds: Option<Thresholds>,
    /// Positions whose most likely token is the same on both sides, of the compared positions.
    pub(crate) same_top1_pct: Option<f64>,
    pub(crate) kl_mean: Option<f64>,
    pub(crate) kl_max: Option<f64>,
    pub(crate) kl_max_at: Option<usize>,
    /// KL at each compared position (0-based generated-token index).
    pub(crate) per_position_kl: Vec<f64>,
    /// Within the class's thresholds; `None` when it has none or nothing was compared.
    pub(crate) pass: Option<bool>,
    pub(crate) tail: String,
}

fn most_likely(side: &[Alternative]) -> Option<u32> {
    side.iter()
        .fold(None::<&Alternative>, |best, a| match best {
            Some(b) if b.logprob >= a.logprob => Some(b),
            _ => Some(a),
        })
        .map(|a| a.id)
}

/// KL(P || Q) over the shared ids of two top-k lists and one bucket for the rest of each side.
pub(crate) fn topk_kl(p: &[Alternative], q: &[Alternative]) -> f64 {
    let mut shared: Vec<(f64, f64)> = Vec::new();
    for a in p {
        if let Some(b) = q.iter().find(|b| b.id == a.id) {
            shared.push((a.logprob.exp(), b.logprob.exp()));
        }
    }
    // Rounding may make reported probabilities sum past 1: then the side is renormalised.
    let buckets = |side: &dyn Fn(&(f64, f64)) -> f64| -> Vec<f64> {
        let mass: f64 = shared.iter().map(side).sum();
        let mut v: Vec<f64> = shared.iter().map(side).collect();
        if mass > 1.0 {
            v.iter_mut().for_each(|x| *x /= mass);
            v.push(0.0);
        } else {
            v.push(1.0 - mass);
        }
        v
    };
    let (pb, qb) = (buckets(&|s| s.0), buckets(&|s| s.1));
    let last = pb.len() - 1;
    pb.iter()
        .zip(&qb)
        .enumerate()
        .filter(|(_, (p, _))| **p > 0.0)
        .map(|(i, (p, q))| {
            let q = if i == last { q.max(OTHER_FLOOR) } else { *q };
            p * (p / q).ln()
        })
        .sum::<f64>()
        .max(0.0)
}

/// The yardstick over positions `0..`, each a (baseline, candidate) pair of top-k lists.
pub(crate) fn measure<'a>(
    pairs: impl Iterator<Item = (&'a [Alternative], &'a [Alternative])>,
    class: VariantClass,
) -> Yardstick {
    let (mut same, mut per_position_kl) = (0usize, Vec::new());
    for (a, b) in pairs {
        if most_likely(a).is_some() && most_likely(a) == most_likely(b) {
            same += 1;
        }
        per_position_kl.push(topk_kl(a, b));
    }
    let n = per_position_kl.len();
    let same_top1_pct = (n > 0).then(|| 100.0 * same as f64 / n as f64);
    let kl_mean = (n > 0).then(|| per_position_kl.iter().sum::<f64>() / n as f64);
    let (kl_max_at, kl_max) = per_position_kl
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.total_cmp(b.1))
        .map_or((None, None), |(i, v)| (Some(i), Some(*v)));
    let thresholds = class.thresholds();
    let pass = match (thresholds, same_top1_pct, kl_mean) {
        (Some(t), Some(top1), Some(kl)) => Some(top1 >= t.min_same_top1_pct && kl <= t.max_mean_kl),
        _ => None,
    };
    Yardstick {
        class,
        thresholds,
        same_top1_pct,
        kl_mean,
        kl_max,
        kl_max_at,
        per_position_kl,
        pass,
        tail: TAIL_RULE.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn alts(v: &[(u32, f64)]) -> Vec<Alternative> {
        v.iter().map(|&(id, p)| Alternative { id, text: format!("t{id}"), logprob: p.ln() }).collect()
    }

    #[test]
    fn identical_distributions_have_no_divergence() {
        let a = alts(&[(1, 0.5), (2, 0.2), (3, 0.1)]);
        assert_eq!(topk_kl(&a, &a), 0.0);
        let y = measure([(&a[..], &a[..]), (&a[..], &a[..])].into_iter(), VariantClass::SameWeights);
        assert_eq!((y.same_top1_pct, y.kl_mean, y.kl_max), (Some(100.0), Some(0.0), Some(0.0)));
        assert_eq!(y.pass, Some(true));
    }

    #[test]
    fn a_known_divergence_is_computed_with_the_tail_as_one_bucket() {
        // Buckets (id 1, id 2, rest): P = (0.5, 0.3, 0.2), Q = (0.4, 0.4, 0.2).
        let p = alts(&[(1, 0.5), (2, 0.3)]);
        let q = alts(&[(2, 0.4), (1, 0.4)]);
        let want = 0.5 * (0.5f64 / 0.4).ln() + 0.3 * (0.3f64 / 0.4).ln();
        assert!((topk_kl(&p, &q) - want).abs() < 1e-12, "{} vs {want}", topk_kl(&p, &q));
        // An id only one side reported falls into that side's rest: P = (0.5, 0.5), Q = (0.4, 0.6).
        let p = alts(&[(1, 0.5), (7, 0.3)]);
        let q = alts(&[(1, 0.4), (9, 0.5)]);
        let want = 0.5 * (0.5f64 / 0.4).ln() + 0.5 * (0.5f64 / 0.6).ln();
        assert!((topk_kl(&p, &q) - want).abs() < 1e-12);
        // Disjoint top-k lists: everything is the rest on both sides, and the KL cannot see a
        // difference (the bound is a lower bound); the top-1 can.
        let y = measure(std::iter::once((&alts(&[(1, 0.6)])[..], &alts(&[(2, 0.6)])[..])), VariantClass::Kv8BitOrWider);
        assert_eq!((y.kl_mean, y.same_top1_pct, y.pass), (Some(0.0), Some(0.0), Some(false)));
    }

    fn captured(sse: &str) -> Vec<super::super::tokens::CapturedToken> {
        let (list, n) = super::super::tokens::replay(sse);
        super::super::tokens::captured_tokens(&list, Some(n), None, 5)
            .unwrap_or_else(|_| super::super::tokens::captured_tokens(&list, Some(n), Some("stop"), 5).unwrap())
    }

    fn pairs<'a>(
        a: &'a [super::super::tokens::CapturedToken],
        b: &'a [super::super::tokens::CapturedToken],
    ) -> impl Iterator<Item = (&'a [Alternative], &'a [Alternative])> {
        a.iter().zip(b).map(|(x, y)| (x.top.as_slice(), y.top.as_slice()))
    }

    /// Real top-5 logprobs of SmolLM2 on the test bed (tests/fixtures/exactness/): a response
    /// against itself, and against another prompt's first 8 positions, whose per-position values
    /// were computed by hand from the fixtures' logprobs (shared ids + one bucket for the rest).
    #[test]
    fn real_captured_distributions() {
        let haiku = captured(include_str!("../../tests/fixtures/exactness/smollm2-8-tokens.sse"));
        let hi = captured(include_str!("../../tests/fixtures/exactness/smollm2-stop.sse"));
        let same = measure(pairs(&haiku, &haiku), VariantClass::SameWeights);
        assert_eq!((same.same_top1_pct, same.kl_max, same.pass), (Some(100.0), Some(0.0), Some(true)));
        assert_eq!(same.per_position_kl.len(), 8);

        let other = measure(pairs(&haiku, &hi), VariantClass::Kv8BitOrWider);
        let want = [0.07298365388921776, 0.0, 0.0, 0.12506742929871467, 0.0, 0.0, 0.0, 0.2637312391025417];
        for (i, (got, want)) in other.per_position_kl.iter().zip(want).enumerate() {
            assert!((got - want).abs() < 1e-9, "position {i}: {got} vs {want}");
        }
        assert!((other.kl_mean.unwrap() - 0.057722790286309264).abs() < 1e-9);
        assert_eq!((other.kl_max_at, other.same_top1_pct, other.pass), (Some(7), Some(0.0), Some(false)));
    }

    #[test]
    fn a_certain_candidate_does_not_make_the_divergence_infinite() {
        let p = alts(&[(1, 0.9)]);
        let q = alts(&[(1, 1.0)]);
        let kl = topk_kl(&p, &q);
        assert!(kl.is_finite() && kl > 1.0, "{kl}");
    }

    #[test]
    fn classes_follow_the_variant_specs_and_the_table() {
        let (m, other) = (std::path::Path::new("/m.gguf"), std::path::Path::new("/q4.gguf"));
        assert_eq!(VariantClass::of(m, None, m, None), VariantClass::SameWeights);
        assert_eq!(VariantClass::of(m, Some("f16"), m, None), VariantClass::SameWeights);
        assert_eq!(VariantClass::of(m, None, m, Some("q8_0")), VariantClass::Kv8BitOrWider);
        assert_eq!(VariantClass::of(m, Some("q8_0"), m, Some("q4_0")), VariantClass::KvBelow8Bit);
        assert_eq!(VariantClass::of(m, None, other, None), VariantClass::DifferentWeights);
        assert_eq!(VariantClass::SameWeights.thresholds().unwrap().max_mean_kl, 1e-3);
        assert!(VariantClass::DifferentWeights.thresholds().is_none());
        let y =
            measure(std::iter::once((&alts(&[(1, 0.6)])[..], &alts(&[(1, 0.6)])[..])), VariantClass::DifferentWeights);
        assert_eq!(y.pass, None);
        assert_eq!(measure(std::iter::empty(), VariantClass::SameWeights).pass, None);
    }
}
