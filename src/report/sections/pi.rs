//! A Pi study's runs (docs/methodology.md §13): the medians over valid samples and every sample
//! with its checks, one table each for every format (`abprof pi`'s own text prints the medians
//! table too), and the study's warnings.
use super::source::Source;
use crate::report::num;
use crate::report::section::Section;
use crate::report::table::{Column, Table};
use crate::summary::pi::PiReport;

pub(crate) fn sections(src: &Source) -> Vec<Section> {
    let Some(p) = src.pi() else { return Vec::new() };
    vec![
        Section::new(format!(
            "Pi agent {} · prompt {}: medians over valid samples",
            p.pi_version.as_deref().unwrap_or("?"),
            p.prompt
        ))
        .id("pi-medians")
        .table(medians(p)),
        Section::new("Pi agent: every sample")
            .id("pi-samples")
            .table(samples(p))
            .notes(p.warnings.iter().map(|w| format!("warning: {w}"))),
    ]
}

/// The medians over valid samples, one row per variant.
pub(crate) fn medians(r: &PiReport) -> Table {
    let mut t = Table::new(vec![
        Column::text("variant"),
        Column::number("valid"),
        Column::number("pi wall ms"),
        Column::number("prefill ms"),
        Column::number("prefill t/s"),
        Column::number("decode ms"),
        Column::number("decode t/s"),
        Column::number("out"),
        Column::number("accept"),
    ]);
    for v in &r.variants {
        t.push_text(vec![
            v.label.clone(),
            format!("{}/{}", v.valid, v.samples),
            num(v.median_pi_wall_ms, 1),
            num(v.median_prefill_ms, 1),
            num(v.median_prefill_tps, 1),
            num(v.median_decode_ms, 1),
            num(v.median_decode_tps, 2),
            num(v.median_output_tokens, 0),
            num(v.median_acceptance, 4),
        ]);
    }
    t
}

/// Every sample with its checks.
fn samples(p: &PiReport) -> Table {
    let mut t = Table::new(vec![
        Column::number("#"),
        Column::text("variant"),
        Column::number("pi wall ms"),
        Column::text("exit"),
        Column::text("valid"),
        Column::text("failures"),
    ]);
    for s in &p.samples {
        t.push_text(vec![
            (s.index + 1).to_string(),
            s.label.clone(),
            format!("{:.1}", s.run.pi_wall_ms),
            s.run.pi_exit.describe(),
            if s.valid { "yes" } else { "no" }.into(),
            s.failures.join("; "),
        ]);
    }
    t
}
