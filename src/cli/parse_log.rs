//! `abprof parse-log LOG`: the timing-block parser on its own.
use anyhow::{Context, Result};
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct ParseLogArgs {
    /// A llama-server log (--log-file, stderr, or --log-jsonl stdout).
    pub log: PathBuf,
    /// Print the block as JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(a: ParseLogArgs) -> Result<i32> {
    let text = std::fs::read_to_string(&a.log).with_context(|| format!("cannot read {}", a.log.display()))?;
    let b = crate::server::log::single_timing_block(&text).with_context(|| a.log.display().to_string())?;
    if a.json {
        let mut v = serde_json::to_value(&b)?;
        v["decode_tps_n_minus_1"] = serde_json::json!(b.decode_tps_n_minus_1());
        v["decode_ms_per_token"] = serde_json::json!(b.decode_ms_per_token());
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        println!("prompt eval   {:.2} ms / {} tokens = {:.2} tok/s", b.prompt_ms, b.prompt_tokens, b.prefill_tps());
        println!(
            "eval          {:.2} ms / {} tokens = {:.2} tok/s (N−1: {:.2} tok/s, {:.3} ms/token)",
            b.eval_ms,
            b.eval_tokens,
            b.decode_tps(),
            b.decode_tps_n_minus_1(),
            b.decode_ms_per_token()
        );
        if let Some(t) = b.total_ms {
            println!("total         {t:.2} ms{}", b.total_tokens.map_or(String::new(), |n| format!(" / {n} tokens")));
        }
        if let Some(d) = &b.draft {
            println!("draft         {:.5} ({} accepted / {} generated)", d.rate, d.accepted, d.generated);
        }
    }
    Ok(0)
}
