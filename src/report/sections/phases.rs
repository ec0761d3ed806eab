//! Telemetry per phase (docs/methodology.md §9.6): each variant's prefill and decode power,
//! busy, server CPU, peak temperature, clocks and J/token, its throttled samples under its rows.
use crate::report::section::{Group, Section};
use crate::report::table::{Column, Table};
use crate::report::{clock_range, num, NONE};
use crate::summary::Summary;

pub(crate) fn sections(s: &Summary) -> Vec<Section> {
    if s.variants.iter().all(|v| v.decode.is_none()) {
        return Vec::new();
    }
    let mut t = Table::new(vec![
        Column::text("variant"),
        Column::text("phase"),
        Column::number("power W"),
        Column::number("busy %"),
        Column::number("server CPU%"),
        Column::number("peak °C"),
        Column::number("gfx MHz min/med/max"),
        Column::number("J/token"),
        Column::text("energy from"),
    ]);
    let mut groups = Vec::new();
    for v in &s.variants {
        let first = t.rows.len();
        for (name, p) in [("prefill", &v.prefill), ("decode", &v.decode)] {
            let Some(p) = p else { continue };
            t.push_text(vec![
                v.label.clone(),
                name.into(),
                num(p.mean_power_w, 1),
                num(p.mean_busy_pct, 1),
                num(p.mean_cpu_pct, 1),
                num(p.peak_temp_c, 1),
                clock_range(p.gfx_clock_min_mhz, p.gfx_clock_median_mhz, p.gfx_clock_max_mhz),
                num(p.j_per_token, 4),
                p.energy_from.clone().unwrap_or_else(|| NONE.into()),
            ]);
        }
        let throttled = (!v.throttled.is_empty()).then(|| throttled_note(v));
        let residency = v.decode.as_ref().filter(|d| !d.throttle.is_empty()).map(|d| {
            let each: Vec<String> = d.throttle.iter().map(|t| format!("{} {:.0}", t.limit, t.ticks)).collect();
            format!(
                "{}: decode throttle residency (the firmware's ticks, median per sample): {}",
                v.label,
                each.join(", ")
            )
        });
        groups.push(Group { rows: t.rows.len() - first, notes: throttled.into_iter().chain(residency).collect() });
    }
    let source = s.telemetry.as_deref().unwrap_or(NONE);
    vec![Section::new(format!("per phase (medians over accepted samples; telemetry: {source})"))
        .id("phases")
        .grouped(t, groups)]
}

/// The throttled samples and what throttled each (docs/methodology.md §9.5): the firmware's
/// limits where the source counts their residency, else the clock's sag.
fn throttled_note(v: &crate::summary::VariantSummary) -> String {
    let each: Vec<String> = if v.throttled_by.is_empty() {
        v.throttled.iter().map(|i| format!("#{i} (gfx clock)")).collect()
    } else {
        v.throttled_by.iter().map(|(i, by)| format!("#{i} ({})", by.join(", "))).collect()
    };
    format!(
        "{}: throttled during decode (the firmware's limit, or a gfx clock > 10% below the study median): {}",
        v.label,
        each.join(" ")
    )
}
