//! The server's memory per variant (docs/methodology.md §7.11 "memory"): medians over the
//! accepted samples whose logs sized their buffers, so MTP on against off shows what the MTP
//! block's weights, its context and the speculative rollback's recurrent state cost.
use super::stats::median;
use crate::measure::Sample;
use crate::server::log::{BufferKind, MemoryRole, ServerMemory};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct MemoryFigures {
    /// Accepted samples whose server log sized its buffers (`-lv 4` on the pinned build).
    pub(crate) samples: usize,
    /// Weights, every device and model (a draft model's included).
    pub(crate) model_mib: f64,
    /// The target context's KV cache.
    pub(crate) kv_mib: f64,
    /// The target context's recurrent state (the gated delta net's; 3 sequences with speculation).
    pub(crate) recurrent_mib: f64,
    /// The target context's compute and output buffers.
    pub(crate) compute_mib: f64,
    /// The MTP context's buffers, or a draft model's context (its weights are in `model_mib`).
    pub(crate) speculative_context_mib: f64,
    pub(crate) total_mib: f64,
    /// Of the total, on the accelerator (0 on a CPU build).
    pub(crate) device_mib: f64,
}

impl MemoryFigures {
    /// The speculative context's share of the total, %.
    pub(crate) fn speculative_share_pct(&self) -> Option<f64> {
        (self.total_mib > 0.0).then(|| 100.0 * self.speculative_context_mib / self.total_mib)
    }
}

/// The medians of `samples`' memory, None when no log sized a buffer.
pub(crate) fn figures(samples: &[&Sample]) -> Option<MemoryFigures> {
    let memories: Vec<&ServerMemory> = samples.iter().filter_map(|s| s.memory.as_ref()).collect();
    if memories.is_empty() {
        return None;
    }
    let med =
        |f: &dyn Fn(&ServerMemory) -> f64| median(&memories.iter().map(|m| f(m)).collect::<Vec<_>>()).unwrap_or(0.0);
    let target = Some(MemoryRole::Target);
    let speculative = |m: &ServerMemory| {
        m.mib(None, None) - m.mib(target, None) - m.mib(Some(MemoryRole::Draft), Some(BufferKind::Model))
    };
    Some(MemoryFigures {
        samples: memories.len(),
        model_mib: med(&|m| m.mib(None, Some(BufferKind::Model))),
        kv_mib: med(&|m| m.mib(target, Some(BufferKind::Kv))),
        recurrent_mib: med(&|m| m.mib(target, Some(BufferKind::Recurrent))),
        compute_mib: med(&|m| m.mib(target, Some(BufferKind::Compute)) + m.mib(target, Some(BufferKind::Output))),
        speculative_context_mib: med(&speculative),
        total_mib: med(&|m| m.mib(None, None)),
        device_mib: med(&|m| m.device_mib()),
    })
}
