//! `abprof compare-traces --study DIR`: a study's traces compared as its summary compares them,
//! with the caller's rules (a floor above the summary's own comparison, as it judges the study).
use super::traces::{compare_study_traces, traced, TraceComparison};
use crate::study::evidence::Evidence;
use crate::trace::Rules;
use std::path::Path;

#[derive(Debug, thiserror::Error)]
pub(crate) enum StudyTracesError {
    #[error(
        "{root}: {found} traced variant(s) ({labels}), compare-traces --study needs at least two \
         (traces/LABEL/trace.json, written by `abprof trace --root {root}/traces`)"
    )]
    TooFew { root: String, found: usize, labels: String },
    #[error("{root}: traces not compared: {reason}")]
    NotCompared { root: String, reason: String },
}

/// `abprof compare-traces --study DIR`: the comparison the study's summary makes, with the
/// caller's rules and number of moved kernels.
pub(crate) fn compare_study_folder(dir: &Path, rules: &Rules, top: usize) -> anyhow::Result<TraceComparison> {
    let ev = Evidence::open(dir)?;
    // The summary's own comparison uses the built-in rules: this one is made with the caller's.
    let judged = super::judge_with(&ev, crate::study::StudyFacts::load(&ev)?, super::TraceReading::Skip)?;
    let (summary, file) = (&judged.summary, &judged.facts.file);
    let root = dir.display().to_string();
    let scales = super::trace_scales(&summary.variants);
    match compare_study_traces(&ev, file, &scales, summary.tokens, rules, top) {
        Some(TraceComparison::NotCompared { reason }) => Err(StudyTracesError::NotCompared { root, reason }.into()),
        Some(compared) => Ok(compared),
        None => {
            let found = traced(&ev.traces_dir(&file.kind), &scales);
            let labels = if found.is_empty() {
                "none".to_string()
            } else {
                found.iter().map(|v| v.label).collect::<Vec<_>>().join(", ")
            };
            Err(StudyTracesError::TooFew { root, found: found.len(), labels }.into())
        }
    }
}
