//! The samples the rulebook rejected, one row per broken rule (docs/methodology.md §7), and the
//! retakes that replaced them (§7.19).
use super::source::Source;
use crate::report::section::Section;
use crate::report::table::{Column, Table};

pub(crate) fn sections(src: &Source) -> Vec<Section> {
    let s = src.summary;
    let mut sec = if s.rejected.is_empty() {
        Section::new("rejected samples: none (every sample taken passed every rule of docs/methodology.md §7)")
    } else {
        Section::new(
            "rejected samples (each with the rule it broke, docs/methodology.md §7; none is in the statistics)",
        )
        .table(table(src))
    };
    if let Some(r) = &s.retakes {
        sec = sec.notes([r.line()]);
    }
    vec![sec]
}

/// One row per broken rule.
fn table(src: &Source) -> Table {
    let mut t = Table::new(vec![
        Column::number("#"),
        Column::text("variant"),
        Column::text("folder"),
        Column::text("rule"),
        Column::text("reason"),
    ]);
    for r in &src.summary.rejected {
        for x in &r.reasons {
            t.push_text(vec![
                (r.index + 1).to_string(),
                r.label.clone(),
                r.dir.clone(),
                x.rule.to_string(),
                x.reason.clone(),
            ]);
        }
    }
    t
}
