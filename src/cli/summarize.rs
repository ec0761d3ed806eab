//! `abprof summarize DIR`: the summary of a study's evidence folder, rebuilt from disk.
use super::args::OutputArgs;
use anyhow::Result;
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub(crate) struct SummarizeArgs {
    /// The study's (or sweep's) evidence folder (the --root of `abprof ab`).
    pub(crate) dir: PathBuf,
    /// Every table of the text summary: also the per-phase telemetry, the decode windows and
    /// the decode floor (report.md and the page always hold them).
    #[arg(long)]
    pub(crate) full: bool,
    #[command(flatten)]
    pub(crate) output: OutputArgs,
}

pub(crate) fn run(a: SummarizeArgs) -> Result<i32> {
    crate::app::summarize(crate::app::SummarizeRequest { dir: a.dir, format: a.output.format(), full: a.full })
}
