//! How the samples were taken: the run order, the telemetry, the isolation hooks' outcome and the
//! driver's dead time per sample (docs/methodology.md §5, §9, §11).
use super::source::Source;
use crate::report::section::Section;
use crate::report::table::{Column, Table};
use crate::report::NONE;
use crate::study::evidence::AttemptStatus;

pub(crate) fn sections(src: &Source) -> Vec<Section> {
    let s = src.summary;
    let mut t = Table::new(vec![Column::text("fact"), Column::text("value")]);
    let order: Vec<&str> =
        s.order.iter().filter(|e| e.status != AttemptStatus::Interrupted).map(|e| e.label.as_str()).collect();
    t.push_text(vec!["run order".into(), if order.is_empty() { NONE.into() } else { order.join(" ") }]);
    t.push_text(vec!["telemetry".into(), s.telemetry.clone().unwrap_or_else(|| NONE.into())]);
    t.push_text(vec!["isolation".into(), isolation_status(s.isolation_restored).into()]);
    if let (Some(med), Some(max)) = (s.dead_time_ms_median, s.dead_time_ms_max) {
        t.push_text(vec![
            "driver dead time per sample (all but start-up and the request)".into(),
            format!("median {med:.1} ms, max {max:.1} ms"),
        ]);
    }
    vec![Section::new("run").id("run-facts").table(t)]
}

pub(crate) fn isolation_status(restored: Option<bool>) -> &'static str {
    match restored {
        Some(true) => "restore and verify hooks succeeded",
        Some(false) => "RESTORE OR VERIFY FAILED: every sample is rejected",
        None => "no hooks recorded",
    }
}
