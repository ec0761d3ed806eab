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
        let throttled = (!v.throttled.is_empty()).then(|| {
            let list = v.throttled.iter().map(|i| format!("#{i}")).collect::<Vec<_>>().join(" ");
            format!("{}: throttled (decode gfx clock > 10% below the study median): {list}", v.label)
        });
        groups.push(Group { rows: t.rows.len() - first, notes: throttled.into_iter().collect() });
    }
    let source = s.telemetry.as_deref().unwrap_or(NONE);
    vec![Section::new(format!("per phase (medians over accepted samples; telemetry: {source})"))
        .id("phases")
        .grouped(t, groups)]
}
