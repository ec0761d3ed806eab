//! The end of an A/B study: its summary, the history, the report, and the gate.
use super::ending::{Ending, GateEnding};
use super::epilogue::{announce, close, closing_of, record, Finishing, AFTER_SIGNAL_IN_RECORD};
use crate::report::emit;
use crate::report::pages::write_after_run;
use crate::report::summary::emit_answer;
use crate::study::file::StudyFile;
use crate::study::run_ab;
use crate::summary::gate::Gate;
use crate::summary::rules::Rule;
use crate::summary::study_judge::summary_judge;
use crate::summary::{judge, Summary};
use anyhow::Result;
use std::path::Path;

pub(super) fn finish(file: &StudyFile, root: &Path, resume: bool, how: Finishing) -> Result<i32> {
    let mut history = how.open_history()?;
    let run = run_ab(file, root, resume, Some(summary_judge()))?;
    let judged = judge(&run.evidence)?;
    let summary = &judged.summary;
    run.evidence.write_study_summary(summary)?;
    emit(summary, how.format);
    let mut ending = Ending::of_run(&run);
    let mut in_record = None;
    if ending.completed() {
        in_record =
            record(history.as_mut(), root, how.format, || Ok(crate::history::StudyRecord::of_study(root, &judged)));
    }
    // A report that cannot be written loses nothing measured: say why, and exit 1 at the end.
    ending.report_failed = announce(&write_after_run(&run.evidence, summary, &judged.facts), how.format);
    // The answer comes last, after the report's path (docs/commands.md).
    emit_answer(summary, how.format);
    // A failed restore rejects every sample (isolation-restored): its line says it all.
    if ending.completed() && !ending.host_unrestored {
        ending.nothing_to_compare = says_nothing_to_compare(summary);
        if !ending.nothing_to_compare && !ending.report_failed {
            ending.gate = how.gate.map_or(GateEnding::Passed, |g| judge_gate(&g, summary));
        }
    }
    let after_signal = match in_record {
        Some(_) => AFTER_SIGNAL_IN_RECORD.to_string(),
        None => format!(
            " after {} new samples; restore hooks ran; `abprof ab --resume {}` completes the study",
            run.samples_taken,
            root.display()
        ),
    };
    ending.interrupted_by = ending.interrupted_by.or(in_record);
    Ok(close(&ending, closing_of(&run.evidence, after_signal)))
}

/// Whether a variant has no accepted sample, saying so (and why, when the host was busy).
fn says_nothing_to_compare(summary: &Summary) -> bool {
    let empty: Vec<&str> = summary.variants.iter().filter(|v| v.accepted == 0).map(|v| v.label.as_str()).collect();
    if empty.is_empty() {
        return false;
    }
    super::ending::say_nothing_to_compare(&format!("variant {}", empty.join(", ")), "above");
    if all_other_workload(summary) {
        eprintln!("abprof: every sample was rejected other-workload (other processes used the CPU during its request): rerun on a quiet host (`abprof doctor` names what else runs), or raise --foreign-cpu-max PCT (docs/methodology.md §7.7) if that load is part of the host you mean to measure");
    }
    true
}

/// Every rejected sample broke the other-workload rule (and there is at least one): the study
/// measured a busy host, not the variants.
fn all_other_workload(s: &Summary) -> bool {
    !s.rejected.is_empty() && s.rejected.iter().all(|r| r.reasons.iter().any(|x| x.rule == Rule::OtherWorkload))
}

/// The gate's finding, each failure or the candidates it cannot judge on one line.
fn judge_gate(g: &Gate, summary: &Summary) -> GateEnding {
    let failures = g.failures(summary);
    if !failures.is_empty() {
        for x in &failures {
            eprintln!("abprof: gate failed: {}", x.line(g));
        }
        return GateEnding::Failed;
    }
    let unjudged = g.unjudged(summary);
    if !unjudged.is_empty() {
        eprintln!("abprof: error: {}", g.unjudged_line(summary, &unjudged));
        return GateEnding::Unjudged;
    }
    GateEnding::Passed
}
