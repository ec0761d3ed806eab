//! Kernel attribution beside a study's medians: the study's `traces/<label>/` folders (`abprof
//! trace --root DIR/traces`) compared in this study's measured ms/token. The summary and
//! `abprof compare-traces --study` both go through [`compare_study_traces`].
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::stats::{
    bootstrap_scaled_delta_ci, holm, scaled_delta_p, DeltaCi, Scaled, Verdict, DEFAULT_RESAMPLES, DEFAULT_SEED,
};
use crate::study::evidence::Evidence;
use crate::study::file::StudyFile;
use crate::study::trace_folder::{trace_inputs, TraceFolder};
use crate::trace::compare::{compare, load_variant, Comparison, VariantSpec};
use crate::trace::Rules;

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
        /// Each category's delta with its interval across traced samples; empty unless some
        /// variant has more than one (`abprof trace --traced N`).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        category_deltas: Vec<CategoryDelta>,
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

/// A category's change against the baseline, with the 95% interval of the difference of medians
/// across traced samples and its verdict (docs/methodology.md §10.1).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct CategoryDelta {
    pub(crate) category: String,
    /// Per variant; `None` for the baseline and where a side has fewer than 2 traced samples.
    pub(crate) ci: Vec<Option<DeltaCi>>,
    /// Per variant; `None` for the baseline. "slower": the category costs more ms/token, its
    /// Holm-adjusted p-value below 5% across the comparison's categories and its interval
    /// excluding 0.
    pub(crate) verdict: Vec<Option<Verdict>>,
    /// Per variant: the Holm-adjusted p-value across the comparison's categories; `None` for the
    /// baseline and where a side has fewer than 3 traced samples (absent before the adjustment).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) p_holm: Vec<Option<f64>>,
}

/// The family-wise level of a comparison's category verdicts (Holm across its categories).
pub(crate) const CATEGORY_ALPHA: f64 = 0.05;

/// The categories whose verdict for variant `i` survived the adjustment (a difference).
pub(crate) fn survivors(deltas: &[CategoryDelta], i: usize) -> Vec<&str> {
    deltas
        .iter()
        .filter(|d| matches!(d.verdict.get(i).copied().flatten(), Some(Verdict::Faster | Verdict::Slower)))
        .map(|d| d.category.as_str())
        .collect()
}

/// Every category's interval, or none when no variant has more than one traced sample (then
/// there is nothing to resample, and the comparison reads as it always did).
pub(crate) fn category_deltas(c: &Comparison) -> Vec<CategoryDelta> {
    if c.variants.iter().all(|v| v.traced_samples < 2) {
        return Vec::new();
    }
    // Each variant's scale: its untraced samples, or the one figure it was given.
    let scales: Vec<Vec<f64>> = c
        .variants
        .iter()
        .map(|v| if v.measured_samples.is_empty() { vec![v.measured_ms_per_token] } else { v.measured_samples.clone() })
        .collect();
    let rows: Vec<(&str, Vec<Scaled<'_>>)> = c
        .categories
        .iter()
        .map(|row| {
            let sides = (0..c.variants.len())
                .map(|i| Scaled { shares: row.shares.get(i).map_or(&[][..], |s| s.as_slice()), scale: &scales[i] })
                .collect();
            (row.category.as_str(), sides)
        })
        .collect();
    judge_categories(&rows, DEFAULT_RESAMPLES)
}

/// Each category's interval, p-value and verdict: `rows` are the categories, each with one side
/// per variant (the baseline first).
pub(crate) fn judge_categories(rows: &[(&str, Vec<Scaled<'_>>)], resamples: usize) -> Vec<CategoryDelta> {
    let variants = rows.first().map_or(0, |r| r.1.len());
    let mut deltas: Vec<CategoryDelta> = rows
        .iter()
        .map(|(category, sides)| {
            let ci: Vec<Option<DeltaCi>> = (0..variants)
                .map(|i| {
                    (i > 0)
                        .then(|| bootstrap_scaled_delta_ci(sides[0], sides[i], resamples, DEFAULT_SEED, 0.95))
                        .flatten()
                })
                .collect();
            let p_holm = (0..variants).map(|i| (i > 0).then(|| scaled_delta_p(sides[0], sides[i])).flatten()).collect();
            CategoryDelta { category: category.to_string(), ci, verdict: Vec::new(), p_holm }
        })
        .collect();
    // Holm across the categories of each candidate: some category of 8 would otherwise be called
    // changed in many A/A comparisons (docs/methodology.md §10.1).
    for i in 1..variants {
        let tested: Vec<usize> = (0..deltas.len()).filter(|&k| deltas[k].p_holm[i].is_some()).collect();
        let adjusted = holm(&tested.iter().map(|&k| deltas[k].p_holm[i].unwrap_or(1.0)).collect::<Vec<_>>());
        for (&k, a) in tested.iter().zip(adjusted) {
            deltas[k].p_holm[i] = Some(a);
        }
    }
    for d in &mut deltas {
        d.verdict = (0..variants)
            .map(|i| {
                (i > 0).then(|| match (DeltaCi::verdict_for_cost(d.ci[i].as_ref()), d.p_holm[i]) {
                    (Verdict::TooFewSamples, _) => Verdict::TooFewSamples,
                    (v, Some(p)) if p < CATEGORY_ALPHA => v,
                    _ => Verdict::NoClearDifference,
                })
            })
            .collect();
    }
    deltas
}

/// A comparison with its intervals, as every command that compares traces prints it.
pub(crate) fn compared(comparison: Comparison, scaled_by_trace_samples: Option<LengthMismatch>) -> TraceComparison {
    let category_deltas = category_deltas(&comparison);
    TraceComparison::Compared { comparison, scaled_by_trace_samples, category_deltas }
}

/// What scales one variant's trace in a study's comparison (docs/methodology.md §14): this study's
/// median ms/token and its accepted samples' decode rates.
pub(crate) struct StudyScale<'a> {
    pub(crate) label: &'a str,
    pub(crate) ms_per_token: Option<f64>,
    pub(crate) decode_tps: &'a [f64],
}

/// Variants of the study that have an `abprof trace` folder under `dir`.
pub(crate) fn traced<'a, 'b>(dir: &Path, variants: &'b [StudyScale<'a>]) -> Vec<&'b StudyScale<'a>> {
    variants.iter().filter(|v| TraceFolder::of(dir, v.label).has_manifest()).collect()
}

/// Compares the study's traces, scaled by this study's median ms/token when the study ran at the
/// traces' output length (else by the traces' own untraced samples, and says so; a variant with
/// no accepted sample also falls back to its trace's samples, which its `measured_from` names).
/// `None` when fewer than two variants were traced.
pub(crate) fn compare_study_traces(
    ev: &Evidence,
    file: &StudyFile,
    variants: &[StudyScale<'_>],
    study_tokens: u32,
    rules: &Rules,
    top: usize,
) -> Option<TraceComparison> {
    compare_traces_in(&ev.traces_dir(&file.kind), variants, study_tokens, rules, top)
}

/// [`compare_study_traces`] of the `LABEL/trace.json` folders under `dir`.
fn compare_traces_in(
    dir: &Path,
    variants: &[StudyScale<'_>],
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
        let capture = TraceFolder::of(dir, v.label);
        let trace_tokens = capture.read_manifest().ok().map(|m| m.output_tokens);
        let same_length = trace_tokens == Some(study_tokens);
        let ms = if same_length { v.ms_per_token } else { None };
        if !same_length {
            scaled_by_trace_samples = Some(LengthMismatch { study_tokens, trace_tokens });
        }
        let spec = VariantSpec { label: v.label.to_string(), trace: capture.dir().to_path_buf(), ms_per_token: ms };
        match load_variant(&spec, &trace_inputs, rules, None) {
            Ok(mut i) => {
                if ms.is_some() {
                    i.measured_from = format!("this study's median at {study_tokens} tokens");
                    i.measured_samples = v.decode_tps.iter().map(|tps| 1000.0 / tps).collect();
                }
                inputs.push(i)
            }
            Err(e) => return Some(TraceComparison::NotCompared { reason: e.to_string() }),
        }
    }
    Some(match compare(&inputs, top) {
        Ok(comparison) => compared(comparison, scaled_by_trace_samples),
        Err(e) => TraceComparison::NotCompared { reason: e.to_string() },
    })
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
            traced_samples: 1,
            traced_decode_ms_per_token: None,
            tracer_overhead_pct: None,
            measured_samples: Vec::new(),
        };
        Comparison {
            share_basis: ShareBasis::Exclusive,
            variants: vec![column("f16", 15.444), column("q8_0", 16.1)],
            categories: vec![CategoryRow {
                category: "attention".into(),
                ms_per_token: vec![3.0, 3.5],
                delta: vec![0.0, 0.5],
                share_of_delta: vec![None, Some(0.76)],
                shares: vec![vec![3.0 / 15.444], vec![3.5 / 16.1]],
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
        let json = round_trip(&compared(comparison(), None));
        assert_eq!(json["status"], "compared");
        // Readers of summary.json find the comparison's own fields under `traces`, as before.
        for (k, v) in plain.as_object().unwrap() {
            assert_eq!(&json[k], v, "{k}");
        }
        assert!(json.get("scaled_by_trace_samples").is_none());

        let mismatch = LengthMismatch { study_tokens: 512, trace_tokens: Some(128) };
        let json = round_trip(&compared(comparison(), Some(mismatch)));
        assert_eq!(json["scaled_by_trace_samples"], serde_json::json!({"study_tokens": 512, "trace_tokens": 128}));
    }

    /// One traced sample per variant: no interval, and the JSON reads as it did before `--traced N`.
    #[test]
    fn one_traced_sample_adds_nothing() {
        let json = serde_json::to_value(compared(comparison(), None)).unwrap();
        assert!(json.get("category_deltas").is_none());
        assert!(json["categories"][0].get("shares").is_none());
        assert!(json["variants"][0].get("traced_samples").is_none());
    }

    /// The H200 traces (traces/README.md) hold the last four decode steps of KV f16 and q8_0;
    /// each step, attributed on its own, stands for one traced sample. Flash attention's move is
    /// real: its interval excludes 0.
    #[test]
    fn flash_attentions_move_has_an_interval_excluding_zero_across_real_decode_steps() {
        let f16 = steps_as_samples("traces/nsys-h200-kv-f16-4steps.sqlite", "f16", 3.2797);
        let q8 = steps_as_samples("traces/nsys-h200-kv-q8_0-4steps.sqlite", "q8_0", 4.8444);
        assert_eq!((f16.attributions.len(), q8.attributions.len()), (4, 4));
        let c = compare(&[f16, q8], 10).unwrap();
        assert_eq!(c.variants[1].traced_samples, 4);
        let deltas = category_deltas(&c);
        let of = |cat: &str| deltas.iter().find(|d| d.category == cat).unwrap_or_else(|| panic!("{cat}"));
        let fa = of("flash attention");
        let ci = fa.ci[1].unwrap();
        let row = c.categories.iter().find(|r| r.category == "flash attention").unwrap();
        assert!(ci.lo > 0.0 && ci.lo <= row.delta[1] && row.delta[1] <= ci.hi, "{ci:?} around {}", row.delta[1]);
        assert!(row.delta[1] > 1.0, "q8_0 attention costs over a ms/token more: {}", row.delta[1]);
        assert_eq!(fa.verdict[1], Some(Verdict::Slower));
        assert_eq!((fa.ci[0], fa.verdict[0]), (None, None));
        // Seeded: the same intervals every time.
        assert_eq!(category_deltas(&c)[0].ci, deltas[0].ci);
        // The intervals are as wide as the steps' spread: each one covers its own point estimate.
        for (d, r) in deltas.iter().zip(&c.categories) {
            let ci = d.ci[1].unwrap();
            assert!(
                ci.lo <= r.delta[1] + 1e-12 && r.delta[1] <= ci.hi + 1e-12,
                "{}: {ci:?} {}",
                d.category,
                r.delta[1]
            );
        }
    }

    /// A variant whose decode steps are attributed one by one, scaled by `ms` (its untraced
    /// median ms/token): decode steps are split at the three longest GPU idle gaps of the graph
    /// burst.
    fn steps_as_samples(trace: &str, label: &str, ms: f64) -> crate::trace::compare::VariantInput {
        use crate::trace::attribute::{attribute, TraceFacts};
        use crate::trace::phase::PhaseWindows;
        use crate::trace::window::WindowChoice;
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(trace);
        let source = crate::trace::detect::open_trace(&path).unwrap();
        let (lo, hi) = source.graph_span().unwrap().unwrap();
        let mut kernels: Vec<(i64, i64)> = Vec::new();
        source.for_each_by_start(&mut |d| kernels.push((d.start, d.end))).unwrap();
        kernels.retain(|k| (lo..=hi).contains(&k.0));
        // (idle gap before kernel i, i)
        let mut gaps: Vec<(i64, usize)> = Vec::new();
        let mut busy_until = i64::MIN;
        for (i, &(start, end)) in kernels.iter().enumerate() {
            if i > 0 {
                gaps.push((start - busy_until, i));
            }
            busy_until = busy_until.max(end);
        }
        gaps.sort_by(|a, b| b.cmp(a));
        let mut cuts: Vec<usize> = gaps[..3].iter().map(|g| g.1).collect();
        cuts.sort();
        let bounds: Vec<usize> = std::iter::once(0).chain(cuts).chain(std::iter::once(kernels.len())).collect();
        let rules = crate::trace::Rules::builtin();
        let attributions = bounds
            .windows(2)
            .map(|w| {
                let (start, end) = (kernels[w[0]].0, kernels[w[1] - 1].0);
                let windows = PhaseWindows { decode_start: start, decode_end: end, prefill_start: None };
                let agg = source.aggregate(Some(&windows)).unwrap();
                let overlap = crate::trace::overlap::split(source.as_ref(), Some(start), Some(end)).unwrap();
                let window = WindowChoice {
                    method: crate::trace::window::WindowMethod::CudaGraph,
                    description: "one decode step".into(),
                    decode_start_ns: Some(start),
                    decode_end_ns: Some(end),
                    notes: Vec::new(),
                };
                // One decode step: output tokens 2, so per token = per step.
                let facts = TraceFacts {
                    trace: trace.into(),
                    format: source.describe(),
                    output_tokens: Some(2),
                    speculation_lanes: None,
                };
                attribute(&agg, &rules, window, facts, Some(&overlap))
            })
            .collect();
        crate::trace::compare::VariantInput {
            label: label.into(),
            attributions,
            measured_ms_per_token: ms,
            measured_from: "the fixture's untraced median".into(),
            measured_samples: vec![ms],
            traced_ms_per_token: Vec::new(),
        }
    }

    #[test]
    fn a_reason_round_trips() {
        let json = round_trip(&TraceComparison::NotCompared { reason: "variant f16: no kernels".into() });
        assert_eq!(json, serde_json::json!({"status": "not-compared", "reason": "variant f16: no kernels"}));
    }

    #[test]
    fn another_share_basis_is_refused() {
        let mut json = serde_json::to_value(compared(comparison(), None)).unwrap();
        json["share_basis"] = "summed".into();
        let e = serde_json::from_value::<TraceComparison>(json).unwrap_err().to_string();
        assert!(e.contains("summed"), "{e}");
    }
}
