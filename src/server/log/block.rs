//! One request's timing block and the rates derived from it.
use serde::{Deserialize, Serialize};

/// Speculative decoding's acceptance, as the server reports it for one request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct DraftAcceptance {
    /// Accepted draft tokens over drafted ("generated") tokens.
    pub(crate) rate: f64,
    pub(crate) accepted: u64,
    /// Tokens the draft proposed (llama.cpp calls them "generated").
    pub(crate) generated: u64,
    /// 1 + accepted / verification steps; printed by builds from 2026 on, as `mean len` and later
    /// as `mean acceptance length`.
    pub(crate) mean_len: Option<f64>,
    /// Accepted tokens at draft position 1, 2, … per verification step: the 2026-06 wording's
    /// `acceptance rate per position = (…)`, or the pinned build's `acc per pos = (…)` line (TRACE,
    /// `-lv 4`) after the acceptance line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) per_position: Option<Vec<f64>>,
}

/// The per-implementation statistics line (`statistics draft-simple: #calls…`), printed at INFO
/// in 2025 builds and at TRACE (`-lv 4`) since.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct SpecStatistics {
    pub(crate) implementation: String,
    pub(crate) gen_drafts: u64,
    pub(crate) acc_drafts: u64,
    pub(crate) gen_tokens: u64,
    pub(crate) acc_tokens: u64,
    /// `#mean acc len = …` (builds from 2026 on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) mean_acc_len: Option<f64>,
    /// `#acc rate/pos = (…)`: empty when no draft token was ever accepted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) acc_rate_per_pos: Option<Vec<f64>>,
}

/// One request's timing block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct TimingBlock {
    pub(crate) slot: Option<u32>,
    pub(crate) task: Option<i64>,
    /// Prompt tokens processed; excludes tokens reused from the prompt cache.
    pub(crate) prompt_tokens: u64,
    pub(crate) prompt_ms: f64,
    pub(crate) prompt_tps: f64,
    pub(crate) eval_tokens: u64,
    pub(crate) eval_ms: f64,
    pub(crate) eval_tps: f64,
    pub(crate) total_ms: Option<f64>,
    pub(crate) total_tokens: Option<u64>,
    pub(crate) graphs_reused: Option<u64>,
    pub(crate) draft: Option<DraftAcceptance>,
    pub(crate) spec_statistics: Vec<SpecStatistics>,
}

impl TimingBlock {
    /// Server decode TPS recomputed from the interval (N / eval seconds), not the rounded print.
    pub(crate) fn decode_tps(&self) -> f64 {
        per_second(self.eval_tokens as f64, self.eval_ms)
    }

    /// The standards-style (N−1)/eval-seconds estimate: llama-server's interval is not literally
    /// first-to-last token, so both are reported.
    pub(crate) fn decode_tps_n_minus_1(&self) -> f64 {
        per_second(self.eval_tokens.saturating_sub(1) as f64, self.eval_ms)
    }

    pub(crate) fn prefill_tps(&self) -> f64 {
        per_second(self.prompt_tokens as f64, self.prompt_ms)
    }

    pub(crate) fn decode_ms_per_token(&self) -> f64 {
        if self.eval_tokens == 0 {
            f64::NAN
        } else {
            self.eval_ms / self.eval_tokens as f64
        }
    }
}

impl TimingBlock {
    /// Several requests' blocks as one (the MTP yardstick's nine, docs/methodology.md §4.1): the
    /// tokens and milliseconds summed, so its rates are the requests' totals over their total time
    /// (N / ms, recomputed, not a print); the draft counts summed, their rate accepted/generated,
    /// the mean length and per-position rates weighted by each request's verification steps
    /// (eval tokens / mean length); the last block's statistics lines (they count from the
    /// server's start). One block is itself; none is `None`.
    pub(crate) fn combined(blocks: &[TimingBlock]) -> Option<TimingBlock> {
        let (first, last) = (blocks.first()?, blocks.last()?);
        if blocks.len() == 1 {
            return Some(first.clone());
        }
        let sum_u = |f: fn(&TimingBlock) -> u64| blocks.iter().map(f).sum::<u64>();
        let sum_f = |f: fn(&TimingBlock) -> f64| blocks.iter().map(f).sum::<f64>();
        let all_u = |f: fn(&TimingBlock) -> Option<u64>| blocks.iter().map(f).sum::<Option<u64>>();
        let (prompt_tokens, prompt_ms) = (sum_u(|b| b.prompt_tokens), sum_f(|b| b.prompt_ms));
        let (eval_tokens, eval_ms) = (sum_u(|b| b.eval_tokens), sum_f(|b| b.eval_ms));
        Some(TimingBlock {
            slot: first.slot.filter(|s| blocks.iter().all(|b| b.slot == Some(*s))),
            task: None,
            prompt_tokens,
            prompt_ms,
            prompt_tps: per_second(prompt_tokens as f64, prompt_ms),
            eval_tokens,
            eval_ms,
            eval_tps: per_second(eval_tokens as f64, eval_ms),
            total_ms: blocks.iter().map(|b| b.total_ms).sum::<Option<f64>>(),
            total_tokens: all_u(|b| b.total_tokens),
            graphs_reused: all_u(|b| b.graphs_reused),
            draft: DraftAcceptance::combined(blocks),
            spec_statistics: last.spec_statistics.clone(),
        })
    }
}

impl DraftAcceptance {
    /// The draft lines of `blocks` summed ([`TimingBlock::combined`]); `None` when none drafted.
    fn combined(blocks: &[TimingBlock]) -> Option<DraftAcceptance> {
        let drafted: Vec<(&DraftAcceptance, u64)> =
            blocks.iter().filter_map(|b| b.draft.as_ref().map(|d| (d, b.eval_tokens))).collect();
        if drafted.is_empty() {
            return None;
        }
        let accepted = drafted.iter().map(|(d, _)| d.accepted).sum::<u64>();
        let generated = drafted.iter().map(|(d, _)| d.generated).sum::<u64>();
        // A request's verification steps: its tokens over the tokens one step yields.
        let steps: Option<Vec<f64>> =
            drafted.iter().map(|(d, n)| d.mean_len.filter(|l| *l > 0.0).map(|l| *n as f64 / l)).collect();
        let total_steps = steps.as_ref().map(|s| s.iter().sum::<f64>()).filter(|s| *s > 0.0);
        let tokens = drafted.iter().map(|(_, n)| *n).sum::<u64>() as f64;
        let per_position = steps.as_ref().zip(total_steps).and_then(|(steps, total)| {
            let rows: Option<Vec<&Vec<f64>>> = drafted.iter().map(|(d, _)| d.per_position.as_ref()).collect();
            let rows = rows?;
            let width = rows.iter().map(|r| r.len()).max()?;
            Some(
                (0..width)
                    .map(|i| {
                        rows.iter().zip(steps).map(|(r, s)| r.get(i).copied().unwrap_or(0.0) * s).sum::<f64>() / total
                    })
                    .collect(),
            )
        });
        Some(DraftAcceptance {
            rate: if generated > 0 { accepted as f64 / generated as f64 } else { 0.0 },
            accepted,
            generated,
            mean_len: total_steps.map(|s| tokens / s),
            per_position,
        })
    }
}

fn per_second(n: f64, ms: f64) -> f64 {
    if ms > 0.0 {
        n / (ms / 1000.0)
    } else {
        f64::NAN
    }
}

#[cfg(test)]
mod combined_tests {
    use super::*;

    fn block(eval_tokens: u64, eval_ms: f64, draft: Option<(u64, u64, f64)>) -> TimingBlock {
        TimingBlock {
            slot: Some(0),
            task: Some(1),
            prompt_tokens: 100,
            prompt_ms: 50.0,
            prompt_tps: 2000.0,
            eval_tokens,
            eval_ms,
            eval_tps: 1.0,
            total_ms: Some(eval_ms + 50.0),
            total_tokens: Some(100 + eval_tokens),
            graphs_reused: Some(3),
            draft: draft.map(|(accepted, generated, mean_len)| DraftAcceptance {
                rate: accepted as f64 / generated as f64,
                accepted,
                generated,
                mean_len: Some(mean_len),
                per_position: Some(vec![accepted as f64 / generated as f64]),
            }),
            spec_statistics: Vec::new(),
        }
    }

    #[test]
    fn blocks_combine_into_totals_over_total_time() {
        assert_eq!(TimingBlock::combined(&[]), None);
        let one = block(32, 100.0, None);
        assert_eq!(TimingBlock::combined(std::slice::from_ref(&one)), Some(one.clone()), "one block is itself");
        let c = TimingBlock::combined(&[block(32, 100.0, Some((9, 9, 4.0))), block(96, 300.0, Some((0, 60, 1.0)))])
            .unwrap();
        assert_eq!((c.prompt_tokens, c.eval_tokens, c.eval_ms), (200, 128, 400.0));
        assert_eq!((c.prompt_tps, c.eval_tps, c.decode_tps()), (2000.0, 320.0, 320.0));
        assert_eq!((c.slot, c.task, c.graphs_reused, c.total_ms), (Some(0), None, Some(6), Some(500.0)));
        let d = c.draft.unwrap();
        assert_eq!((d.accepted, d.generated), (9, 69));
        assert!((d.rate - 9.0 / 69.0).abs() < 1e-12);
        // 8 steps of 4 tokens and 96 of 1: 128 tokens over 104 steps.
        assert!((d.mean_len.unwrap() - 128.0 / 104.0).abs() < 1e-12, "{d:?}");
        assert!((d.per_position.unwrap()[0] - 8.0 / 104.0).abs() < 1e-12);
        assert_eq!(TimingBlock::combined(&[block(8, 1.0, None), block(8, 1.0, None)]).unwrap().draft, None);
    }
}
