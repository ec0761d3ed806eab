//! The kernel attribution of the traces beside the study (docs/methodology.md §10): each traced
//! variant's measured and traced ms/token, the categories with their change, the kernels that
//! moved most; or why the traces were not compared, or how to get them.
use super::source::Source;
use crate::report::section::Section;
use crate::report::table::{Column, Table};
use crate::report::{num, trace};
use crate::summary::traces::TraceComparison;
use crate::trace::compare::Comparison;

pub(crate) fn sections(src: &Source) -> Vec<Section> {
    let s = src.summary;
    match src.traces() {
        Some(TraceComparison::Compared { comparison, scaled_by_trace_samples, category_deltas }) => {
            let scaled = scaled_by_trace_samples.as_ref().map(|m| {
                format!(
                    "the study ran {} output tokens, the traces {}: each trace is scaled by its own untraced samples",
                    m.study_tokens,
                    m.trace_tokens.map_or("an unknown number of".into(), |t| t.to_string())
                )
            });
            let mut out = vec![Section::new(
                "kernel attribution: each trace's decode time split into kernel categories by share of GPU busy time, \
                 scaled to the variant's measured (untraced) ms/token (docs/methodology.md §10)",
            )
            .id("traced-variants")
            .notes(scaled)
            .table(traced_variants(comparison))];
            out.push(
                Section::new("kernel categories (ms/token)")
                    .id("categories")
                    .table(trace::comparison_categories(comparison, category_deltas)),
            );
            if !comparison.moved_kernels.is_empty() {
                out.push(
                    Section::new("top moved kernels (ms/token, matched across variants by function name)")
                        .table(trace::moved_kernels(comparison)),
                );
            }
            out.push(Section::line(format!(
                "again with other rules or more kernels: abprof compare-traces --study {}",
                s.root
            )));
            out
        }
        Some(TraceComparison::NotCompared { reason }) => {
            vec![Section::line(format!("kernel attribution: traces not compared: {reason}"))]
        }
        None => Vec::new(),
    }
}

/// A study with no traces beside it: how to get its kernel attribution, once (with the verdicts;
/// the page has no kernel section without traces).
pub(crate) fn how_to_trace(src: &Source) -> Vec<Section> {
    let s = src.summary;
    // Attribution needs traces at this study's output length.
    if src.traces().is_some() || !s.variants.iter().any(|v| v.ms_per_token.is_some()) {
        return Vec::new();
    }
    vec![Section::line(format!(
        "kernel attribution: trace at the same output length with `abprof trace --root {root}/traces --tokens {} …`, then `abprof compare-traces --study {root}` scales each trace by this study's ms/token",
        s.tokens,
        root = s.root
    ))]
}

/// Each traced variant: the measured ms/token a trace is scaled to, and what the trace saw.
fn traced_variants(c: &Comparison) -> Table {
    let mut t = Table::new(vec![
        Column::text("variant"),
        Column::number("measured ms/token"),
        Column::text("measured from"),
        Column::number("traced GPU ms/token"),
        Column::number("GPU busy ms/token"),
        Column::number("unattributed"),
        Column::text("decode window"),
    ]);
    for v in &c.variants {
        t.push_text(vec![
            v.label.clone(),
            format!("{:.3}", v.measured_ms_per_token),
            v.measured_from.clone(),
            num(v.traced_gpu_ms_per_token, 3),
            num(v.gpu_busy_ms_per_token, 3),
            num(v.unattributed_ms_per_token, 3),
            format!("{:?}", v.window_method),
        ]);
    }
    t
}
