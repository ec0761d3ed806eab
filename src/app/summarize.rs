//! `abprof summarize DIR`: the summary of a study's (or a sweep's) evidence folder, rebuilt from
//! disk, printed, then kept in the folder.
use crate::report::{emit, Format};
use crate::study::Shape;
use anyhow::Result;
use std::path::PathBuf;

pub(crate) struct SummarizeRequest {
    pub(crate) dir: PathBuf,
    pub(crate) format: Format,
    /// Every table of the text summary, not only the answer's (`--full`).
    pub(crate) full: bool,
}

pub(crate) fn summarize(r: SummarizeRequest) -> Result<i32> {
    let folder = crate::study::open(&r.dir)?;
    if folder.shape == Shape::Sweep {
        let s = crate::summary::sweep::summarize_sweep(&folder.evidence, &folder.file)?;
        // Printed first: a folder that cannot be written (read-only, a full disk) still shows
        // its summary, and one line says what was not kept.
        emit(&s, r.format);
        let written = s.keep_point_summaries().and_then(|()| folder.evidence.write_sweep_summary(&s));
        return Ok(not_kept(written.map_err(Into::into)));
    }
    let judged = crate::summary::judge_folder(&folder)?;
    let ev = folder.evidence;
    let s = judged.summary.clone();
    if r.format == Format::Md {
        // One Markdown document per study: the report's (report.md), the folder's evidence in it.
        let view = crate::summary::view::StudyView::of(&ev, judged.summary, &judged.facts)?;
        emit(&crate::report::study::markdown::Document(&view), Format::Md);
    } else {
        if r.full {
            emit(&crate::report::summary::Full(&s), r.format);
        } else {
            emit(&s, r.format);
        }
        crate::report::summary::emit_answer(&s, r.format);
    }
    Ok(not_kept(ev.write_study_summary(&s).map_err(Into::into)))
}

/// The exit status after the summary was printed: 0 when it was also kept in the folder, else 1
/// with one line naming what could not be written.
fn not_kept(written: anyhow::Result<()>) -> i32 {
    match written {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("abprof: the summary above is complete but was not kept in the folder: {e}: make the folder writable (or free space) and run summarize again to keep it");
            1
        }
    }
}
