//! The end of a trace study: each trace scaled by the untraced samples the rulebook accepted,
//! the history, the report.
use super::ending::Ending;
use super::epilogue::{announce, close, closing_of, record, Finishing, AFTER_SIGNAL_IN_RECORD};
use crate::report::emit;
use crate::report::pages::write_after_run;
use crate::study::file::StudyFile;
use crate::study::trace_capture::TraceStudy;
use crate::summary::capture::scale_traces;
use crate::summary::judge;
use crate::summary::study_judge::summary_judge;
use anyhow::Result;
use std::path::Path;

pub(super) fn finish(file: &StudyFile, root: &Path, resume: bool, how: Finishing) -> Result<i32> {
    let mut config = TraceStudy::new(file, Some(summary_judge()))?;
    let mut history = how.open_history()?;
    let run = crate::study::run_study_with(file, root, resume, &mut config)?;
    let judged = judge(&run.evidence)?;
    let summary = &judged.summary;
    run.evidence.write_study_summary(summary)?;
    let mut ending = Ending::of_run(&run);
    let after_signal = format!("; restore hooks ran; `abprof trace --resume {}` completes the capture", root.display());
    if !ending.completed() {
        // The traces of an interrupted capture scale nothing yet: the resume finishes them.
        return Ok(close(&ending, closing_of(&run.evidence, after_signal)));
    }
    // Written first: when no untraced sample can scale a trace, the report shows the rejections.
    let report = write_after_run(&run.evidence, summary, &judged.facts);
    emit(&scale_traces(&run.evidence, summary, file.tokens)?, how.format);
    let in_record =
        record(history.as_mut(), root, how.format, || Ok(crate::history::StudyRecord::of_study(root, &judged)));
    // The report's paths come last, after everything else the command printed.
    ending.report_failed = announce(&report, how.format);
    // The answer of the untraced samples comes last (docs/commands.md).
    crate::report::summary::emit_answer(summary, how.format);
    ending.interrupted_by = in_record;
    let after_signal = if in_record.is_some() { AFTER_SIGNAL_IN_RECORD.to_string() } else { after_signal };
    Ok(close(&ending, closing_of(&run.evidence, after_signal)))
}
