//! An exactness report as a person reads it in a terminal.
use super::table::{Column, Table, Text};
use super::Render;
use crate::exactness::{ExactnessReport, ExactnessVerdict, Gate, ShownToken, SideReport};
use serde::Serialize;
use std::path::Path;

fn tokens(t: &[ShownToken]) -> String {
    t.iter().map(|s| format!("{:?}", s.text)).collect::<Vec<_>>().join(" ")
}

fn opt(v: Option<f64>) -> String {
    v.map_or_else(|| "—".into(), |x| format!("{x:.6}"))
}

fn labelled(r: &ExactnessReport) -> Table {
    // One labelled line each, the labels in one column (a diverged side's lines indented).
    let mut t = Table::new(vec![Column::text("what"), Column::text("value")]);
    let mut line = |k: &str, v: String| t.push_text(vec![k.to_string(), v]);
    let side = |s: &SideReport| {
        format!(
            "{} ({} prompt + {} generated tokens, finish {})",
            s.label,
            s.prompt_tokens.map_or("?".into(), |n| n.to_string()),
            s.completion_tokens.map_or("?".into(), |n| n.to_string()),
            s.finish_reason.as_deref().unwrap_or("—")
        )
    };
    line("baseline", side(&r.baseline));
    line("candidate", side(&r.candidate));
    line("verdict", r.headline.clone());
    if let ExactnessVerdict::Diverged(d) = &r.comparison.verdict {
        line("  shared before", tokens(&d.shared_before));
        for (label, c) in [(&r.baseline.label, &d.baseline), (&r.candidate.label, &d.candidate)] {
            let ended = c.ended.as_ref().map(|f| format!(" [ended: {f}]")).unwrap_or_default();
            line(&format!("  {label}"), format!("{}{ended}", tokens(&c.tokens)));
            let top: Vec<String> = c.top_at.iter().map(|a| format!("{:?} {:.4}", a.text, a.logprob)).collect();
            if !top.is_empty() {
                line("", format!("top-{} at {}: {}", top.len(), d.at, top.join(", ")));
            }
        }
    }
    line(
        "max |Δlogprob|",
        format!(
            "{}{}  ({} of {} compared positions have different top-k sets)",
            opt(r.comparison.max_abs_logprob_delta),
            r.comparison.max_delta_at.map(|i| format!(" at token {i}")).unwrap_or_default(),
            r.comparison.topk_set_differences,
            r.comparison.compared_positions
        ),
    );
    let c = &r.comparison.cosine;
    line(
        "cosine (top-k)",
        format!(
            "overall {}  min {}{}  {} of {} positions below {}: {}",
            opt(c.overall),
            opt(c.min),
            c.min_at.map(|i| format!(" at token {i}")).unwrap_or_default(),
            c.below_threshold.len(),
            c.per_position.len(),
            c.threshold,
            if c.pass { "pass" } else { "FAIL" }
        ),
    );
    if let Some(y) = &r.comparison.yardstick {
        let pct = |v: Option<f64>| v.map_or_else(|| "—".into(), |x| format!("{x:.1}%"));
        let sci = |v: Option<f64>| v.map_or_else(|| "—".into(), |x| format!("{x:.3e}"));
        let judged = match (y.thresholds, y.pass) {
            (Some(t), Some(pass)) => format!(
                "{} (class {}: same top-1 ≥ {}%, mean KL ≤ {:.0e})",
                if pass { "pass" } else { "FAIL" },
                y.class.name(),
                t.min_same_top1_pct,
                t.max_mean_kl
            ),
            (Some(_), None) => format!("not judged (class {}: nothing compared)", y.class.name()),
            (None, _) => format!("not judged (class {}: no threshold)", y.class.name()),
        };
        line(
            "top-1 / KL (top-k)",
            format!(
                "same top-1 {}  KL mean {}  max {}{}: {judged}",
                pct(y.same_top1_pct),
                sci(y.kl_mean),
                sci(y.kl_max),
                y.kl_max_at.map(|i| format!(" at token {i}")).unwrap_or_default(),
            ),
        );
    }
    let gate = match r.gate {
        Gate::Exact => "exact: passes the exactness gate",
        Gate::CosinePass => "not exact; passes the cosine ≥ 0.99 fallback gate",
        Gate::Fail => "FAILS the correctness gate (not exact, cosine below 0.99)",
    };
    line("gate", gate.to_string());
    t
}

pub(crate) fn render_text(r: &ExactnessReport) -> String {
    lines(r, None)
}

/// The report's lines, and `file` (where it was written) as the last.
fn lines(r: &ExactnessReport, file: Option<&Path>) -> String {
    let mut t = labelled(r);
    if let Some(f) = file {
        t.push_text(vec!["report".into(), f.display().to_string()]);
    }
    t.render(&Text::rows(&t, ""))
}

impl Render for ExactnessReport {
    fn text(&self) -> String {
        render_text(self)
    }
}

/// What `abprof exactness` prints: the report, and in text where its file was written. The JSON
/// is the report alone.
#[derive(Serialize)]
#[serde(transparent)]
pub(crate) struct SavedExactness<'a> {
    pub(crate) report: &'a ExactnessReport,
    #[serde(skip)]
    pub(crate) file: &'a Path,
}

impl Render for SavedExactness<'_> {
    fn text(&self) -> String {
        lines(self.report, Some(self.file))
    }
}
