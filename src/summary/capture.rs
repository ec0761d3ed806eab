//! After `abprof trace`: each trace is scaled by the untraced samples the rulebook accepted
//! (docs/methodology.md §10), and what was captured is listed for the report.
use super::traces::{compared, TraceComparison};
use super::{Metric, Summary};
use crate::study::evidence::Evidence;
use crate::study::trace_capture::attach_untraced;
use crate::study::trace_folder::trace_inputs;
use crate::trace::compare::{compare_specs, VariantSpec};
use anyhow::{bail, Result};
use serde::Serialize;
use std::path::PathBuf;

/// One variant's trace, ready to attribute.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct CapturedTrace {
    pub(crate) label: String,
    pub(crate) folder: PathBuf,
    pub(crate) trace: PathBuf,
    pub(crate) decode_window: bool,
    pub(crate) untraced_median_ms_per_token: Option<f64>,
    pub(crate) tokens: u32,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct CapturedTraces {
    pub(crate) traces: Vec<CapturedTrace>,
    /// With several traced samples per variant and at least two variants: the comparison, each
    /// category's delta with its interval (what `abprof compare-traces` prints for these folders).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) comparison: Option<TraceComparison>,
}

/// Writes each manifest's untraced ms/token from the accepted samples of `summary`; a variant
/// with none is an error naming the rules that rejected its samples.
pub(crate) fn scale_traces(ev: &Evidence, summary: &Summary, tokens: u32) -> Result<CapturedTraces> {
    let per_variant: Vec<Vec<f64>> = summary
        .variants
        .iter()
        .map(|v| {
            v.metric(Metric::ServerDecodeTps).map_or(Vec::new(), |m| m.runs.iter().map(|tps| 1000.0 / tps).collect())
        })
        .collect();
    for (v, ms) in summary.variants.iter().zip(&per_variant) {
        if ms.is_empty() {
            let why: Vec<String> = summary
                .rejected
                .iter()
                .filter(|r| r.label == v.label)
                .flat_map(|r| r.reasons.iter().map(|x| format!("{}: {}", x.rule, x.reason)))
                .collect();
            bail!(
                "no accepted untraced sample of {}: the trace cannot be scaled ({}); see {}",
                v.label,
                if why.is_empty() { "none finished".into() } else { why.join("; ") },
                ev.summary_file().display()
            );
        }
    }
    let labels: Vec<String> = summary.variants.iter().map(|v| v.label.clone()).collect();
    let mut traces = Vec::new();
    let attached = attach_untraced(&ev.root, &labels, tokens, &per_variant)?;
    let comparison = (attached.len() >= 2 && attached.iter().any(|(_, m)| !m.more_traces.is_empty()))
        .then(|| compare_captured(&attached));
    for (folder, m) in attached {
        traces.push(CapturedTrace {
            label: m.label.clone(),
            trace: folder.join(&m.trace_file),
            decode_window: m.decode_window.is_some(),
            untraced_median_ms_per_token: m.untraced.as_ref().map(|u| u.median_ms_per_token),
            tokens,
            folder,
        });
    }
    Ok(CapturedTraces { traces, comparison })
}

/// The captured folders compared with the builtin rules, each scaled by its untraced samples.
fn compare_captured(attached: &[(PathBuf, crate::trace::TraceManifest)]) -> TraceComparison {
    let specs: Vec<VariantSpec> = attached
        .iter()
        .map(|(folder, m)| VariantSpec { label: m.label.clone(), trace: folder.clone(), ms_per_token: None })
        .collect();
    let rules = crate::trace::Rules::builtin();
    match compare_specs(&specs, &trace_inputs, &rules, None, super::traces::SUMMARY_TOP) {
        Ok(c) => compared(c, None),
        Err(e) => TraceComparison::NotCompared { reason: e.to_string() },
    }
}
