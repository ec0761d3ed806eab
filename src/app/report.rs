//! `abprof report DIR`: a study's (or a sweep's) HTML page and report.md, rebuilt from its
//! evidence and written where asked.
use crate::report::pages::{write, write_sweep};
use crate::report::{emit, Format};
use crate::study::Shape;
use crate::summary::sweep::summarize_sweep;
use crate::summary::view::StudyView;
use anyhow::Result;
use std::path::PathBuf;

pub(crate) struct ReportRequest {
    pub(crate) dir: PathBuf,
    /// Where the page goes (default: DIR/report.html).
    pub(crate) html: Option<PathBuf>,
    /// Where report.md goes (default: DIR/report.md).
    pub(crate) md: Option<PathBuf>,
    pub(crate) format: Format,
}

pub(crate) fn report(r: ReportRequest) -> Result<i32> {
    let folder = crate::study::open(&r.dir)?;
    let html = r.html.unwrap_or_else(|| folder.evidence.html_page());
    let md = r.md.unwrap_or_else(|| folder.evidence.markdown_page());
    let files = if folder.shape == Shape::Sweep {
        write_sweep(&summarize_sweep(&folder.evidence, &folder.file)?, &html, &md)?
    } else {
        let ev = &folder.evidence;
        let judged = crate::summary::judge_folder(&folder)?;
        write(&StudyView::of(ev, judged.summary, &judged.facts)?, &html, &md)?
    };
    emit(&files, r.format);
    Ok(0)
}
