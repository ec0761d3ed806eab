//! The exactness gate's result (docs/methodology.md §12): the same deterministic request to both
//! variants, one row per side, and the yardstick's top-1 agreement and KL where measured.
use super::source::Source;
use crate::exactness::ExactnessReport;
use crate::report::section::Section;
use crate::report::table::{Column, Table};
use crate::report::NONE;

pub(crate) fn sections(src: &Source) -> Vec<Section> {
    let Some(x) = src.exactness() else { return Vec::new() };
    let mut sec = Section::new(format!("exactness (exactness.json): {} — gate {}", x.headline, x.gate.name()));
    if let Some(y) = &x.comparison.yardstick {
        if let (Some(top1), Some(kl)) = (y.same_top1_pct, y.kl_mean) {
            let pass = match y.pass {
                Some(true) => "pass",
                Some(false) => "FAIL",
                None => "not judged",
            };
            sec = sec.notes([format!(
                "same top-1 {top1:.1}%, top-k KL mean {kl:.3e} — {pass} for class {}",
                y.class.name()
            )]);
        }
    }
    vec![sec.id("exactness-gate").table(table(x))]
}

fn table(x: &ExactnessReport) -> Table {
    let mut t = Table::new(vec![
        Column::text("side"),
        Column::text("variant"),
        Column::text("binary sha256"),
        Column::number("prompt tokens"),
        Column::number("generated"),
        Column::text("finish"),
    ]);
    for (side, r) in [("baseline", &x.baseline), ("candidate", &x.candidate)] {
        t.push_text(vec![
            side.into(),
            r.label.clone(),
            r.binary_sha256.as_deref().map_or(NONE.into(), |s| s.chars().take(16).collect()),
            r.prompt_tokens.map_or(NONE.into(), |n| n.to_string()),
            r.completion_tokens.map_or(NONE.into(), |n| n.to_string()),
            r.finish_reason.clone().unwrap_or_else(|| NONE.into()),
        ]);
    }
    t
}
