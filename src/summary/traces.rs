//! Kernel attribution beside a study's medians: the study's `traces/<label>/` folders (`abprof
//! trace --root DIR/traces`) compared in this study's measured ms/token. The summary and
//! `abprof compare-traces --study` both go through [`compare_study_traces`].
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::VariantSummary;
use crate::study::evidence::Evidence;
use crate::study::file::StudyFile;
use crate::trace::compare::{compare, load_variant, Comparison, VariantSpec};
use crate::trace::{Rules, TraceManifest};

/// How many moved kernels the summary lists.
pub(crate) const SUMMARY_TOP: usize = 10;

/// The study's traces compared, or why they could not be.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "kebab-case")]
pub(crate) enum TraceComparison {
    Compared {
        #[serde(flatten)]
        comparison: Comparison,
        /// Present when the study ran another output length than the traces, so each trace was
        /// scaled by its own untraced samples instead of this study's medians.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        scaled_by_trace_samples: Option<LengthMismatch>,
    },
    NotCompared {
        reason: String,
    },
}

/// The study's output length against the traces' (per-token cost grows with context).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct LengthMismatch {
    pub(crate) study_tokens: u32,
    pub(crate) trace_tokens: Option<u32>,
}

/// Where a study's traces are: an A/B study's under `traces/` (`abprof trace --root DIR/traces`);
/// an `abprof trace` study's beside the untraced samples that scale them.
fn traces_dir(ev: &Evidence, file: &StudyFile) -> PathBuf {
    if file.trace.is_some() {
        ev.root.clone()
    } else {
        ev.root.join("traces")
    }
}

/// Variants of the study that have an `abprof trace` folder under `dir`.
fn traced<'a>(dir: &Path, variants: &'a [VariantSummary]) -> Vec<&'a VariantSummary> {
    variants.iter().filter(|v| dir.join(&v.label).join("trace.json").is_file()).collect()
}

/// Compares the study's traces, scaled by this study's median ms/token when the study ran at the
/// traces' output length (else by the traces' own untraced samples, and says so; a variant with
/// no accepted sample also falls back to its trace's samples, which its `measured_from` names).
/// `None` when fewer than two variants were traced.
pub(crate) fn compare_study_traces(
    ev: &Evidence,
    file: &StudyFile,
    variants: &[VariantSummary],
    study_tokens: u32,
    rules: &Rules,
    top: usize,
) -> Option<TraceComparison> {
    compare_traces_in(&traces_dir(ev, file), variants, study_tokens, rules, top)
}

/// [`compare_study_traces`] of the `LABEL/trace.json` folders under `dir`.
fn compare_traces_in(
    dir: &Path,
    variants: &[VariantSummary],
    study_tokens: u32,
    rules: &Rules,
    top: usize,
) -> Option<TraceComparison> {
    let traced = traced(dir, variants);
    if traced.len() < 2 {
        return None;
    }
    let mut inputs = Vec::new();
    let mut scaled_by_trace_samples = None;
    for v in traced {
        let folder = dir.join(&v.label);
        let trace_tokens = TraceManifest::load(&folder).ok().map(|m| m.output_tokens);
        let same_length = trace_tokens == Some(study_tokens);
        let ms = if same_length { v.ms_per_token } else { None };
        if !same_length {
            scaled_by_trace_samples = Some(LengthMismatch { study_tokens, trace_tokens });
        }
        match load_variant(&VariantSpec { label: v.label.clone(), trace: folder, ms_per_token: ms }, rules, None) {
            Ok(mut i) => {
                if ms.is_some() {
                    i.measured_from = format!("this study's median at {study_tokens} tokens");
                }
                inputs.push(i)
            }
            Err(e) => return Some(TraceComparison::NotCompared { reason: e.to_string() }),
        }
    }
    Some(match compare(&inputs, top) {
        Ok(comparison) => TraceComparison::Compared { comparison, scaled_by_trace_samples },
        Err(e) => TraceComparison::NotCompared { reason: e.to_string() },
    })
}

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
    let judged = super::judge_with(&ev, super::TraceReading::Skip)?;
    let (summary, file) = (&judged.summary, &judged.facts.file);
    let root = dir.display().to_string();
    match compare_study_traces(&ev, file, &summary.variants, summary.tokens, rules, top) {
        Some(TraceComparison::NotCompared { reason }) => Err(StudyTracesError::NotCompared { root, reason }.into()),
        Some(compared) => Ok(compared),
        None => {
            let found = traced(&traces_dir(&ev, file), &summary.variants);
            let labels = if found.is_empty() {
                "none".to_string()
            } else {
                found.iter().map(|v| v.label.as_str()).collect::<Vec<_>>().join(", ")
            };
            Err(StudyTracesError::TooFew { root, found: found.len(), labels }.into())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::compare::{CategoryRow, MovedKernel, ShareBasis, VariantColumn};
    use crate::trace::window::WindowMethod;

    fn comparison() -> Comparison {
        let column = |label: &str, ms: f64| VariantColumn {
            label: label.into(),
            trace: format!("/t/{label}/trace.db"),
            window_method: WindowMethod::CudaGraph,
            output_tokens: Some(512),
            measured_ms_per_token: ms,
            measured_from: "this study's median at 512 tokens".into(),
            traced_gpu_ms_per_token: Some(ms * 1.1),
            gpu_busy_ms_per_token: Some(ms * 0.9),
            unattributed_ms_per_token: Some(ms * 0.1),
        };
        Comparison {
            share_basis: ShareBasis::Exclusive,
            variants: vec![column("f16", 15.444), column("q8_0", 16.1)],
            categories: vec![CategoryRow {
                category: "attention".into(),
                ms_per_token: vec![3.0, 3.5],
                delta: vec![0.0, 0.5],
                share_of_delta: vec![None, Some(0.76)],
            }],
            measured_delta: vec![0.0, 0.656],
            unattributed_delta: vec![Some(0.0), None],
            moved_kernels: vec![MovedKernel {
                kernel: "flash_attn_ext_f16".into(),
                category: "attention".into(),
                names: vec![Some("flash_attn_ext_f16<64>".into()), None],
                ms_per_token: vec![3.0, 0.0],
                delta: vec![0.0, -3.0],
            }],
        }
    }

    fn round_trip(t: &TraceComparison) -> serde_json::Value {
        let json = serde_json::to_value(t).unwrap();
        let back: TraceComparison = serde_json::from_value(json.clone()).unwrap();
        assert_eq!(serde_json::to_value(&back).unwrap(), json);
        json
    }

    #[test]
    fn a_comparison_round_trips_with_its_fields_at_the_top() {
        let plain = serde_json::to_value(comparison()).unwrap();
        let json = round_trip(&TraceComparison::Compared { comparison: comparison(), scaled_by_trace_samples: None });
        assert_eq!(json["status"], "compared");
        // Readers of summary.json find the comparison's own fields under `traces`, as before.
        for (k, v) in plain.as_object().unwrap() {
            assert_eq!(&json[k], v, "{k}");
        }
        assert!(json.get("scaled_by_trace_samples").is_none());

        let mismatch = LengthMismatch { study_tokens: 512, trace_tokens: Some(128) };
        let json = round_trip(&TraceComparison::Compared {
            comparison: comparison(),
            scaled_by_trace_samples: Some(mismatch),
        });
        assert_eq!(json["scaled_by_trace_samples"], serde_json::json!({"study_tokens": 512, "trace_tokens": 128}));
    }

    #[test]
    fn a_reason_round_trips() {
        let json = round_trip(&TraceComparison::NotCompared { reason: "variant f16: no kernels".into() });
        assert_eq!(json, serde_json::json!({"status": "not-compared", "reason": "variant f16: no kernels"}));
    }

    #[test]
    fn another_share_basis_is_refused() {
        let mut json =
            serde_json::to_value(TraceComparison::Compared { comparison: comparison(), scaled_by_trace_samples: None })
                .unwrap();
        json["share_basis"] = "summed".into();
        let e = serde_json::from_value::<TraceComparison>(json).unwrap_err().to_string();
        assert!(e.contains("summed"), "{e}");
    }
}
