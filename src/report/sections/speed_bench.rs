//! SPEED-Bench's sections (docs/methodology.md §4.3): the upstream client's summary per category
//! and variant, and per candidate the upstream compare script's speedups beside the study's own
//! interval of each category's decode rate; in that workload only.
use crate::report::number::{ci_pct, num, signed_pct, NONE};
use crate::report::section::Section;
use crate::report::table::Table;
use crate::summary::Summary;

pub(crate) fn sections(s: &Summary) -> Vec<Section> {
    if s.variants.iter().all(|v| v.speed_bench.is_none()) {
        return Vec::new();
    }
    let mut out = vec![Section::new(
        "SPEED-Bench (§4.3): per category, the accepted samples' requests (the upstream client's summary)",
    )
    .table(categories(s))];
    if let Some(t) = speedups(s) {
        out.push(
            Section::new(
                "SPEED-Bench against the baseline: the compare script's speedups (ratios of means) beside the study's paired 95% interval of each category's decode rate (each at 95% on its own)",
            )
            .table(t),
        );
    }
    out
}

/// Every variant's rows: one per category, then the overall row.
fn categories(s: &Summary) -> Table {
    let mut t = Table::of_cells(
        &[
            "variant",
            "category",
            "requests",
            "prefill tok/s (mean)",
            "decode tok/s (mean)",
            "latency s (mean)",
            "drafted",
            "accepted",
            "acceptance",
        ],
        &[2, 3, 4, 5, 6, 7, 8],
    );
    for v in &s.variants {
        let Some(b) = &v.speed_bench else {
            // A variant with no accepted SPEED-Bench sample keeps its row, with nothing in it.
            let mut row = vec![v.label.clone(), NONE.into(), "0".into()];
            row.extend(std::iter::repeat_n(NONE.to_string(), 6));
            t.push_text(row);
            continue;
        };
        for c in &b.categories {
            t.push_text(vec![
                v.label.clone(),
                c.category.clone(),
                c.requests.to_string(),
                num(c.prompt_tps_mean, 1),
                num(c.decode_tps_mean, 2),
                num(c.latency_ms_mean.map(|ms| ms / 1000.0), 2),
                c.drafted.to_string(),
                c.accepted.to_string(),
                c.acceptance.map_or_else(|| NONE.into(), |a| format!("{:.1}%", a * 100.0)),
            ]);
        }
    }
    t
}

/// Every candidate's rows against the baseline; `None` when no candidate has them.
fn speedups(s: &Summary) -> Option<Table> {
    let mut t = Table::of_cells(
        &["candidate", "category", "decode speedup", "latency speedup", "decode change", "95% CI"],
        &[2, 3, 4, 5],
    );
    let times = |x: Option<f64>| x.map_or_else(|| NONE.into(), |x| format!("{x:.3}×"));
    let mut any = false;
    for v in s.variants.iter().skip(1) {
        for c in v.speed_bench.iter().flat_map(|b| &b.changes) {
            any = true;
            t.push_text(vec![
                v.label.clone(),
                c.category.clone(),
                times(c.decode_speedup),
                times(c.latency_speedup),
                signed_pct(c.decode_change.map(|ci| ci.center_pct())),
                ci_pct(c.decode_change),
            ]);
        }
    }
    any.then_some(t)
}
