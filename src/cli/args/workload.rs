//! `--tokens`/`--workload`, `--samples`, `--ignore-eos`, `--pure-decode`, `--order-seed`: the
//! shape of a chat A/B study.
use crate::study::file::Workload;
use clap::Args;

/// The `--workload` names, for messages.
pub(crate) const WORKLOADS: &str = "screening|sustained|trace-matched|mtp-yardstick|soak|speed-bench";

/// Workload: output length, samples per variant, and how each request runs (ab, bisect).
#[derive(Args, Debug, Clone)]
pub(crate) struct WorkloadArgs {
    /// Output tokens per request (with --workload, only the sequences' may be replaced:
    /// mtp-yardstick's 192, soak's 512, speed-bench's 256).
    #[arg(long, value_name = "N", value_parser = crate::bounds::u32_flag(2, crate::bounds::MAX_TOKENS))]
    pub(crate) tokens: Option<u32>,
    /// The workloads: screening (128 tokens), sustained (1024), trace-matched (512), mtp-yardstick
    /// (nine fixed prompts of 192 tokens each, one cold server per sample: docs/methodology.md §4.1),
    /// soak (the request --soak-requests times back to back to one cold server per sample, 512
    /// tokens unless --tokens: §4.2), speed-bench (one prompt per SPEED-Bench category, eleven of
    /// 256 tokens each, one cold server per sample: §4.3).
    #[arg(long, value_enum)]
    pub(crate) workload: Option<Workload>,
    /// Requests per sample of --workload soak (2 to 1000; default 20).
    #[arg(long, value_name = "N", value_parser = crate::bounds::u32_flag(2, crate::bounds::MAX_SOAK_REQUESTS))]
    pub(crate) soak_requests: Option<u32>,
    /// Cold samples per variant (1 to 10000, docs/methodology.md §20).
    #[arg(long, default_value_t = 3, value_parser = crate::bounds::u32_flag(1, crate::bounds::MAX_SAMPLES))]
    pub(crate) samples: u32,
    /// Send llama-server's ignore_eos so every request decodes exactly N tokens.
    #[arg(long)]
    pub(crate) ignore_eos: bool,
    /// Warm the prompt cache, then time decode with the full-length KV in place.
    #[arg(long)]
    pub(crate) pure_decode: bool,
    /// Shuffle within each balanced block with this seed (recorded in plan.json).
    #[arg(long, value_name = "SEED")]
    pub(crate) order_seed: Option<u64>,
}

impl WorkloadArgs {
    /// Output tokens per request, from --tokens or --workload.
    pub(crate) fn tokens(&self) -> anyhow::Result<u32> {
        match (self.tokens, self.workload) {
            (Some(_), Some(w)) if w.fixes_tokens() => Err(Self::both(w)),
            (Some(t), _) => Ok(t),
            (None, Some(w)) => Ok(w.tokens()),
            (None, None) => crate::refusal::refuse!("give --tokens N or --workload {WORKLOADS}"),
        }
    }

    /// `--tokens` beside a workload that is its output length: a usage error (exit 2), as clap's
    /// own conflicts.
    pub(crate) fn both(w: Workload) -> anyhow::Error {
        let name = serde_json::to_value(w).ok().and_then(|v| v.as_str().map(String::from)).unwrap_or_default();
        crate::refusal::Refusal::of(format!(
            "--workload {name} means {} output tokens: drop --tokens or --workload",
            w.tokens()
        ))
        .into()
    }
}
