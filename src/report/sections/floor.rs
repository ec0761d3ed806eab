//! Each variant's decode step against its bandwidth floor, then the inputs one by one so a
//! reader can redo the division (docs/methodology.md §18).
use crate::report::roofline::{bandwidth_line, byte_lines, grouped};
use crate::report::section::Section;
use crate::report::table::{Column, Table};
use crate::report::{num, NONE};
use crate::summary::Summary;

pub(crate) fn sections(s: &Summary) -> Vec<Section> {
    if s.variants.iter().all(|v| v.floor.is_none()) {
        return Vec::new();
    }
    let mut t = Table::new(vec![
        Column::text("variant"),
        Column::number("ms/step"),
        Column::number("floor ms"),
        Column::number("% of floor"),
        Column::number("achieved GB/s"),
        Column::number("bytes/step"),
        Column::number("context"),
        Column::text("KV"),
    ]);
    for v in &s.variants {
        let Some(fl) = &v.floor else { continue };
        t.push_text(vec![
            v.label.clone(),
            num(fl.ms_per_step, 3),
            num(fl.floor_ms, 3),
            fl.pct_of_floor.map_or(NONE.into(), |p| format!("{p:.1}%")),
            num(fl.achieved_gb_per_s, 2),
            fl.bytes.as_ref().map_or(NONE.into(), |b| grouped(b.total.round() as u64)),
            num(fl.context_tokens, 1),
            fl.kv.as_ref().map_or(NONE.into(), |k| k.types()),
        ]);
    }
    let title = "decode floor: bytes one decode step reads ÷ memory bandwidth (docs/methodology.md §18)";
    let (notes, bytes) = inputs(s);
    vec![Section::new(title).table(t).notes(notes).pre(bytes)]
}

/// Under the table: the bandwidth (once when every variant shares it) and the caveats, then each
/// variant's bytes per step.
fn inputs(s: &Summary) -> (Vec<String>, Vec<String>) {
    let mut o = Vec::new();
    let mut bytes = Vec::new();
    // Below 100% the step read its bytes faster than memory streams them (docs/methodology.md §18).
    if s.variants.iter().any(|v| v.floor.as_ref().and_then(|f| f.pct_of_floor).is_some_and(|p| p < 100.0)) {
        o.push("under 100% of floor: the step read its bytes faster than memory streams them, because they stayed in the CPU's caches (a model that fits in them, as on the test bed): the floor only bounds a model larger than the caches".to_string());
    }
    let bandwidths: Vec<_> = s.variants.iter().filter_map(|v| v.floor.as_ref()?.bandwidth.as_ref()).collect();
    let shared = bandwidths.windows(2).all(|p| p[0] == p[1]) && bandwidths.len() == s.variants.len();
    if let Some(b) = bandwidths.first().filter(|_| shared) {
        o.push(format!("bandwidth ({}): {}", b.target.describe(), bandwidth_line(b)));
    }
    for v in &s.variants {
        let Some(fl) = &v.floor else { continue };
        if let (Some(wb), Some(kv), Some(b), Some(c)) = (&fl.weights, &fl.kv, &fl.bytes, fl.context_tokens) {
            bytes.push(format!("{} reads per step:", v.label));
            let mut lines = String::new();
            byte_lines(&mut lines, "  ", wb, kv, c, b);
            bytes.extend(lines.lines().map(String::from));
        }
        if let Some(b) = fl.bandwidth.as_ref().filter(|_| !shared) {
            o.push(format!("{} bandwidth ({}): {}", v.label, b.target.describe(), bandwidth_line(b)));
        }
        for c in fl.caveats.iter().filter(|c| !fl.weights.as_ref().is_some_and(|w| w.caveats.contains(c))) {
            o.push(format!("! {}: {c}", v.label));
        }
        for m in &fl.missing {
            o.push(format!("! {}: no floor: {m}", v.label));
        }
    }
    (o, bytes)
}
