//! After `abprof trace`: each trace is scaled by the untraced samples the rulebook accepted
//! (docs/methodology.md §10), and what was captured is listed for the report.
use super::traces::{compared, TraceComparison};
use super::{Metric, Summary};
use crate::study::evidence::Evidence;
use crate::study::trace_capture::attach_untraced;
use crate::study::trace_folder::{trace_inputs, TraceFolder};
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
    /// Its first trace's decode dispatches per generated token, where the study names a
    /// reference (`--dispatch-reference`), and that share of the reference's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) dispatches_per_token: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) reference: Option<crate::trace::manifest::DispatchReference>,
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
    let mut attached = attach_untraced(&ev.root, &labels, tokens, &per_variant)?;
    let reference = reference_label(ev)?;
    let counts = match &reference {
        Some(label) => attach_reference(&mut attached, label)?,
        None => vec![None; attached.len()],
    };
    let comparison = (attached.len() >= 2 && attached.iter().any(|(_, m)| !m.more_traces.is_empty()))
        .then(|| compare_captured(&attached));
    for ((folder, m), dispatches_per_token) in attached.into_iter().zip(counts) {
        traces.push(CapturedTrace {
            label: m.label.clone(),
            trace: folder.join(&m.trace_file),
            decode_window: m.decode_window.is_some(),
            untraced_median_ms_per_token: m.untraced.as_ref().map(|u| u.median_ms_per_token),
            tokens,
            dispatches_per_token,
            reference: m.dispatch_reference.clone(),
            folder,
        });
    }
    Ok(CapturedTraces { traces, comparison })
}

/// The study's `--dispatch-reference` label, if it named one.
fn reference_label(ev: &Evidence) -> Result<Option<String>> {
    let facts = crate::study::StudyFacts::load(ev)?;
    Ok(facts.file.kind.trace().and_then(|t| t.dispatch_reference.clone()))
}

/// Counts each variant's first trace's decode dispatches per token, and writes the reference
/// variant's count (docs/methodology.md §10 "complete traces") into every other variant's
/// manifest, where the comparison checks it. The reference's own trace must pass the layer
/// floor; a variant whose trace cannot be read keeps no count (the comparison names why).
fn attach_reference(attached: &mut [(PathBuf, crate::trace::TraceManifest)], label: &str) -> Result<Vec<Option<f64>>> {
    let rules = crate::trace::Rules::builtin();
    let count = |folder: &PathBuf, m: &crate::trace::TraceManifest| -> Result<f64> {
        let input = crate::trace::TraceInput { trace_path: folder.join(&m.trace_file), manifest: Some(m.clone()) };
        let a = crate::trace::analyze_with(&input, &rules, None, false)?;
        crate::trace::complete::dispatches_per_token(&a)
            .ok_or_else(|| anyhow::anyhow!("{}: no decode window to count dispatches in", input.trace_path.display()))
    };
    let Some((folder, m)) = attached.iter().find(|(_, m)| m.label == label) else {
        bail!("--dispatch-reference {label}: no traced variant is labelled so");
    };
    let per_token = count(folder, m)?;
    let env: Vec<String> = crate::variant::Variant::parse(&m.variant)
        .map(|v| v.env.iter().map(|(k, v)| format!("{k}={v}")).collect())
        .unwrap_or_default();
    let from = if env.is_empty() {
        format!("the traced samples of {label}")
    } else {
        format!("the traced samples of {label} (env {})", env.join(" "))
    };
    let reference = crate::trace::manifest::DispatchReference { per_token, from };
    let mut counts = Vec::new();
    for (folder, m) in attached.iter_mut() {
        // The reference's trace was scanned above; each other one once, before its manifest
        // names the reference (the comparison checks it against that).
        if m.label == label {
            counts.push(Some(per_token));
            continue;
        }
        // A manifest written by an earlier summary already names a reference: counted without it.
        m.dispatch_reference = None;
        counts.push(count(folder, m).ok());
        m.dispatch_reference = Some(reference.clone());
        TraceFolder::at(folder).write_manifest(m)?;
    }
    Ok(counts)
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
