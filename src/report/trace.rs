//! Kernel attribution as printed: plain-text tables of an attribution, a comparison and a study's
//! trace comparison, for the terminal; their JSON is the types' serde form.
use std::fmt::Write;

use serde::Serialize;

use super::table::{Column, Table, Text};
use super::Render;
use crate::summary::traces::{CategoryDelta, TraceComparison};
use crate::trace::attribute::{Attribution, CategoryLine};
use crate::trace::compare::Comparison;

/// An attribution as `abprof attribute` prints it: the text lists the `top` kernels; the JSON is
/// the attribution alone (every kernel), as it always was.
#[derive(Serialize)]
#[serde(transparent)]
pub(crate) struct AttributionView<'a> {
    pub(crate) attribution: &'a Attribution,
    #[serde(skip)]
    pub(crate) top: usize,
}

impl Render for AttributionView<'_> {
    fn text(&self) -> String {
        attribution_text(self.attribution, self.top)
    }
}

impl Render for Comparison {
    fn text(&self) -> String {
        comparison_text(self, &[])
    }
}

impl Render for TraceComparison {
    fn text(&self) -> String {
        match self {
            TraceComparison::Compared { comparison, scaled_by_trace_samples, category_deltas } => {
                let note = scaled_by_trace_samples.as_ref().map_or(String::new(), |s| {
                    format!(
                        "(scaled by each trace's own untraced samples: this study ran {} tokens, the traces {})\n",
                        s.study_tokens,
                        s.trace_tokens.map_or("an unknown number".into(), |t| t.to_string())
                    )
                });
                note + &comparison_text(comparison, category_deltas)
            }
            TraceComparison::NotCompared { reason } => format!("traces not compared: {reason}\n"),
        }
    }
}

/// Names longer than this are cut in tables (the JSON output keeps them whole).
const NAME_WIDTH: usize = 88;

fn cut(s: &str, width: usize) -> String {
    if s.chars().count() <= width {
        s.to_string()
    } else {
        let mut out: String = s.chars().take(width - 1).collect();
        out.push('…');
        out
    }
}

/// Left-aligns the first column and right-aligns the rest (numbers).
fn table(header: &[String], rows: &[Vec<String>]) -> String {
    table_aligned(header, rows, &[0])
}

fn plural(n: u64, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

/// Left-aligns the columns in `left` and right-aligns the rest (numbers).
fn table_aligned(header: &[String], rows: &[Vec<String>], left: &[usize]) -> String {
    text_of(&aligned(header, rows, left))
}

/// A table of `rows` under `header`, the columns in `left` text and the rest numbers.
fn aligned(header: &[String], rows: &[Vec<String>], left: &[usize]) -> Table {
    let columns = header
        .iter()
        .enumerate()
        .map(|(i, h)| if left.contains(&i) { Column::text(h) } else { Column::number(h) })
        .collect();
    let mut t = Table::new(columns);
    for r in rows {
        t.push_text(r.clone());
    }
    t
}

/// A trace table as the terminal shows it.
fn text_of(t: &Table) -> String {
    t.render(&Text::of(t, "", true))
}

fn pct(x: f64) -> String {
    format!("{:.1}%", x * 100.0)
}

fn signed(x: f64) -> String {
    format!("{x:+.3}")
}

fn category_table(lines: &[CategoryLine], per_token: bool) -> String {
    // Exclusive columns appear when busy time was computed and figures are per token.
    let exclusive = per_token && lines.iter().any(|c| c.exclusive_ms_per_token.is_some());
    let mut header: Vec<String> = if per_token {
        vec!["category".into(), "calls/token".into(), "ms/token".into(), "share".into()]
    } else {
        vec!["category".into(), "calls".into(), "ms".into(), "share".into()]
    };
    if exclusive {
        header.push("exclusive ms/token".into());
        header.push("of busy".into());
    }
    let exclusive_cells = |c: &CategoryLine| -> Vec<String> {
        if !exclusive {
            return Vec::new();
        }
        vec![
            c.exclusive_ms_per_token.map_or("-".into(), |x| format!("{x:.4}")),
            c.exclusive_share.map_or("-".into(), pct),
        ]
    };
    let mut rows: Vec<Vec<String>> = lines
        .iter()
        .map(|c| {
            let mut row = match (c.calls_per_token, c.ms_per_token) {
                (Some(cpt), Some(mpt)) if per_token => {
                    vec![c.category.clone(), format!("{cpt:.1}"), format!("{mpt:.4}"), pct(c.share)]
                }
                _ => vec![c.category.clone(), c.calls.to_string(), format!("{:.4}", c.ms), pct(c.share)],
            };
            row.extend(exclusive_cells(c));
            row
        })
        .collect();
    let calls: u64 = lines.iter().map(|c| c.calls).sum();
    let ms: f64 = lines.iter().map(|c| c.ms).sum();
    let cpt: f64 = lines.iter().filter_map(|c| c.calls_per_token).sum();
    let mpt: f64 = lines.iter().filter_map(|c| c.ms_per_token).sum();
    let mut total = if per_token {
        vec!["total".into(), format!("{cpt:.1}"), format!("{mpt:.4}"), pct(1.0)]
    } else {
        vec!["total".into(), calls.to_string(), format!("{ms:.4}"), pct(1.0)]
    };
    if exclusive {
        let busy: f64 = lines.iter().filter_map(|c| c.exclusive_ms_per_token).sum();
        total.push(format!("{busy:.4}"));
        total.push(pct(1.0));
    }
    rows.push(total);
    table(&header, &rows)
}

/// Which lanes were the draft context's (docs/methodology.md §10.2), in decode.
fn lanes_line(l: &crate::trace::lanes::SpeculationLanes) -> String {
    let list = |lanes: &[crate::trace::lanes::LaneLine]| {
        lanes
            .iter()
            .map(|x| format!("device {} stream {} ({}, {:.1} ms)", x.device, x.stream, plural(x.calls, "kernel"), x.ms))
            .collect::<Vec<_>>()
            .join(", ")
    };
    format!(
        "lanes    {}: the draft context ran on {}, the target on {} (the busiest lane of each device); \
         categories and kernels marked (draft) are the draft's\n",
        l.speculation,
        list(&l.draft),
        list(&l.target)
    )
}

pub(crate) fn attribution_text(a: &Attribution, top: usize) -> String {
    let mut s = String::new();
    let per_token = a.per_token_divisor.is_some();
    let _ = writeln!(s, "trace    {}", a.trace);
    let _ = writeln!(s, "format   {}", a.format);
    let _ = writeln!(s, "rules    {}", a.rules);
    let _ = writeln!(
        s,
        "decode   [{}] {}",
        serde_json::to_value(a.window.method).unwrap_or_default().as_str().unwrap_or(""),
        a.window.description
    );
    for n in &a.window.notes {
        let _ = writeln!(s, "         note: {n}");
    }
    if let Some(l) = &a.speculation_lanes {
        s.push_str(&lanes_line(l));
    }
    s.push('\n');
    match (a.per_token_divisor, a.gpu_ms_per_token) {
        (Some(d), Some(g)) => {
            let _ = writeln!(
                s,
                "decode: {}, {:.3} ms of GPU kernel time over {} = {:.4} ms/token traced{}",
                plural(a.decode.calls, "kernel"),
                a.decode.ms,
                plural(d as u64, "token"),
                g,
                a.gpu_busy_ms_per_token.map_or(String::new(), |b| format!(", GPU busy {b:.4} ms/token"))
            );
            if a.gpu_busy_ms_per_token.is_none() {
                s.push_str(
                    "times are summed kernel durations; where kernels overlap (programmatic dependent launch on Hopper, \
                     several streams) --busy adds busy time and each kernel's exclusive share\n",
                );
            }
            if let Some(r) = a.overlap_ratio.filter(|r| *r > 1.001) {
                let _ = writeln!(
                    s,
                    "kernels overlap ({r:.2}x): \"exclusive\" gives each instant to the kernel that started first in its stream \
                     (a kernel launched early by programmatic dependent launch waits for its predecessor) and splits it \
                     evenly across streams"
                );
            }
        }
        _ => {
            let _ = writeln!(
                s,
                "decode: {}, {:.3} ms of GPU kernel time (output token count unknown: pass --tokens N for per-token figures)",
                plural(a.decode.calls, "kernel"),
                a.decode.ms
            );
        }
    }
    s.push_str(&category_table(&a.categories, per_token));
    other_phases(&mut s, a);
    top_kernels(&mut s, a, top);
    s
}

/// Prefill's categories, and the kernels before the request and after the last token.
fn other_phases(s: &mut String, a: &Attribution) {
    if a.prefill.calls > 0 {
        let _ =
            writeln!(s, "\nprefill: {}, {:.3} ms of GPU kernel time", plural(a.prefill.calls, "kernel"), a.prefill.ms);
        s.push_str(&category_table(&a.prefill_categories, false));
    }
    if a.before_prefill.calls > 0 {
        let _ = writeln!(
            s,
            "\nbefore the request (load, warmup): {}, {:.3} ms (not attributed)",
            plural(a.before_prefill.calls, "kernel"),
            a.before_prefill.ms
        );
    }
    if a.after_decode.calls > 0 {
        let _ = writeln!(
            s,
            "after the last token: {}, {:.3} ms (not attributed)",
            plural(a.after_decode.calls, "kernel"),
            a.after_decode.ms
        );
    }
}

/// The decode's top kernels, then the kernels no rule matched.
fn top_kernels(s: &mut String, a: &Attribution, top: usize) {
    let per_token = a.per_token_divisor.is_some();
    let _ = writeln!(s, "\ntop kernels in decode");
    let exclusive = per_token && a.kernels.iter().any(|k| k.exclusive_ms_per_token.is_some());
    let mut header: Vec<String> =
        vec!["kernel".into(), "calls".into(), if per_token { "ms/token".into() } else { "ms".into() }, "share".into()];
    if exclusive {
        header.push("exclusive ms/token".into());
    }
    header.push("category".into());
    let rows: Vec<Vec<String>> = a
        .kernels
        .iter()
        .take(top)
        .map(|k| {
            let mut row = vec![
                cut(&k.name, NAME_WIDTH),
                k.calls.to_string(),
                format!("{:.4}", k.ms_per_token.unwrap_or(k.ms)),
                pct(k.share),
            ];
            if exclusive {
                row.push(k.exclusive_ms_per_token.map_or("-".into(), |x| format!("{x:.4}")));
            }
            row.push(if k.matched { k.category.clone() } else { "(unmatched)".into() });
            row
        })
        .collect();
    let category_column = header.len() - 1;
    s.push_str(&table_aligned(&header, &rows, &[0, category_column]));

    if a.unmatched.is_empty() {
        let _ = writeln!(s, "\nevery kernel matched a rule");
    } else {
        let _ = writeln!(
            s,
            "\nunmatched kernels (all phases, most time first; counted as \"other\" — add rules with --rules):"
        );
        let header: Vec<String> = vec!["kernel".into(), "calls".into(), "ms".into()];
        let rows: Vec<Vec<String>> = a
            .unmatched
            .iter()
            .map(|k| vec![cut(&k.name, NAME_WIDTH), k.calls.to_string(), format!("{:.4}", k.ms)])
            .collect();
        s.push_str(&table(&header, &rows));
    }
}

/// Kernel sum over busy time above which the report notes that kernels overlap.
const OVERLAP_NOTE: f64 = 1.15;

/// `deltas` (one per category, with intervals across traced samples) adds an interval and a
/// verdict beside each candidate's delta; empty, the table reads as with one traced sample.
pub(crate) fn comparison_text(c: &Comparison, deltas: &[CategoryDelta]) -> String {
    let mut s = String::new();
    traced_variants(&mut s, c);
    categories_text(&mut s, c, deltas);
    if !c.moved_kernels.is_empty() {
        moved_kernels_text(&mut s, c);
    }
    s
}

/// Each traced variant: what was measured, what the trace saw, and where kernels overlap.
fn traced_variants(s: &mut String, c: &Comparison) {
    for (i, v) in c.variants.iter().enumerate() {
        // With several traced samples: how many, and what the tracer cost decode.
        let sampled = if v.traced_samples > 1 {
            let overhead = match (v.traced_decode_ms_per_token, v.tracer_overhead_pct) {
                (Some(t), Some(p)) => format!(", traced decode {t:.4} ms/token: tracer overhead {p:+.1}%"),
                _ => ", tracer overhead unknown (no traced decode time recorded)".into(),
            };
            format!("; {} traced samples (medians){overhead}", v.traced_samples)
        } else {
            String::new()
        };
        let _ = writeln!(
            s,
            "{}{}: measured {:.4} ms/token ({}); traced GPU {}{}; decode by {}; {}{sampled}",
            v.label,
            if i == 0 { " (baseline)" } else { "" },
            v.measured_ms_per_token,
            v.measured_from,
            v.traced_gpu_ms_per_token
                .map_or("n/a (token count unknown)".into(), |g| format!("{g:.4} ms/token (kernel sum)")),
            v.gpu_busy_ms_per_token.map_or(String::new(), |b| {
                let overlap = v.traced_gpu_ms_per_token.is_some_and(|sum| sum > b * 1.001);
                format!(", GPU busy {b:.4} ms/token{}", if overlap { " (union: kernels overlap)" } else { "" })
            }),
            serde_json::to_value(v.window_method).unwrap_or_default().as_str().unwrap_or(""),
            v.trace
        );
    }
    let overlaps: Vec<String> = c
        .variants
        .iter()
        .filter_map(|v| match (v.traced_gpu_ms_per_token, v.gpu_busy_ms_per_token) {
            (Some(sum), Some(busy)) if busy > 0.0 && sum / busy > OVERLAP_NOTE => {
                Some(format!("{} {:.2}x", v.label, sum / busy))
            }
            _ => None,
        })
        .collect();
    if !overlaps.is_empty() {
        let _ = writeln!(
            s,
            "note: decode kernels overlap (kernel sum / GPU busy: {}); shares are of GPU busy time, each instant \
             given to the kernel that started first in its stream (programmatic dependent launch: a kernel \
             launched early waits for its predecessor) and split evenly across streams",
            overlaps.join(", ")
        );
    }
}

/// The categories' ms/token per variant, the measured total and the unattributed rest, with each
/// delta's interval and verdict where several traced samples give one (§10.1).
fn categories_text(s: &mut String, c: &Comparison, deltas: &[CategoryDelta]) {
    s.push_str("\nms/token per category = share of the variant's GPU busy time in decode (exclusive) x its measured ms/token\n");
    let with_ci = !deltas.is_empty();
    if with_ci {
        s.push_str(
            "(medians over traced samples; 95% interval of each delta by the smoothed bootstrap across them; \
             a verdict needs 3 traced samples a side and a Holm-adjusted p below 5% across the categories, \
             docs/methodology.md §10.1)\n",
        );
    }
    s.push('\n');
    s.push_str(&text_of(&comparison_categories(c, deltas)));
    s.push_str(
        "(unattributed = launch gaps and host work; the scaled categories above already include it in proportion)\n",
    );
    if with_ci {
        for (i, v) in c.variants.iter().enumerate().skip(1) {
            let kept = crate::summary::traces::survivors(deltas, i);
            let _ = writeln!(
                s,
                "{}: {} of {} categories changed after Holm across them{}",
                v.label,
                kept.len(),
                deltas.len(),
                if kept.is_empty() { String::new() } else { format!(": {}", kept.join(", ")) }
            );
        }
    }
}

/// Each category's ms/token per variant, each candidate's delta and share of it (with its 95%
/// interval and verdict where the study traced several samples, docs/methodology.md §10.1), then
/// the measured total and the unattributed rest: the comparison's table in every format
/// (`compare-traces`, `summarize`, the report).
pub(crate) fn comparison_categories(c: &Comparison, deltas: &[CategoryDelta]) -> Table {
    let with_ci = !deltas.is_empty();
    let mut header: Vec<String> = vec!["category".into(), c.variants[0].label.clone()];
    for v in &c.variants[1..] {
        header.push(v.label.clone());
        header.push(format!("delta {}", v.label));
        header.push("share of delta".into());
        if with_ci {
            header.push("95% CI".into());
            header.push("verdict".into());
        }
    }
    let mut rows = category_rows(c, deltas);
    rows.extend(total_rows(c, with_ci));
    aligned(&header, &rows, &[0])
}

fn category_rows(c: &Comparison, deltas: &[CategoryDelta]) -> Vec<Vec<String>> {
    let with_ci = !deltas.is_empty();
    c.categories
        .iter()
        .map(|r| {
            let mut row = vec![r.category.clone(), format!("{:.4}", r.ms_per_token[0])];
            let delta = deltas.iter().find(|d| d.category == r.category);
            for i in 1..c.variants.len() {
                row.push(format!("{:.4}", r.ms_per_token[i]));
                row.push(signed(r.delta[i]));
                row.push(r.share_of_delta[i].map_or("-".into(), pct));
                if with_ci {
                    let ci = delta.and_then(|d| d.ci.get(i).copied().flatten());
                    row.push(ci.map_or("-".into(), |ci| format!("[{}, {}]", signed(ci.lo), signed(ci.hi))));
                    let verdict = delta.and_then(|d| d.verdict.get(i).copied().flatten());
                    row.push(verdict.map_or("-".into(), |v| v.word().to_string()));
                }
            }
            row
        })
        .collect()
}

/// The measured total and the unattributed rest (measured − GPU busy), per variant.
fn total_rows(c: &Comparison, with_ci: bool) -> [Vec<String>; 2] {
    // Totals have no interval of their own here: the study's summary gives the measured one.
    let blank = |row: &mut Vec<String>| {
        if with_ci {
            row.extend(["".to_string(), "".to_string()]);
        }
    };
    let mut total = vec!["measured total".into(), format!("{:.4}", c.variants[0].measured_ms_per_token)];
    for (i, v) in c.variants.iter().enumerate().skip(1) {
        total.push(format!("{:.4}", v.measured_ms_per_token));
        total.push(signed(c.measured_delta[i]));
        total.push(if c.measured_delta[i].abs() > 1e-9 { pct(1.0) } else { "-".into() });
        blank(&mut total);
    }
    let mut unattributed = vec![
        "unattributed (measured - GPU busy)".into(),
        c.variants[0].unattributed_ms_per_token.map_or("n/a".into(), |u| format!("{u:.4}")),
    ];
    for (i, v) in c.variants.iter().enumerate().skip(1) {
        unattributed.push(v.unattributed_ms_per_token.map_or("n/a".into(), |u| format!("{u:.4}")));
        unattributed.push(c.unattributed_delta[i].map_or("n/a".into(), signed));
        unattributed.push(
            c.unattributed_delta[i]
                .filter(|_| c.measured_delta[i].abs() > 1e-9)
                .map_or("-".into(), |d| pct(d / c.measured_delta[i])),
        );
        blank(&mut unattributed);
    }
    [total, unattributed]
}

/// The kernels whose ms/token moved most, matched across variants by function name, in every
/// format.
pub(crate) fn moved_kernels(c: &Comparison) -> Table {
    let mut header: Vec<String> = vec!["kernel".into(), "category".into(), c.variants[0].label.clone()];
    for v in &c.variants[1..] {
        header.push(v.label.clone());
        header.push(format!("delta {}", v.label));
    }
    let mut rows = Vec::new();
    for k in &c.moved_kernels {
        let mut row = vec![k.kernel.clone(), k.category.clone(), format!("{:.4}", k.ms_per_token[0])];
        for i in 1..c.variants.len() {
            row.push(format!("{:.4}", k.ms_per_token[i]));
            row.push(signed(k.delta[i]));
        }
        rows.push(row);
    }
    aligned(&header, &rows, &[0, 1])
}

/// The kernels that moved most, matched by function name, and the instantiations that differ.
fn moved_kernels_text(s: &mut String, c: &Comparison) {
    {
        s.push_str("\ntop moved kernels (matched across variants by function name)\n");
        s.push_str(&text_of(&moved_kernels(c)));
        let differing: Vec<_> = c.moved_kernels.iter().filter(|k| k.names.iter().any(|n| *n != k.names[0])).collect();
        if !differing.is_empty() {
            s.push_str("\ninstantiations that differ between variants (template arguments kept; most time first):\n");
        }
        for k in differing {
            let _ = writeln!(s, "{}", k.kernel);
            for (v, name) in c.variants.iter().zip(&k.names) {
                let _ = writeln!(
                    s,
                    "  {}: {}",
                    v.label,
                    name.as_deref().map_or("(absent)".to_string(), |n| cut(n, NAME_WIDTH))
                );
            }
        }
    }
}

impl Render for crate::summary::capture::CapturedTraces {
    fn text(&self) -> String {
        let mut o = String::new();
        let mut line = String::new();
        for t in &self.traces {
            let _ = writeln!(
                o,
                "{}: {} (decode window {}; untraced median {} ms/token at {} tokens)",
                t.label,
                t.trace.display(),
                if t.decode_window { "recorded" } else { "missing" },
                t.untraced_median_ms_per_token.map_or("—".into(), |v| format!("{v:.3}")),
                t.tokens
            );
            if let (Some(n), Some(r)) = (t.dispatches_per_token, &t.reference) {
                let _ = writeln!(
                    o,
                    "  decode dispatches per token: {n:.1}, {:.1}% of the reference's {:.1} ({}; a complete trace holds at least {:.0}%)",
                    100.0 * n / r.per_token,
                    r.per_token,
                    r.from,
                    100.0 * crate::trace::complete::REFERENCE_RATIO
                );
            } else if let Some(n) = t.dispatches_per_token {
                let _ = writeln!(o, "  decode dispatches per token: {n:.1} (the reference)");
            }
            line.push_str(&format!(" --variant {}={}", t.label, t.folder.display()));
        }
        let _ = writeln!(o, "compare with: abprof compare-traces{line}");
        if let Some(c) = &self.comparison {
            let _ = writeln!(o, "\nkernel attribution across the traced samples:");
            o.push_str(&c.text());
        }
        o
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::summary::stats::{DeltaCi, Verdict};
    use crate::trace::compare::{CategoryRow, ShareBasis, VariantColumn};
    use crate::trace::window::WindowMethod;

    fn comparison(traced_samples: usize) -> Comparison {
        let column = |label: &str, ms: f64, traced: f64| VariantColumn {
            label: label.into(),
            trace: format!("/t/{label}"),
            window_method: WindowMethod::CudaGraph,
            output_tokens: Some(512),
            measured_ms_per_token: ms,
            measured_from: "median of 3 untraced runs at 512 tokens".into(),
            traced_gpu_ms_per_token: Some(ms),
            gpu_busy_ms_per_token: Some(ms * 0.9),
            unattributed_ms_per_token: Some(ms * 0.1),
            traced_samples,
            traced_decode_ms_per_token: Some(traced),
            tracer_overhead_pct: Some(100.0 * (traced / ms - 1.0)),
            measured_samples: Vec::new(),
        };
        Comparison {
            share_basis: ShareBasis::Exclusive,
            variants: vec![column("f16", 3.28, 3.5), column("q8_0", 4.84, 5.1)],
            categories: vec![CategoryRow {
                category: "flash attention".into(),
                ms_per_token: vec![0.66, 2.2],
                delta: vec![0.0, 1.54],
                share_of_delta: vec![None, Some(0.98)],
                shares: vec![vec![0.2; traced_samples], vec![0.45; traced_samples]],
            }],
            measured_delta: vec![0.0, 1.56],
            unattributed_delta: vec![Some(0.0), Some(0.01)],
            moved_kernels: Vec::new(),
        }
    }

    #[test]
    fn several_traced_samples_show_intervals_verdicts_and_the_tracers_overhead() {
        let ci = DeltaCi { lo: 1.5, hi: 1.6, confidence: 0.95, resamples: 10_000, seed: 42 };
        let deltas = vec![CategoryDelta {
            category: "flash attention".into(),
            ci: vec![None, Some(ci)],
            verdict: vec![None, Some(Verdict::Slower)],
            p_holm: vec![None, Some(0.001)],
        }];
        let text = comparison_text(&comparison(3), &deltas);
        assert!(text.contains("1 of 1 categories changed after Holm across them: flash attention"), "{text}");
        let row = text.lines().find(|l| l.starts_with("flash attention")).unwrap();
        assert!(row.contains("[+1.500, +1.600]") && row.ends_with("slower"), "{row}");
        assert!(text.contains("95% CI") && text.contains("3 traced samples (medians)"), "{text}");
        assert!(text.contains("q8_0: measured") && text.contains("tracer overhead +5.4%"), "{text}");
    }

    #[test]
    fn one_traced_sample_reads_as_before() {
        let text = comparison_text(&comparison(1), &[]);
        assert!(!text.contains("95% CI") && !text.contains("tracer overhead") && !text.contains("medians"), "{text}");
    }
}
