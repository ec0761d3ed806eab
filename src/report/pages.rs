//! The study's (and a sweep's) two files: the self-contained HTML page (charts drawn as inline
//! SVG) and the Markdown file with the same tables, rendered from a [`StudyView`] and written
//! atomically.
use super::study::markdown;
use super::Render;
use crate::study::evidence::Evidence;
use crate::study::StudyFacts;
use crate::summary::sweep::SweepSummary;
use crate::summary::view::StudyView;
use crate::summary::Summary;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// Where a report was written.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct ReportFiles {
    pub(crate) html: PathBuf,
    pub(crate) markdown: PathBuf,
}

impl Render for ReportFiles {
    fn text(&self) -> String {
        format!("report: {}\nreport (Markdown): {}\n", self.html.display(), self.markdown.display())
    }
}

#[derive(Debug, thiserror::Error)]
#[error("cannot write the report {path}: {source}")]
pub(crate) struct ReportWriteError {
    path: PathBuf,
    source: std::io::Error,
}

/// Renders `view` and writes both files (each atomically: a reader never sees half a page).
pub(crate) fn write(view: &StudyView, html: &Path, markdown: &Path) -> Result<ReportFiles, ReportWriteError> {
    let page = super::html::page(view);
    for (path, text) in [(html, page), (markdown, markdown::document(view))] {
        crate::atomic_file::write_atomic(path, text.as_bytes())
            .map_err(|e| ReportWriteError { path: path.into(), source: e })?;
    }
    Ok(ReportFiles { html: html.into(), markdown: markdown.into() })
}

/// A sweep's page and Markdown tables (docs/methodology.md §16), written like [`write`].
pub(crate) fn write_sweep(
    summary: &SweepSummary,
    html: &Path,
    markdown: &Path,
) -> Result<ReportFiles, ReportWriteError> {
    let md = format!(
        "## abprof sweep: {}\n\n{}\n",
        summary.variants.join(" vs "),
        super::render(summary, super::Format::Md)
    );
    for (path, text) in [(html, super::html::sweep::page(summary)), (markdown, md)] {
        crate::atomic_file::write_atomic(path, text.as_bytes())
            .map_err(|e| ReportWriteError { path: path.into(), source: e })?;
    }
    Ok(ReportFiles { html: html.into(), markdown: markdown.into() })
}

/// The report of a study that just ran, in its default place in the study folder (`report.html`
/// and `report.md`).
pub(crate) fn write_after_run(ev: &Evidence, summary: &Summary, facts: &StudyFacts) -> anyhow::Result<ReportFiles> {
    let view = StudyView::of(ev, summary.clone(), facts)?;
    Ok(write(&view, &ev.html_page(), &ev.markdown_page())?)
}
