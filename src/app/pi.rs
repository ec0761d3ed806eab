//! The end of a Pi study: pi.json built once from the evidence (a resume reads it the same way),
//! each sample's view beside it as it lands, the history.
use super::ending::Ending;
use super::epilogue::{close, closing_of, record, Finishing};
use crate::report::emit;
use crate::report::pi::{sample_line, PiOutcome};
use crate::study::file::{PiSection, StudyFile};
use crate::study::pi::{pi_version, OnSample, PiStudy};
use crate::study::StudyFacts;
use crate::summary::pi::{pi_report, pi_sample, save_pi_report, save_pi_sample, PiRunFacts};
use anyhow::Result;
use std::path::Path;

pub(super) fn finish(file: &StudyFile, section: &PiSection, root: &Path, resume: bool, how: Finishing) -> Result<i32> {
    let version = Some(pi_version(&section.pi_bin)?);
    let mut history = how.open_history()?;
    let quiet = how.format != crate::report::Format::Text;
    let on_sample: OnSample = Box::new(|ctx, slot, sample| {
        if let Some(view) = pi_sample(ctx.evidence, ctx.plan, slot, sample, None) {
            if !quiet {
                eprintln!("{}", sample_line(&view));
            }
            save_pi_sample(&view)?;
        }
        Ok(())
    });
    let stall = std::time::Duration::from_secs(file.stall_timeout_s);
    let run = crate::study::run_study_with(file, root, resume, &mut PiStudy::new(section, stall, on_sample))?;
    let mut ending = Ending::of_run(&run);
    let facts = PiRunFacts { pi_version: version, restored: Some(run.restored), interrupted_by: ending.interrupted_by };
    // What the study ran on, read once: for pi.json and for its history record.
    let study = StudyFacts::load(&run.evidence)?;
    let report = pi_report(&run.evidence, &study, facts)?;
    save_pi_report(&run.evidence, &report)?;
    emit(&PiOutcome { report: &report, evidence: root }, how.format);
    let mut in_record = None;
    if ending.completed() {
        in_record = record(history.as_mut(), root, how.format, || {
            Ok(crate::history::StudyRecord::of_pi(root, &report, &study))
        });
    }
    ending.samples_failed = report.samples.len() != report.order.len() || report.samples.iter().any(|s| !s.valid);
    let after_signal = match in_record {
        Some(_) => super::epilogue::AFTER_SIGNAL_IN_RECORD.to_string(),
        None => format!(
            " after {} new samples; the sample in flight was discarded; restore hooks ran; `abprof pi --resume {}` completes the study",
            run.samples_taken,
            root.display()
        ),
    };
    ending.interrupted_by = ending.interrupted_by.or(in_record);
    Ok(close(&ending, closing_of(&run.evidence, after_signal)))
}
