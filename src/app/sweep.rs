//! The end of a sweep: every point's summary and page in its folder, the sweep's summary and
//! page, each complete point in the history (docs/methodology.md §16).
use super::ending::Ending;
use super::epilogue::{announce, close, record, Closing, Finishing};
use crate::report::emit;
use crate::report::pages::{write_after_run, write_sweep};
use crate::study::file::StudyFile;
use crate::study::run_sweep;
use crate::summary::study_judge::summary_judge;
use crate::summary::sweep::summarize_sweep;
use anyhow::Result;
use std::path::Path;

pub(super) fn finish(file: &StudyFile, root: &Path, resume: bool, how: Finishing) -> Result<i32> {
    let mut history = how.open_history()?;
    let run = run_sweep(file, root, resume, Some(summary_judge()))?;
    let summary = summarize_sweep(&run.evidence, &StudyFile::load(&run.evidence.study_toml())?)?;
    let format = how.format;
    let mut ending = Ending::of(&run.outcome, run.restored);
    summary.keep_point_summaries()?;
    for (point, j) in &summary.point_summaries {
        // Each point's own page (its samples, telemetry, evidence); the sweep's page links them.
        if let Err(e) = write_after_run(point, &j.summary, &j.facts) {
            eprintln!("abprof: error: {}", crate::report::one_line(&e));
            ending.report_failed = true;
        }
    }
    run.evidence.write_sweep_summary(&summary)?;
    emit(&summary, format);
    let mut in_record = None;
    if ending.completed() {
        // Every point is a whole study: each lands in the history once the sweep is complete.
        for (point, j) in &summary.point_summaries {
            let dir = &point.root;
            let signal = record(history.as_mut(), dir, format, || Ok(crate::history::StudyRecord::of_study(dir, j)));
            in_record = in_record.or(signal);
        }
    }
    let page = write_sweep(&summary, &run.evidence.html_page(), &run.evidence.markdown_page());
    ending.report_failed |= announce(&page.map_err(anyhow::Error::from), format);
    if ending.completed() && !ending.host_unrestored {
        let empty: Vec<String> = summary
            .point_summaries
            .iter()
            .flat_map(|(point, j)| {
                j.summary
                    .variants
                    .iter()
                    .filter(|v| v.accepted == 0)
                    .map(move |v| format!("{} at {}", v.label, point.root.display()))
            })
            .collect();
        if !empty.is_empty() {
            super::ending::say_nothing_to_compare(&empty.join(", "), "in that point's summary");
            ending.nothing_to_compare = true;
        }
    }
    let closing = Closing {
        hooks: "the restore/verify hooks of a sweep point",
        isolation_record: format!("isolation.json in {}/points/*", root.display()),
        after_signal: match in_record {
            Some(_) => super::epilogue::AFTER_SIGNAL_IN_RECORD.to_string(),
            None => format!(
                " after {} new samples; restore hooks ran; `abprof ab --resume {}` keeps the finished points and completes the sweep",
                run.samples_taken,
                root.display()
            ),
        },
    };
    ending.interrupted_by = ending.interrupted_by.or(in_record);
    Ok(close(&ending, closing))
}
