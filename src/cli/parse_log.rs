//! `abprof parse-log LOG`: the timing-block parser on its own.
use super::args::OutputArgs;
use crate::report::emit;
use crate::report::timing_block::ParsedTimingBlock;
use anyhow::{Context, Result};
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub(crate) struct ParseLogArgs {
    /// A llama-server log (--log-file, stderr, --log-jsonl stdout, or a 2024 text or --log-format json log).
    pub(crate) log: PathBuf,
    #[command(flatten)]
    pub(crate) output: OutputArgs,
}

pub(crate) fn run(a: ParseLogArgs) -> Result<i32> {
    let text = crate::server::log::read_lossy(&a.log).with_context(|| format!("cannot read {}", a.log.display()))?;
    let b = crate::server::log::single_timing_block(&text).with_context(|| a.log.display().to_string())?;
    emit(&ParsedTimingBlock(&b), a.output.format());
    Ok(0)
}
