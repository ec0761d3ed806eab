//! `abprof report DIR`: the study's HTML page and Markdown tables, rebuilt from its evidence.
use super::args::OutputArgs;
use crate::report::emit;
use crate::report::pages::{write, write_sweep};
use crate::study::Shape;
use crate::summary::sweep::summarize_sweep;
use crate::summary::view::StudyView;
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
    let folder = crate::study::open(&a.dir)?;
    let html = a.html.unwrap_or_else(|| folder.evidence.html_page());
    let md = a.md.unwrap_or_else(|| folder.evidence.markdown_page());
    let files = if folder.shape == Shape::Sweep {
        write_sweep(&summarize_sweep(&folder.evidence)?, &html, &md)?
    } else {
        let ev = &folder.evidence;
        {
            let judged = crate::summary::judge(ev)?;
            write(&StudyView::of(ev, judged.summary, &judged.facts)?, &html, &md)?
        }
    };
    emit(&files, a.output.format());
    Ok(0)
}
