//! `abprof report DIR`: the study's HTML page and Markdown tables, rebuilt from its evidence.
use super::args::OutputArgs;
use crate::report::emit;
use crate::report::study::{write, HTML_FILE, MARKDOWN_FILE};
use crate::summary::view::StudyView;
use anyhow::Result;
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub(crate) struct ReportArgs {
    /// The study's evidence folder (the --root of `abprof ab` or `abprof trace`).
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
    let html = a.html.unwrap_or_else(|| a.dir.join(HTML_FILE));
    let md = a.md.unwrap_or_else(|| a.dir.join(MARKDOWN_FILE));
    let view = StudyView::load(&a.dir)?;
    emit(&write(&view, &html, &md)?, a.output.format());
    Ok(0)
}
