//! A study summary as docs/methodology.md §8 reports it: every run, mean, median, % change vs the
//! baseline with its confidence interval and verdict, then the context that makes the numbers
//! comparable.
use super::roofline::{bandwidth_line, byte_lines, grouped};
use super::table::{Column, Markup, Text};
use super::{metric_digits, num, Render, Table};
use crate::summary::stats::{ChangeCi, CiMethod};
use crate::summary::traces::TraceComparison;
use crate::summary::{Metric, Summary};
use serde::Serialize;
use std::fmt::Write;

/// One metric of one variant: the verdict table's row, built once per summary ([`verdict_lines`])
/// and shown by every format (the text, the `--format` table, the report's page and Markdown).
#[derive(Debug, Clone, Serialize)]
pub(crate) struct VerdictLine<'a> {
    pub(crate) metric: Metric,
    pub(crate) variant: &'a str,
    pub(crate) accepted: usize,
    pub(crate) planned: usize,
    /// Every accepted sample's value, at the metric's decimals.
    pub(crate) runs: String,
    pub(crate) mean: Option<f64>,
    pub(crate) median: Option<f64>,
    /// The per-sample noise: the accepted values' coefficient of variation, % (docs/methodology.md §8).
    pub(crate) cv_pct: Option<f64>,
    /// The estimate the interval is built on (docs/methodology.md §8).
    pub(crate) change_pct: Option<f64>,
    /// The ratio of medians, a secondary figure no verdict uses.
    pub(crate) median_change_pct: Option<f64>,
    pub(crate) ci_lo_pct: Option<f64>,
    pub(crate) ci_hi_pct: Option<f64>,
    pub(crate) verdict: &'static str,
    pub(crate) measures: Option<&'a str>,
    pub(crate) p_value: Option<f64>,
    pub(crate) ci_method: Option<CiMethod>,
    #[serde(skip)]
    pub(crate) ci: Option<ChangeCi>,
    /// The variant's median draft acceptance and its 95% interval, and the tokens one decode
    /// step yields: columns of the table only when some variant of the study drafted.
    pub(crate) acceptance_median: Option<f64>,
    pub(crate) acceptance_ci_lo: Option<f64>,
    pub(crate) acceptance_ci_hi: Option<f64>,
    pub(crate) tokens_per_step: Option<f64>,
    /// The variant's server memory (total and its MTP or draft context's, MiB): columns only when
    /// some variant's log sized its buffers.
    pub(crate) memory_total_mib: Option<f64>,
    pub(crate) memory_speculative_context_mib: Option<f64>,
    /// The MTP yardstick's aggregate block (§4.1): columns only in that workload.
    pub(crate) yardstick_acceptance_median: Option<f64>,
    pub(crate) yardstick_acceptance_ci_lo: Option<f64>,
    pub(crate) yardstick_acceptance_ci_hi: Option<f64>,
    pub(crate) yardstick_drafted_median: Option<f64>,
    pub(crate) yardstick_wall_ms_median: Option<f64>,
}

/// The verdict table's rows: every metric × variant that has the metric, metrics in
/// [`Metric::every`]'s order (an energy metric only where it was measured).
pub(crate) fn verdict_lines(s: &Summary) -> Vec<VerdictLine<'_>> {
    let mut lines = Vec::new();
    for m in Metric::every() {
        for v in &s.variants {
            let Some(ms) = v.metric(m) else { continue };
            let d = metric_digits(m);
            lines.push(VerdictLine {
                metric: m,
                variant: &v.label,
                accepted: v.accepted,
                planned: v.planned,
                runs: ms.runs.iter().map(|x| format!("{x:.d$}")).collect::<Vec<_>>().join(" "),
                mean: ms.mean,
                median: ms.median,
                cv_pct: crate::stats::cv_pct(&ms.runs),
                change_pct: ms.change_pct,
                median_change_pct: ms.median_change_pct,
                ci_lo_pct: ms.ci.map(|c| c.lo_pct),
                ci_hi_pct: ms.ci.map(|c| c.hi_pct),
                verdict: ms.verdict.map_or("baseline", |v| m.verdict_word(v)),
                measures: ms.measures.as_deref(),
                p_value: ms.ci.and_then(|c| c.p_value),
                ci_method: ms.ci.map(|c| c.method),
                ci: ms.ci,
                acceptance_median: v.acceptance_median,
                acceptance_ci_lo: v.acceptance_ci.map(|c| c[0]),
                acceptance_ci_hi: v.acceptance_ci.map(|c| c[1]),
                tokens_per_step: v.mean_acceptance_length_median,
                memory_total_mib: v.memory.as_ref().map(|m| m.total_mib),
                memory_speculative_context_mib: v.memory.as_ref().map(|m| m.speculative_context_mib),
                yardstick_acceptance_median: v.mtp_yardstick.as_ref().and_then(|y| y.acceptance_median),
                yardstick_acceptance_ci_lo: v.mtp_yardstick.as_ref().and_then(|y| y.acceptance_ci).map(|c| c[0]),
                yardstick_acceptance_ci_hi: v.mtp_yardstick.as_ref().and_then(|y| y.acceptance_ci).map(|c| c[1]),
                yardstick_drafted_median: v.mtp_yardstick.as_ref().and_then(|y| y.drafted_median),
                yardstick_wall_ms_median: v.mtp_yardstick.as_ref().and_then(|y| y.wall_ms_median),
            });
        }
    }
    lines
}

impl Render for Summary {
    fn text(&self) -> String {
        render_text(self)
    }

    /// One row per metric and variant: the verdict table.
    fn table(&self) -> Table {
        let mut t = Table::named(&[
            "metric",
            "variant",
            "accepted",
            "planned",
            "runs",
            "mean",
            "median",
            "cv_pct",
            "change_pct",
            "median_change_pct",
            "ci_lo_pct",
            "ci_hi_pct",
            "verdict",
            "measures",
            "p_value",
            "ci_method",
        ]);
        // A speculative study's rows carry each variant's acceptance beside its figures, and a
        // study whose logs sized the server's buffers its memory (§7.11); others keep their columns.
        if self.variants.iter().any(|v| !v.acceptance.is_empty()) {
            for k in ["acceptance_median", "acceptance_ci_lo", "acceptance_ci_hi", "tokens_per_step"] {
                t.columns.push(Column::text(k));
            }
        }
        if self.variants.iter().any(|v| v.memory.is_some()) {
            for k in ["memory_total_mib", "memory_speculative_context_mib"] {
                t.columns.push(Column::text(k));
            }
        }
        if self.variants.iter().any(|v| v.mtp_yardstick.is_some()) {
            for k in [
                "yardstick_acceptance_median",
                "yardstick_acceptance_ci_lo",
                "yardstick_acceptance_ci_hi",
                "yardstick_drafted_median",
                "yardstick_wall_ms_median",
            ] {
                t.columns.push(Column::text(k));
            }
        }
        for line in verdict_lines(self) {
            t.push_row(&line);
        }
        t
    }
}

/// What an undecided interval rules out (docs/methodology.md §8): the smallest change the
/// study would have found, and the blocks a change the size of its estimate needs. An adaptive
/// study's interval says first which interval its verdict "same" read (§17).
pub(crate) fn undecided_line(ci: &ChangeCi) -> Option<String> {
    let same = ci.equivalence.map(|[lo, hi]| {
        format!("its equivalence interval (repeated 90%, docs/methodology.md §17) is [{lo:+.2}%, {hi:+.2}%]; ")
    });
    let mde = ci.mde_pct?;
    let need = match ci.blocks_to_decide {
        Some(n) => format!(
            "a change the size of this estimate ({:+.2}%) needs about {n} blocks (`--until-decided --max-samples {n}`)",
            ci.center_pct()
        ),
        None => format!(
            "a change the size of this estimate ({:+.2}%) needs more than {} blocks at this spread",
            ci.center_pct(),
            crate::summary::stats::MAX_BLOCKS_ADVISED
        ),
    };
    Some(format!(
        "{}no clear difference rules out changes beyond ±{mde:.2}% (found 80% of the time by this study); {need}",
        same.unwrap_or_default()
    ))
}

pub(crate) fn render_text(s: &Summary) -> String {
    let mut o = String::new();
    let base = &s.variants[0].label;
    let order: Vec<&str> = s
        .order
        .iter()
        .filter(|e| e.status != crate::study::evidence::AttemptStatus::Interrupted)
        .map(|e| e.label.as_str())
        .collect();
    let samples = match &s.adaptive {
        Some(a) if a.until_ci_pct > 0.0 => format!(
            "{} samples per variant, then blocks until decode CI ±{}% (at most {})",
            s.samples_per_variant, a.until_ci_pct, a.max_samples
        ),
        Some(a) => format!(
            "{} samples per variant, then blocks until decided{} (at most {})",
            s.samples_per_variant,
            a.mei_pct.map_or(String::new(), |m| format!(" or the same within ±{m}%")),
            a.max_samples
        ),
        None => format!("{} samples per variant", s.samples_per_variant),
    };
    let _ = writeln!(
        o,
        "abprof study {}{} · {} output tokens{} · {samples} · prompt {}",
        s.root,
        s.name.as_ref().map_or(String::new(), |n| format!(" ({n})")),
        s.tokens,
        if s.pure_decode { " (pure decode: prompt cache warmed)" } else { " (cold KV)" },
        s.expected_prompt_tokens.map_or("uncalibrated".into(), |n| format!("{n} tokens (calibrated)")),
    );
    let _ = writeln!(o, "run order: {}", if order.is_empty() { "—".into() } else { order.join(" ") });
    let w = s.variants.iter().map(|v| v.label.len()).max().unwrap_or(7).max(7);
    let lines = verdict_lines(s);
    for m in Metric::every() {
        if m.is_energy() && !lines.iter().any(|l| l.metric == m) {
            continue;
        }
        let from = s.variants.iter().find_map(|v| v.metric(m)?.energy_from.clone());
        let caveat = s.variants.first().and_then(|v| v.metric(m)).and_then(|x| x.measures.clone());
        let caveat = match (caveat, from) {
            (Some(c), Some(f)) => Some(format!("{c}; from the {f}")),
            (None, Some(f)) => Some(format!("from the {f}")),
            (c, None) => c,
        };
        let caveat = caveat.as_deref();
        match caveat {
            Some(c) => {
                let _ = writeln!(o, "\n{} — {c}", m.title());
            }
            None => {
                let _ = writeln!(o, "\n{}", m.title());
            }
        }
        let runs_w = s.variants.iter().map(|v| v.metric(m).map_or(0, |x| x.runs.len())).max().unwrap_or(3).max(3) * 9;
        let mut t = Table::new(vec![
            Column::text("variant").width(w),
            Column::text("runs").width(runs_w),
            Column::number("mean").width(9),
            Column::number("median").width(9),
            Column::number("CV").width(6),
            Column::number(&format!("vs {base}")).width(8),
            Column::number("95% CI").width(19),
            Column::number("medians").width(8),
            Column::verdict("verdict"),
        ]);
        let d = metric_digits(m);
        for l in lines.iter().filter(|l| l.metric == m) {
            t.push_text(vec![
                l.variant.into(),
                l.runs.clone(),
                num(l.mean, d),
                num(l.median, d),
                super::cv_pct(l.cv_pct),
                super::signed_pct(l.change_pct),
                super::ci_pct(l.ci),
                super::signed_pct(l.median_change_pct),
                l.verdict.into(),
            ]);
        }
        o.push_str(&t.render(&Text::of(&t, "  ", false)));
        for l in lines.iter().filter(|l| l.metric == m) {
            if let Some(why) = l.ci.as_ref().and_then(undecided_line) {
                let _ = writeln!(o, "  {}: {why}", l.variant);
            }
        }
    }
    if let Some(t) = super::speculation::mtp_yardstick(s) {
        let _ = writeln!(
            o,
            "\nMTP yardstick (§4.1): the nine prompts' aggregate per sample, medians over accepted samples"
        );
        o.push_str(&t.render(&Text::of(&t, "  ", true)));
    }
    if let (Some(d), Some(r)) = (super::soak::drift(s), super::soak::per_request(s)) {
        let _ = writeln!(o, "\nSoak (§4.2): the decode rate's fitted change from request 2 to the last (the first is the cold server's warm-up)");
        o.push_str(&d.render(&Text::of(&d, "  ", true)));
        let _ = writeln!(o, "\nSoak: each request, medians over accepted samples");
        if let Some(n) = super::soak::unmeasured_note(s) {
            let _ = writeln!(o, "  ({n})");
        }
        o.push_str(&r.render(&Text::of(&r, "  ", true)));
    }
    if let Some(c) = &s.covariate {
        covariate_lines(&mut o, s, c);
    }
    if let Some(p) = &s.power_state {
        let _ = writeln!(o, "\npower state (host.json): {p}");
    }
    if let Some(hint) = &s.noise_hint {
        let _ = writeln!(o, "\nnoise: {hint}");
    }
    if let Some(why) = &s.energy_not_measured {
        let _ = writeln!(o, "\nenergy and power (J/token, J/prompt token, mean power, tokens/J): {why}");
    }
    let paired: Vec<String> = s
        .variants
        .iter()
        .filter_map(|v| {
            let c = v.metric(Metric::ServerDecodeTps)?.ci?;
            matches!(c.method, CiMethod::PairedBlocks | CiMethod::PairedT | CiMethod::PooledT)
                .then(|| format!("{} ({} blocks)", v.label, c.pairs.unwrap_or(0)))
        })
        .collect();
    if !paired.is_empty() {
        let _ = writeln!(
            o,
            "\nintervals paired within interleaved blocks (a drift both sides of a block share cancels): {}",
            paired.join(", ")
        );
    }
    let _ = writeln!(o, "\nper variant");
    let mut t = Table::new(vec![
        Column::text("variant").width(w),
        Column::number("ms/token").width(9),
        Column::number("(N−1) TPS").width(10),
        Column::number("accept").width(8),
        Column::number("output tokens").width(13),
        Column::number("prompt tok").width(12),
        Column::number("idle gate").width(10),
        Column::text("accepted"),
    ]);
    // A speculative study also shows each variant's acceptance interval and tokens per decode
    // step (§7.11); a study without drafts keeps the table it always had.
    let drafted = s.variants.iter().any(|v| !v.acceptance.is_empty());
    if drafted {
        t.columns.insert(4, Column::number("accept 95% CI").width(17));
        t.columns.insert(5, Column::number("tok/step").width(8));
    }
    for v in &s.variants {
        let mut row = vec![
            v.label.clone(),
            num(v.ms_per_token, 3),
            num(v.decode_tps_n_minus_1_median, 2),
            v.acceptance_median.map_or("—".into(), |a| format!("{:.2}%", a * 100.0)),
            summarize_counts(&v.output_tokens),
            summarize_counts(&v.prompt_tokens),
            v.idle_gate_ms_median.map_or("—".into(), |g| format!("{g:.0} ms")),
            format!("{}/{}", v.accepted, v.planned),
        ];
        if drafted {
            let ci =
                v.acceptance_ci.map_or("—".into(), |[lo, hi]| format!("[{:.1}%, {:.1}%]", lo * 100.0, hi * 100.0));
            row.insert(4, ci);
            row.insert(5, num(v.mean_acceptance_length_median, 2));
        }
        t.push_text(row);
    }
    // Each variant's caveats under its own row.
    let text = Text::of(&t, "  ", false);
    o.push_str(&text.table_header(&t));
    for (v, row) in s.variants.iter().zip(&t.rows) {
        o.push_str(&text.table_row(&t, row));
        for c in &v.caveats {
            let _ = writeln!(o, "  ! {}: {c}", v.label);
        }
    }
    if let Some(t) = super::speculation::acceptance(s) {
        let _ = writeln!(o, "\ndraft acceptance (accepted samples; §7.11)");
        o.push_str(&t.render(&Text::of(&t, "  ", true)));
    }
    if let Some(t) = super::speculation::memory(s) {
        let _ = writeln!(o, "\nserver memory (MiB, the log's buffers, medians)");
        o.push_str(&t.render(&Text::of(&t, "  ", true)));
    }
    if s.variants.iter().any(|v| v.decode.is_some()) {
        let _ = writeln!(
            o,
            "\nper phase (medians over accepted samples; telemetry: {})",
            s.telemetry.as_deref().unwrap_or("—")
        );
        let mut t = Table::new(vec![
            Column::text("variant").width(w),
            Column::text("phase").width(7),
            Column::number("power W").width(8),
            Column::number("busy %").width(7),
            Column::number("server CPU%").width(10),
            Column::number("peak °C").width(7),
            Column::number("gfx MHz min/med/max").width(17),
            Column::number("J/token").width(10),
            Column::text("energy from"),
        ]);
        // Rows per variant, so its throttled samples can follow them.
        let mut rows_of = Vec::new();
        for v in &s.variants {
            let first = t.rows.len();
            for (name, p) in [("prefill", &v.prefill), ("decode", &v.decode)] {
                let Some(p) = p else { continue };
                let clocks = super::clock_range(p.gfx_clock_min_mhz, p.gfx_clock_median_mhz, p.gfx_clock_max_mhz);
                t.push_text(vec![
                    v.label.clone(),
                    name.into(),
                    num(p.mean_power_w, 1),
                    num(p.mean_busy_pct, 1),
                    num(p.mean_cpu_pct, 1),
                    num(p.peak_temp_c, 1),
                    clocks,
                    num(p.j_per_token, 4),
                    p.energy_from.clone().unwrap_or_else(|| "—".into()),
                ]);
            }
            rows_of.push(first..t.rows.len());
        }
        let text = Text::of(&t, "  ", false);
        o.push_str(&text.table_header(&t));
        for (v, rows) in s.variants.iter().zip(rows_of) {
            for row in &t.rows[rows] {
                o.push_str(&text.table_row(&t, row));
            }
            if !v.throttled.is_empty() {
                let list = v.throttled.iter().map(|i| format!("#{i}")).collect::<Vec<_>>().join(" ");
                let _ =
                    writeln!(o, "  ! {}: throttled (decode gfx clock > 10% below the study median): {list}", v.label);
            }
        }
    }
    if let Some(t) = super::devices::per_device(s) {
        let _ = writeln!(o, "\nper device (medians over accepted samples; the per-phase figures are their sum; §9.11)");
        o.push_str(&t.render(&Text::of(&t, "  ", true)));
    }
    if s.variants.iter().any(|v| !v.decode_windows.is_empty()) {
        windows_section(&mut o, s);
    }
    if s.variants.iter().any(|v| v.floor.is_some()) {
        floor_section(&mut o, s, w);
    }
    if !s.rejected.is_empty() {
        let _ = writeln!(o, "\nrejected samples (not in the statistics above)");
        for r in &s.rejected {
            let why = r.reasons.iter().map(|x| format!("{}: {}", x.rule, x.reason)).collect::<Vec<_>>().join("; ");
            let _ = writeln!(o, "  #{} {} ({}): {why}", r.index + 1, r.label, r.dir);
        }
    }
    if let Some(r) = &s.retakes {
        let _ = writeln!(o, "\n{}", r.line());
    }
    if let Some(a) = &s.adaptive {
        let _ = writeln!(o, "\n{}", a.line());
    }
    if s.missing > 0 {
        let _ = writeln!(
            o,
            "\n{} planned samples not taken yet: `abprof ab --resume {}` finishes the study",
            s.missing, s.root
        );
    }
    let _ = writeln!(
        o,
        "\nisolation: {}",
        match s.isolation_restored {
            Some(true) => "restore and verify hooks succeeded",
            Some(false) => "RESTORE OR VERIFY FAILED: every sample is rejected",
            None => "no hooks recorded",
        }
    );
    if let (Some(med), Some(max)) = (s.dead_time_ms_median, s.dead_time_ms_max) {
        let _ = writeln!(
            o,
            "driver dead time per sample (all but start-up and the request): median {med:.1} ms, max {max:.1} ms"
        );
    }
    if let Some(x) = &s.exactness {
        let _ = writeln!(o, "exactness (exactness.json): {} — gate {}", x.headline, x.gate.name());
        if let Some(y) = &x.comparison.yardstick {
            if let (Some(top1), Some(kl)) = (y.same_top1_pct, y.kl_mean) {
                let pass = match y.pass {
                    Some(true) => "pass",
                    Some(false) => "FAIL",
                    None => "not judged",
                };
                let _ = writeln!(
                    o,
                    "  same top-1 {top1:.1}%, top-k KL mean {kl:.3e} — {pass} for class {}",
                    y.class.name()
                );
            }
        }
    }
    if let Some(t) = &s.traces {
        let _ = writeln!(o, "\nkernel attribution (traces/):");
        o.push_str(&t.text());
        if matches!(t, TraceComparison::Compared { .. }) {
            let _ = writeln!(o, "again with other rules or more kernels: abprof compare-traces --study {}", s.root);
        }
    } else if s.variants.iter().any(|v| v.ms_per_token.is_some()) {
        // Attribution needs traces at this study's output length; say how, once.
        let _ = writeln!(
            o,
            "\nkernel attribution: trace at the same output length with `abprof trace --root {root}/traces --tokens {} …`, then `abprof compare-traces --study {root}` scales each trace by this study's ms/token",
            s.tokens,
            root = s.root
        );
    }
    o
}

/// Whether the thermal covariate explains decode TPS within the variants, and where it does the
/// adjusted interval beside the plain one (docs/methodology.md §9.10).
fn covariate_lines(o: &mut String, s: &Summary, c: &crate::summary::covariate::CovariateFit) {
    let _ = writeln!(
        o,
        "\ndecode TPS against the {} within each variant: slope {:+.3}% per unit, R² {:.2}, p {:.3} — {}",
        c.covariate.name(),
        c.slope_pct_per_unit,
        c.r2_within,
        c.p_value,
        if c.explains {
            "it explains the spread; adjusted comparison (docs/methodology.md §9.10):"
        } else {
            "it does not explain the spread: no adjustment"
        }
    );
    for (label, adj) in &c.adjusted {
        let plain = s.variants.iter().find(|v| v.label == *label).and_then(|v| v.metric(Metric::ServerDecodeTps)?.ci);
        let _ = writeln!(
            o,
            "  {label}: adjusted {:+.2}% {} beside the plain {}",
            adj.center_pct(),
            super::ci_pct(Some(*adj)),
            super::ci_pct(plain)
        );
    }
}

/// Each accepted sample's decode rate per 32-token window, with the sag and what showed a
/// throttle (docs/methodology.md §9.8).
fn windows_section(o: &mut String, s: &Summary) {
    let _ = writeln!(
        o,
        "\ndecode per {}-token window (tok/s, first → last; the window's median gfx clock where measured)",
        crate::summary::windows::WINDOW_TOKENS
    );
    for line in window_lines(s) {
        let _ = writeln!(o, "  {line}");
    }
}

/// Each variant's decode step against its bandwidth floor, then the inputs one by one so a
/// reader can redo the division (docs/methodology.md §18).
fn floor_section(o: &mut String, s: &Summary, w: usize) {
    let _ = writeln!(o, "\ndecode floor: bytes one decode step reads ÷ memory bandwidth (docs/methodology.md §18)");
    let mut t = Table::new(vec![
        Column::text("variant").width(w),
        Column::number("ms/step").width(9),
        Column::number("floor ms").width(9),
        Column::number("% of floor").width(10),
        Column::number("achieved GB/s").width(13),
        Column::number("bytes/step").width(15),
        Column::number("context").width(8),
        Column::text("KV"),
    ]);
    for v in &s.variants {
        let Some(fl) = &v.floor else { continue };
        t.push_text(vec![
            v.label.clone(),
            num(fl.ms_per_step, 3),
            num(fl.floor_ms, 3),
            fl.pct_of_floor.map_or("—".into(), |p| format!("{p:.1}%")),
            num(fl.achieved_gb_per_s, 2),
            fl.bytes.as_ref().map_or("—".into(), |b| grouped(b.total.round() as u64)),
            num(fl.context_tokens, 1),
            fl.kv.as_ref().map_or("—".into(), |k| k.types()),
        ]);
    }
    o.push_str(&t.render(&Text::of(&t, "  ", false)));
    // Below 100% the step read its bytes faster than memory streams them (docs/methodology.md §18).
    if s.variants.iter().any(|v| v.floor.as_ref().and_then(|f| f.pct_of_floor).is_some_and(|p| p < 100.0)) {
        let _ = writeln!(
            o,
            "  under 100% of floor: the step read its bytes faster than memory streams them, because they stayed in the CPU's caches (a model that fits in them, as on the test bed): the floor only bounds a model larger than the caches"
        );
    }
    // The bandwidth once when every variant shares it, else per variant.
    let bandwidths: Vec<_> = s.variants.iter().filter_map(|v| v.floor.as_ref()?.bandwidth.as_ref()).collect();
    let shared = bandwidths.windows(2).all(|p| p[0] == p[1]) && bandwidths.len() == s.variants.len();
    if shared {
        if let Some(b) = bandwidths.first() {
            let _ = writeln!(o, "  bandwidth ({}): {}", b.target.describe(), bandwidth_line(b));
        }
    }
    for v in &s.variants {
        let Some(fl) = &v.floor else { continue };
        if let (Some(wb), Some(kv), Some(b), Some(c)) = (&fl.weights, &fl.kv, &fl.bytes, fl.context_tokens) {
            let _ = writeln!(o, "  {} reads per step:", v.label);
            byte_lines(o, "    ", wb, kv, c, b);
        }
        if !shared {
            if let Some(b) = &fl.bandwidth {
                let _ = writeln!(o, "  {} bandwidth ({}): {}", v.label, b.target.describe(), bandwidth_line(b));
            }
        }
        for c in &fl.caveats {
            if !fl.weights.as_ref().is_some_and(|w| w.caveats.contains(c)) {
                let _ = writeln!(o, "  ! {}: {c}", v.label);
            }
        }
        for m in &fl.missing {
            let _ = writeln!(o, "  ! {}: no floor: {m}", v.label);
        }
    }
}

/// "128×3" when all equal, else the list.
fn summarize_counts(v: &[u64]) -> String {
    match v.first() {
        None => "—".into(),
        Some(first) if v.iter().all(|x| x == first) => format!("{first}×{}", v.len()),
        _ => v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(","),
    }
}

/// One line per accepted sample with decode windows: the rates (and clocks), the sag, the clock
/// change and the throttle signals (docs/methodology.md §9.8).
fn window_lines(s: &Summary) -> Vec<String> {
    let mut out = Vec::new();
    for v in &s.variants {
        for w in &v.decode_windows {
            let rates: Vec<String> = w
                .windows
                .iter()
                .map(|x| match x.gfx_clock_mhz {
                    Some(c) => format!("{:.1}@{c:.0}MHz", x.tokens_per_s),
                    None => format!("{:.1}", x.tokens_per_s),
                })
                .collect();
            let mut line = format!("#{} {}: {}", w.index, v.label, rates.join(" "));
            if let Some(p) = w.sag_pct {
                line += &format!(" · sag {p:+.1}%");
            }
            if let Some(c) = w.clock_change_pct {
                line += &format!(" · clock {c:+.1}%");
            }
            if !w.throttled_by.is_empty() {
                line += &format!(" · throttled ({})", w.throttled_by.join(", "));
            }
            out.push(line);
        }
    }
    out
}
