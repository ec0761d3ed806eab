//! A sweep's summary (docs/methodology.md §16): one table per metric, a row per point and variant,
//! verdicts Holm-adjusted across each metric's family; then how each point's study went.
use super::table::{Column, Text};
use super::{ci_pct, num, p_value, signed_pct, Render, Table, NONE};
use crate::study::file::{AxisName, AxisValue};
use crate::summary::sweep::{MetricTable, SweepSummary};
use serde_json::json;
use std::fmt::Write;

/// One metric's rows as every format shows them (text, the page): a point's name on its first
/// row only.
pub(crate) fn metric_table(s: &SweepSummary, t: &MetricTable) -> Table {
    let base = s.variants.first().map_or("baseline", String::as_str);
    let mut table = Table::new(vec![
        Column::text("point"),
        Column::text("variant"),
        Column::number("samples"),
        Column::number("median"),
        Column::number(&format!("vs {base}")),
        Column::number("95% CI"),
        Column::number("p"),
        Column::number("p Holm"),
        Column::verdict("verdict"),
    ]);
    let mut last = "";
    for r in &t.rows {
        let point = if r.point == last { "" } else { r.point.as_str() };
        last = &r.point;
        table.push_text(vec![
            point.into(),
            r.variant.clone(),
            format!("{}/{}", r.accepted, r.planned),
            num(r.median, t.metric.decimals()),
            signed_pct(r.change_pct),
            ci_pct(r.ci),
            p_value(r.ci.and_then(|c| c.repeated_p())),
            p_value(r.p_holm),
            r.verdict.map_or("baseline", |v| t.metric.verdict_word(v)).into(),
        ]);
    }
    table
}

/// How each point's study went, as every format shows it: its folder (a study of its own), its
/// state, lengths, rejected and missing samples, the adaptive rule's line.
pub(crate) fn points_table(s: &SweepSummary) -> Table {
    let mut table = Table::new(vec![
        Column::text("point"),
        Column::text("folder"),
        Column::text("state"),
        Column::number("prompt tokens"),
        Column::number("output tokens"),
        Column::number("rejected"),
        Column::number("not taken"),
        Column::text("adaptive"),
    ]);
    for p in &s.points {
        let mut state = format!("{:?}", p.state).to_lowercase();
        if p.isolation_restored == Some(false) {
            state.push_str(", RESTORE OR VERIFY FAILED");
        }
        table.push_text(vec![
            p.name.clone(),
            p.dir.clone(),
            state,
            p.expected_prompt_tokens.map_or(NONE.into(), |n| n.to_string()),
            p.tokens.map_or(NONE.into(), |n| n.to_string()),
            p.rejected.to_string(),
            p.missing.to_string(),
            p.adaptive.as_ref().map_or(NONE.into(), |a| a.line()),
        ]);
    }
    table
}

impl Render for SweepSummary {
    fn text(&self) -> String {
        let mut o = String::new();
        let axes = self.axes.iter().map(|a| a.key()).collect::<Vec<_>>().join(" × ");
        let _ = writeln!(
            o,
            "abprof sweep {}{} · {} points over {axes} · variants {} (baseline first) · {} samples per variant per point",
            self.root,
            self.name.as_ref().map_or(String::new(), |n| format!(" ({n})")),
            self.points.len(),
            self.variants.join(", "),
            self.samples_per_variant,
        );
        let _ = writeln!(
            o,
            "verdicts: Holm-adjusted across each metric's family (every point × candidate with an interval), familywise α = 5%; each interval is its comparison's own (95%; an adaptive point's repeated interval at the family's level), p its interval's"
        );
        for t in &self.tables {
            let _ = writeln!(
                o,
                "\n{} — Holm family of {} comparison{}",
                t.metric.title(),
                t.family.comparisons,
                if t.family.comparisons == 1 { "" } else { "s" }
            );
            let table = metric_table(self, t);
            o.push_str(&table.render(&Text::of(&table, "  ", false)));
        }
        let _ = writeln!(o, "\npoints (each a study folder: abprof summarize {}/DIR)", self.root);
        let table = points_table(self);
        o.push_str(&table.render(&Text::of(&table, "  ", false)));
        if self.unfinished() > 0 {
            let _ = writeln!(
                o,
                "\n{} point(s) not finished: `abprof ab --resume {}` keeps the finished ones and completes the rest",
                self.unfinished(),
                self.root
            );
        }
        o
    }

    /// One row per metric, point and variant.
    fn table(&self) -> Table {
        let axes: Vec<String> = self.axes.iter().map(AxisName::key).collect();
        let mut columns = vec!["metric", "point"];
        columns.extend(axes.iter().map(String::as_str));
        columns.extend([
            "variant",
            "accepted",
            "planned",
            "runs",
            "median",
            "change_pct",
            "ci_lo_pct",
            "ci_hi_pct",
            "p_value",
            "p_holm",
            "verdict",
            "family",
        ]);
        let mut t = Table::named(&columns);
        for mt in &self.tables {
            let family = format!("holm over {} comparisons, alpha {}", mt.family.comparisons, mt.family.alpha);
            for r in &mt.rows {
                let point = self.points.iter().find(|p| p.name == r.point);
                let mut row = vec![json!(mt.metric), json!(r.point)];
                for a in &self.axes {
                    let v = point.and_then(|p| p.values.iter().find(|v| v.axis() == *a));
                    row.push(match v {
                        Some(AxisValue::PromptTokens(n)) => json!(n),
                        Some(AxisValue::Tokens(n)) => json!(n),
                        Some(AxisValue::Kv(s) | AxisValue::Extra(s) | AxisValue::Env { value: s, .. }) => json!(s),
                        None => serde_json::Value::Null,
                    });
                }
                row.extend([
                    json!(r.variant),
                    json!(r.accepted),
                    json!(r.planned),
                    json!(r.runs),
                    json!(r.median),
                    json!(r.change_pct),
                    json!(r.ci.map(|c| c.lo_pct)),
                    json!(r.ci.map(|c| c.hi_pct)),
                    json!(r.ci.and_then(|c| c.repeated_p())),
                    json!(r.p_holm),
                    json!(r.verdict.map_or("baseline", |v| mt.metric.verdict_word(v))),
                    json!(family),
                ]);
                t.push(row);
            }
        }
        t
    }

    /// The table for people: each row's runs at its metric's decimals (JSON Lines and CSV carry
    /// them as numbers at full precision).
    fn markdown(&self) -> String {
        let mut t = self.table();
        let runs = self.tables.iter().flat_map(|mt| mt.rows.iter().map(|r| super::runs(&r.runs, mt.metric.decimals())));
        t.set_column("runs", runs.map(Into::into));
        t.markdown()
    }
}
