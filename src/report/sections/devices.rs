//! A server on several GPUs (docs/methodology.md §9.11): each device's phase figures, as a table
//! of the one table model, drawn by `summarize`'s text and by the study report (HTML and
//! Markdown) alike.
use crate::report::num;
use crate::report::section::Section;
use crate::report::table::Table;
use crate::summary::Summary;

/// The per-device section, where a server ran on several GPUs.
pub(crate) fn sections(s: &Summary) -> Vec<Section> {
    per_device(s)
        .map(|t| {
            Section::new("per device (medians over accepted samples; the per-phase figures are their sum; §9.11)")
                .id("devices")
                .table(t)
        })
        .into_iter()
        .collect()
}

/// Per variant, device and phase: power, busy, peak temperature, clocks and J/token, medians over
/// accepted samples; `None` when no variant's server ran on several devices, so other studies'
/// documents stay as they were. The per-phase table holds their sum.
pub(crate) fn per_device(s: &Summary) -> Option<Table> {
    if s.variants.iter().all(|v| v.devices.is_empty()) {
        return None;
    }
    let mut t = Table::of_cells(
        &["variant", "device", "phase", "power W", "busy %", "peak °C", "gfx MHz min/med/max", "J/token"],
        &[3, 4, 5, 7],
    );
    for v in &s.variants {
        for d in &v.devices {
            for (name, p) in [("prefill", &d.prefill), ("decode", &d.decode)] {
                let Some(p) = p else { continue };
                let clocks =
                    crate::report::clock_range(p.gfx_clock_min_mhz, p.gfx_clock_median_mhz, p.gfx_clock_max_mhz);
                t.push_text(vec![
                    v.label.clone(),
                    format!("GPU {}", d.index),
                    name.into(),
                    num(p.mean_power_w, 1),
                    num(p.mean_busy_pct, 1),
                    num(p.peak_temp_c, 1),
                    clocks,
                    num(p.j_per_token, 4),
                ]);
            }
        }
    }
    Some(t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::table::Text;
    use crate::summary::devices::DeviceFigures;
    use crate::summary::phases::PhaseFigures;

    #[test]
    fn each_device_of_a_server_on_several_gpus_gets_its_rows() {
        let mut s = crate::report::sections::testing::recorded_summary();
        assert!(per_device(&s).is_none(), "one device: the documents stay as they were");
        let decode = |w: f64, j: f64| PhaseFigures {
            samples: 3,
            mean_power_w: Some(w),
            j_per_token: Some(j),
            ..PhaseFigures::default()
        };
        s.variants[1].devices = vec![
            DeviceFigures { index: 0, prefill: None, decode: Some(decode(291.0, 5.82)) },
            DeviceFigures { index: 1, prefill: None, decode: Some(decode(145.5, 2.91)) },
        ];
        let t = per_device(&s).unwrap();
        let text = t.render(&Text::of(&t, "  ", true));
        assert_eq!(t.rows.len(), 2);
        let rows: Vec<&str> = text.lines().filter(|l| l.contains(s.variants[1].label.as_str())).collect();
        assert!(rows.len() == 2 && rows[0].contains("GPU 0") && rows[1].contains("GPU 1"), "{text}");
        assert!(rows.iter().all(|r| r.contains("decode")), "{text}");
        assert!(text.contains("291.0") && text.contains("2.9100") && text.contains("GPU 1"), "{text}");
    }
}
