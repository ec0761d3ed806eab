//! `abprof report DIR`: the study's HTML page and Markdown tables, rebuilt from its evidence.
use super::args::OutputArgs;
use anyhow::Result;
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub(crate) struct ReportArgs {
    /// The study's evidence folder (the --root of `abprof ab` or `abprof trace`), or a sweep's.
    pub(crate) dir: PathBuf,
    /// Where the self-contained HTML page goes (default: DIR/report.html).
    #[arg(long, value_name = "FILE")]
    pub(crate) html: Option<PathBuf>,
    /// Where the Markdown tables go (default: DIR/report.md).
    #[arg(long, value_name = "FILE")]
    pub(crate) md: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) output: OutputArgs,
}

pub(crate) fn run(a: ReportArgs) -> Result<i32> {
    crate::app::report(crate::app::ReportRequest { dir: a.dir, html: a.html, md: a.md, format: a.output.format() })
}
