//! `--tokens`/`--workload`, `--samples`, `--ignore-eos`, `--pure-decode`, `--order-seed`: the
//! shape of a chat A/B study.
use crate::study::file::Workload;
use clap::Args;

/// Workload: output length, samples per variant, and how each request runs (ab, bisect).
#[derive(Args, Debug, Clone)]
pub(crate) struct WorkloadArgs {
    /// Output tokens per request.
    #[arg(long, value_name = "N", conflicts_with = "workload", value_parser = crate::bounds::u32_flag(2, crate::bounds::MAX_TOKENS))]
    pub(crate) tokens: Option<u32>,
    /// The workloads: screening (128 tokens), sustained (1024), trace-matched (512).
    #[arg(long, value_enum)]
    pub(crate) workload: Option<Workload>,
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
            (Some(t), _) => Ok(t),
            (None, Some(w)) => Ok(w.tokens()),
            (None, None) => anyhow::bail!("give --tokens N or --workload screening|sustained|trace-matched"),
        }
    }
}
