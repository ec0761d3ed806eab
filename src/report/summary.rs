//! A study summary as docs/methodology.md §8 reports it: every run, mean, median, % change vs the
//! baseline with its confidence interval and verdict, then the context that makes the numbers
//! comparable.
use super::sections::verdicts::verdict_lines;
use super::table::Column;
use super::{Render, Table};
use crate::summary::traces::TraceComparison;
use crate::summary::Summary;
use serde::Serialize;
use std::fmt::Write;

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

/// The summary as text: the heading, the rule limits the study changed, every section, the
/// outcome and the evidence's facts. The commands print [`Answer`] after it, last.
pub(crate) fn render_text(s: &Summary) -> String {
    let mut o = heading(s);
    o.push_str(&super::section::text(&super::sections::answer::changed_limits(s)));
    o.push_str(&super::section::text(&super::sections::of(s)));
    outcome(&mut o, s);
    provenance(&mut o, s);
    attribution(&mut o, s);
    o
}

/// The study's folder, name, output length, plan and prompt, then the run order.
fn heading(s: &Summary) -> String {
    let mut o = String::new();
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
    o
}

/// The rejected samples, the retakes, the adaptive rule's stop and what is left to take.
fn outcome(o: &mut String, s: &Summary) {
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
}

/// The isolation hooks, the driver's dead time and the exactness gate.
fn provenance(o: &mut String, s: &Summary) {
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
}

/// The kernel attribution of the traces beside the study, or how to get one.
fn attribution(o: &mut String, s: &Summary) {
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
}

/// Each candidate's one-line answer (docs/methodology.md §8 "The answer"): the last lines `ab`,
/// `trace` and `summarize` print as text, the section that heads report.md and the page; as JSON,
/// the summary's `answer` field.
pub(crate) struct Answer<'a>(pub(crate) &'a Summary);

impl Serialize for Answer<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.answer.serialize(serializer)
    }
}

impl Render for Answer<'_> {
    fn text(&self) -> String {
        super::section::text(&super::sections::answer::lines(self.0))
    }
}

/// Prints the study's answer after a command's own output, in text only: a JSON document stays
/// one document (its `answer` field holds the same), and a table stays one table.
pub(crate) fn emit_answer(s: &Summary, format: super::Format) {
    if format == super::Format::Text {
        super::emit(&Answer(s), format);
    }
}
