//! Baseline against candidate, position by position: are the tokens the same, and are the top-k
//! logprobs bit for bit the same?
use super::cosine::{summarize, CosineSummary};
use super::tokens::{Alternative, CapturedToken};
use super::yardstick::{self, VariantClass, Yardstick};
use serde::{Deserialize, Serialize};

/// Tokens shown on each side of a divergence.
pub(crate) const CONTEXT_TOKENS: usize = 8;

/// A token as a reader sees it in a divergence report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct ShownToken {
    pub(crate) index: usize,
    pub(crate) id: u32,
    pub(crate) text: String,
}

/// What one side generated from the divergence on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Continuation {
    /// Up to [`CONTEXT_TOKENS`] tokens from position `at` on.
    pub(crate) tokens: Vec<ShownToken>,
    /// The side's top-k at position `at` (empty when it had already ended).
    pub(crate) top_at: Vec<Alternative>,
    /// Set when the side ended at `at` (its finish reason), so the other one has more tokens.
    pub(crate) ended: Option<String>,
}

/// Where and how the two outputs part.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Divergence {
    /// The first generated-token index (0-based) whose token differs.
    pub(crate) at: usize,
    /// The shared tokens just before `at`.
    pub(crate) shared_before: Vec<ShownToken>,
    pub(crate) baseline: Continuation,
    pub(crate) candidate: Continuation,
}

/// The three outcomes of docs/methodology.md §12.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(crate) enum ExactnessVerdict {
    /// Every token and every top-k logprob identical.
    Exact,
    /// The same tokens, but some logprob differs.
    EqualTokens { max_abs_delta: f64, at: usize },
    /// The outputs part at token `at`.
    Diverged(Divergence),
}

impl ExactnessVerdict {
    pub(crate) fn headline(&self) -> String {
        match self {
            ExactnessVerdict::Exact => "exact".into(),
            ExactnessVerdict::EqualTokens { max_abs_delta, at } => {
                format!("equal tokens (logprobs differ: max |Δ| {max_abs_delta:.3e} at token {at})")
            }
            ExactnessVerdict::Diverged(d) => format!("diverged at token {}", d.at),
        }
    }
}

/// Everything the comparison found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Comparison {
    pub(crate) verdict: ExactnessVerdict,
    /// Positions whose distributions are comparable: all of them when the tokens agree, else
    /// those up to and including the divergence (after it the contexts differ).
    pub(crate) compared_positions: usize,
    /// Largest |Δlogprob| over ids in both sides' top-k at compared positions, and where.
    pub(crate) max_abs_logprob_delta: Option<f64>,
    pub(crate) max_delta_at: Option<usize>,
    /// Compared positions whose top-k id sets are not the same set.
    pub(crate) topk_set_differences: usize,
    pub(crate) cosine: CosineSummary,
    /// Same top-1 % and top-k KL against the class's thresholds; absent in reports of earlier
    /// releases.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) yardstick: Option<Yardstick>,
}

fn shown(tokens: &[CapturedToken], from: usize, to: usize) -> Vec<ShownToken> {
    tokens[from.min(tokens.len())..to.min(tokens.len())]
        .iter()
        .enumerate()
        .map(|(i, t)| ShownToken { index: from + i, id: t.id, text: t.text.clone() })
        .collect()
}

fn continuation(tokens: &[CapturedToken], at: usize, finish: Option<&str>) -> Continuation {
    Continuation {
        tokens: shown(tokens, at, at + CONTEXT_TOKENS),
        top_at: tokens.get(at).map(|t| t.top.clone()).unwrap_or_default(),
        ended: (at >= tokens.len()).then(|| finish.unwrap_or("ended").to_string()),
    }
}

fn same_bits(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits()
}

fn identical(a: &CapturedToken, b: &CapturedToken) -> bool {
    a.id == b.id
        && same_bits(a.logprob, b.logprob)
        && a.top.len() == b.top.len()
        && a.top.iter().zip(&b.top).all(|(x, y)| x.id == y.id && same_bits(x.logprob, y.logprob))
}

/// Largest |Δ| at one position over the ids both top-k lists hold.
fn position_delta(a: &CapturedToken, b: &CapturedToken) -> Option<f64> {
    a.top
        .iter()
        .filter_map(|x| b.top.iter().find(|y| y.id == x.id).map(|y| (x.logprob - y.logprob).abs()))
        .reduce(f64::max)
}

fn same_set(a: &[Alternative], b: &[Alternative]) -> bool {
    a.len() == b.len() && a.iter().all(|x| b.iter().any(|y| y.id == x.id))
}

pub(crate) fn compare(
    baseline: &[CapturedToken],
    candidate: &[CapturedToken],
    baseline_finish: Option<&str>,
    candidate_finish: Option<&str>,
    class: VariantClass,
) -> Comparison {
    let common = baseline.len().min(candidate.len());
    let first_diff = (0..common).find(|&i| baseline[i].id != candidate[i].id);
    let diverged_at = first_diff.or((baseline.len() != candidate.len()).then_some(common));
    // At the divergence itself both sides still share their context, so it is compared too.
    let compared = match diverged_at {
        Some(k) => (k + 1).min(common),
        None => common,
    };
    let pairs = || (0..compared).map(|i| (&baseline[i], &candidate[i]));
    let (mut max_delta, mut max_at) = (None::<f64>, None);
    for (i, (a, b)) in pairs().enumerate() {
        if let Some(d) = position_delta(a, b) {
            if max_delta.is_none_or(|m| d > m) {
                (max_delta, max_at) = (Some(d), Some(i));
            }
        }
    }
    let topk_set_differences = pairs().filter(|(a, b)| !same_set(&a.top, &b.top)).count();
    let cosine = summarize(pairs().map(|(a, b)| (a.top.as_slice(), b.top.as_slice())));
    let yardstick = yardstick::measure(pairs().map(|(a, b)| (a.top.as_slice(), b.top.as_slice())), class);
    let verdict = match diverged_at {
        Some(at) => ExactnessVerdict::Diverged(Divergence {
            at,
            shared_before: shown(baseline, at.saturating_sub(CONTEXT_TOKENS), at),
            baseline: continuation(baseline, at, baseline_finish),
            candidate: continuation(candidate, at, candidate_finish),
        }),
        None if pairs().all(|(a, b)| identical(a, b)) => ExactnessVerdict::Exact,
        None => ExactnessVerdict::EqualTokens { max_abs_delta: max_delta.unwrap_or(0.0), at: max_at.unwrap_or(0) },
    };
    Comparison {
        verdict,
        compared_positions: compared,
        max_abs_logprob_delta: max_delta,
        max_delta_at: max_at,
        topk_set_differences,
        cosine,
        yardstick: Some(yardstick),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tok(id: u32, top: &[(u32, f64)]) -> CapturedToken {
        CapturedToken {
            id,
            text: format!("t{id}"),
            logprob: top[0].1,
            top: top.iter().map(|&(id, logprob)| Alternative { id, text: format!("t{id}"), logprob }).collect(),
            folded_bytes: 0,
        }
    }

    fn seq(ids: &[u32], shift: f64) -> Vec<CapturedToken> {
        ids.iter().map(|&i| tok(i, &[(i, -0.1 - shift), (i + 1000, -2.0), (i + 2000, -3.0)])).collect()
    }

    #[test]
    fn the_same_sequence_is_exact() {
        let a = seq(&[1, 2, 3], 0.0);
        let c = compare(&a, &a.clone(), Some("length"), Some("length"), VariantClass::SameWeights);
        assert_eq!(c.verdict, ExactnessVerdict::Exact);
        assert_eq!(c.compared_positions, 3);
        assert_eq!(c.max_abs_logprob_delta, Some(0.0));
        assert!(c.cosine.pass);
    }

    #[test]
    fn equal_tokens_report_the_largest_logprob_change() {
        let a = seq(&[1, 2, 3], 0.0);
        let mut b = a.clone();
        b[2] = tok(3, &[(3, -0.35), (1003, -2.0), (2003, -3.0)]);
        let c = compare(&a, &b, None, None, VariantClass::SameWeights);
        match c.verdict {
            ExactnessVerdict::EqualTokens { max_abs_delta, at } => {
                assert!((max_abs_delta - 0.25).abs() < 1e-12);
                assert_eq!(at, 2);
            }
            v => panic!("{v:?}"),
        }
        assert!(c.verdict.headline().starts_with("equal tokens"));
    }

    #[test]
    fn a_divergence_shows_both_continuations_and_compares_up_to_it() {
        let a = seq(&[1, 2, 3, 4, 5], 0.0);
        let b = seq(&[1, 2, 9, 9, 9], 0.0);
        let c = compare(&a, &b, Some("length"), Some("length"), VariantClass::SameWeights);
        let ExactnessVerdict::Diverged(d) = &c.verdict else { panic!("{:?}", c.verdict) };
        assert_eq!(d.at, 2);
        assert_eq!(d.shared_before.iter().map(|t| t.id).collect::<Vec<_>>(), vec![1, 2]);
        assert_eq!(d.baseline.tokens.iter().map(|t| t.id).collect::<Vec<_>>(), vec![3, 4, 5]);
        assert_eq!(d.candidate.tokens.iter().map(|t| t.id).collect::<Vec<_>>(), vec![9, 9, 9]);
        assert_eq!(d.baseline.top_at[0].id, 3);
        assert_eq!(c.compared_positions, 3);
        assert_eq!(c.topk_set_differences, 1);
        assert_eq!(c.verdict.headline(), "diverged at token 2");
    }

    #[test]
    fn a_side_that_stops_early_diverges_where_it_ended() {
        let a = seq(&[1, 2, 3], 0.0);
        let b = seq(&[1, 2], 0.0);
        let c = compare(&a, &b, Some("length"), Some("stop"), VariantClass::SameWeights);
        let ExactnessVerdict::Diverged(d) = &c.verdict else { panic!() };
        assert_eq!(d.at, 2);
        assert_eq!(d.candidate.ended.as_deref(), Some("stop"));
        assert!(d.candidate.tokens.is_empty() && d.baseline.ended.is_none());
        assert_eq!(c.compared_positions, 2);
    }
}
