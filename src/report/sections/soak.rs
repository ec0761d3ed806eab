//! The soak's rate per request and its drift (docs/methodology.md §4.2), as tables of the one
//! table model: drawn by `summarize`'s text and by the study report (HTML and Markdown) alike.
use crate::report::section::Section;
use crate::report::table::Table;
use crate::report::{num, NONE};
use crate::summary::Summary;

/// The caption's note where the host measured no temperature, power or clock (the CPU test bed).
pub(crate) fn unmeasured_note(s: &Summary) -> Option<&'static str> {
    let soaks = s.variants.iter().filter_map(|v| v.soak.as_ref());
    let none = soaks
        .flat_map(|k| &k.requests)
        .all(|r| r.start_temp_c.is_none() && r.power_w.is_none() && r.gfx_clock_mhz.is_none());
    none.then_some("device temperature, power and clock: not measured on this host")
}

/// The soak's two sections: each variant's drift, then its requests (the page draws its chart
/// under the second, `soak`).
pub(crate) fn sections(s: &Summary) -> Vec<Section> {
    let (Some(d), Some(r)) = (drift(s), per_request(s)) else { return Vec::new() };
    vec![
        Section::new(
            "Soak (§4.2): the decode rate's fitted change from request 2 to the last (the first is the cold server's warm-up)",
        )
        .table(d),
        Section::new("Soak: each request, medians over accepted samples")
            .id("soak")
            .notes(unmeasured_note(s).map(|n| format!("({n})")))
            .table(r),
    ]
}

/// Each variant's drift, the decode rate's fitted change from request 2 to N, with its interval;
/// `None` outside the soak.
pub(crate) fn drift(s: &Summary) -> Option<Table> {
    if s.variants.iter().all(|v| v.soak.is_none()) {
        return None;
    }
    let mut t =
        Table::of_cells(&["variant", "samples", "requests", "decode drift, request 2 → N", "95% CI"], &[1, 2, 3, 4]);
    let pct = |x: f64| format!("{x:+.2}%");
    for v in &s.variants {
        let Some(k) = &v.soak else { continue };
        t.push_text(vec![
            v.label.clone(),
            k.drift_pct.len().to_string(),
            k.requests.len().to_string(),
            k.drift_pct_median.map_or(NONE.into(), pct),
            k.drift_ci_pct.map_or(NONE.into(), |[lo, hi]| format!("[{}, {}]", pct(lo), pct(hi))),
        ]);
    }
    Some(t)
}

/// Each variant's requests in order: decode and prefill rate, the device's temperature at the
/// request's start, power and gfx clock over it (medians over accepted samples); `None` outside
/// the soak.
pub(crate) fn per_request(s: &Summary) -> Option<Table> {
    if s.variants.iter().all(|v| v.soak.is_none()) {
        return None;
    }
    let mut t = Table::of_cells(
        &["variant", "request", "decode tok/s", "prefill tok/s", "start °C", "power W", "gfx MHz"],
        &[1, 2, 3, 4, 5, 6],
    );
    for v in &s.variants {
        let Some(k) = &v.soak else { continue };
        for r in &k.requests {
            t.push_text(vec![
                v.label.clone(),
                r.request.to_string(),
                num(r.decode_tps, 2),
                num(r.prefill_tps, 1),
                num(r.start_temp_c, 1),
                num(r.power_w, 1),
                num(r.gfx_clock_mhz, 0),
            ]);
        }
    }
    Some(t)
}
