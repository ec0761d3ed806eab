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

fn per_second(n: f64, ms: f64) -> f64 {
    if ms > 0.0 {
        n / (ms / 1000.0)
    } else {
        f64::NAN
    }
}
