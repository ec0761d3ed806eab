//! A study summary as docs/methodology.md §8 reports it: every run, mean, median, % change vs the
//! baseline with its confidence interval and verdict, then the context that makes the numbers
//! comparable.
use super::sections::verdicts::verdict_lines;
use super::sections::Depth;
use super::table::Column;
use super::{Render, Table};
use crate::summary::Summary;
use serde::Serialize;

impl Render for Summary {
    fn text(&self) -> String {
        render_text(self, Depth::Answer)
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

    /// The table for people: each row's runs at its metric's decimals, as the text prints them
    /// (JSON Lines and CSV carry them as numbers at full precision).
    fn markdown(&self) -> String {
        let mut t = self.table();
        t.set_column("runs", verdict_lines(self).iter().map(|l| super::runs(l.runs, l.metric.decimals()).into()));
        t.markdown()
    }
}

/// The summary as text: the title, then every section of the report at `depth` but the answer,
/// which the commands print after it, last ([`Answer`]). At [`Depth::Answer`] a last line names the
/// tables only `--full` (and report.md, and the page) show.
pub(crate) fn render_text(s: &Summary, depth: Depth) -> String {
    use super::sections::{answer, left_out, of_summary, Source};
    let title = super::study::StudyTitle::of(s);
    let mut o = format!("{}\n{}\n", title.heading, title.detail);
    let sections: Vec<_> = of_summary(s, depth).into_iter().filter(|x| x.id != Some(answer::ID)).collect();
    o.push_str(&super::section::text(&sections));
    let more = left_out(&Source::summary(s));
    if depth == Depth::Answer && !more.is_empty() {
        let names: Vec<String> = more.iter().map(|t| short_title(t)).collect();
        o.push_str(&format!("\nmore in summarize --full, report.md and the page: {}\n", names.join(", ")));
    }
    o
}

/// A section title's name without its detail: "per phase (medians over …)" → "per phase",
/// "decode floor: bytes one decode step reads …" → "decode floor".
fn short_title(title: &str) -> String {
    title.split(['(', ':']).next().unwrap_or(title).trim().to_string()
}

/// The full text summary: every section ([`Depth::Full`]), as `summarize --full` prints it; other
/// formats as the summary's own.
pub(crate) struct Full<'a>(pub(crate) &'a Summary);

impl Serialize for Full<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

impl Render for Full<'_> {
    fn text(&self) -> String {
        render_text(self.0, Depth::Full)
    }

    fn table(&self) -> Table {
        self.0.table()
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
