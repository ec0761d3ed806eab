//! A Pi study as a person reads it.
use super::table::Text;
use super::{num, Render};
use crate::summary::pi::{PiReport, PiSample};
use serde::Serialize;
use std::fmt::Write;
use std::path::Path;

/// One line per sample, as it finishes: labelled figures, no column widths (a line printed alone
/// has no neighbours to align with; the medians table aligns the study's).
pub(crate) fn sample_line(s: &PiSample) -> String {
    let t = s.server.as_ref();
    format!(
        "#{} {}: gate {} ms · pi {} ms · prefill {} ms {} tok/s · decode {} ms {} tok/s · out {} · accept {} · {}",
        s.index + 1,
        s.label,
        num(s.idle_gate.as_ref().map(|g| g.waited_ms), 0),
        num(Some(s.run.pi_wall_ms), 1),
        num(t.map(|t| t.prefill_ms), 1),
        num(t.map(|t| t.prefill_tps), 1),
        num(t.map(|t| t.decode_ms), 1),
        num(t.map(|t| t.decode_tps), 2),
        s.output_tokens().map_or("—".into(), |n| n.to_string()),
        num(s.draft.as_ref().map(|d| d.rate), 4),
        if s.valid { "valid".to_string() } else { format!("FAILED: {}", s.failures.join("; ")) }
    )
}

pub(crate) fn render_text(r: &PiReport) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "pi {} ({}), mode {}, maxTokens {}",
        r.pi_version.as_deref().unwrap_or("?"),
        r.pi_bin.display(),
        r.mode,
        r.max_tokens
    );
    let _ = writeln!(o, "order: {}", r.order.join(" "));
    if !r.telemetry.is_empty() {
        let _ = writeln!(o, "telemetry and idle gate: {}", r.telemetry);
    }
    for s in &r.samples {
        let _ = writeln!(o, "{}", sample_line(s));
    }
    let _ = writeln!(o, "medians over valid samples:");
    let t = super::sections::pi::medians(r);
    o.push_str(&t.render(&Text::of(&t, "", false).gap(" ")));
    for w in &r.warnings {
        let _ = writeln!(o, "warning: {w}");
    }
    o
}

impl Render for PiReport {
    fn text(&self) -> String {
        render_text(self)
    }
}

/// What `abprof pi` prints: the report, and in text its evidence folder. The JSON is the report
/// alone.
#[derive(Serialize)]
#[serde(transparent)]
pub(crate) struct PiOutcome<'a> {
    pub(crate) report: &'a PiReport,
    #[serde(skip)]
    pub(crate) evidence: &'a Path,
}

impl Render for PiOutcome<'_> {
    fn text(&self) -> String {
        format!("{}evidence: {}\n", render_text(self.report), self.evidence.display())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::summary::pi::PiVariantSummary;

    /// The medians table keeps the layout it had as hand-set `format!` widths, byte for byte: a
    /// long label overflows its column, an unmeasured median is a dash.
    #[test]
    fn the_medians_table_aligns_every_column_to_its_widest_cell() {
        let v = |label: &str, tps: Option<f64>| PiVariantSummary {
            label: label.into(),
            samples: 3,
            valid: 2,
            median_pi_wall_ms: Some(12345.6),
            median_prefill_ms: Some(80.25),
            median_prefill_tps: Some(812.5),
            median_decode_ms: Some(4000.0),
            median_decode_tps: tps,
            median_output_tokens: Some(512.0),
            median_acceptance: None,
            ..PiVariantSummary::default()
        };
        let r = PiReport {
            created: String::new(),
            mode: "decode".into(),
            prompt: String::new(),
            pi_bin: "pi".into(),
            pi_version: None,
            max_tokens: 512,
            context_window: 4096,
            order: vec![],
            samples: vec![],
            variants: vec![v("base", Some(127.75)), v("a-long-candidate-label", None)],
            warnings: vec![],
            telemetry: String::new(),
            restored: Some(true),
            interrupted_by: None,
        };
        let text = render_text(&r);
        // Every column as wide as its widest cell (a long label included: it no longer pushes its
        // row out of line), the label left, the figures right, one space between.
        let head =
            ["variant", "valid", "pi wall ms", "prefill ms", "prefill t/s", "decode ms", "decode t/s", "out", "accept"];
        let mut rows: Vec<Vec<String>> = vec![head.iter().map(|h| h.to_string()).collect()];
        for x in &r.variants {
            rows.push(vec![
                x.label.clone(),
                format!("{}/{}", x.valid, x.samples),
                num(x.median_pi_wall_ms, 1),
                num(x.median_prefill_ms, 1),
                num(x.median_prefill_tps, 1),
                num(x.median_decode_ms, 1),
                num(x.median_decode_tps, 2),
                num(x.median_output_tokens, 0),
                num(x.median_acceptance, 4),
            ]);
        }
        let widths: Vec<usize> =
            (0..head.len()).map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap()).collect();
        let mut want = String::new();
        for row in &rows {
            let cells: Vec<String> = row
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    let pad = " ".repeat(widths[i] - c.chars().count());
                    if i == 0 {
                        format!("{c}{pad}")
                    } else {
                        format!("{pad}{c}")
                    }
                })
                .collect();
            want += &(cells.join(" ") + "\n");
        }
        assert!(text.contains(&want), "{text}\nwant:\n{want}");
    }
}
