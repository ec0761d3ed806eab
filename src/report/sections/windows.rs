//! Each accepted sample's decode rate per 32-token window, with the sag, the clock change and
//! what showed a throttle (docs/methodology.md §9.8): a row per sample.
use crate::report::section::Section;
use crate::report::signed_pct;
use crate::report::table::{Column, Table};
use crate::summary::Summary;

pub(crate) fn sections(s: &Summary) -> Vec<Section> {
    if s.variants.iter().all(|v| v.decode_windows.is_empty()) {
        return Vec::new();
    }
    let mut t = Table::new(vec![
        Column::number("#"),
        Column::text("variant"),
        Column::text("tok/s per window, first → last (@ its median gfx clock)"),
        Column::number("sag"),
        Column::number("clock"),
        Column::text("throttled by"),
    ]);
    for v in &s.variants {
        for w in &v.decode_windows {
            let rates: Vec<String> = w
                .windows
                .iter()
                .map(|x| match x.gfx_clock_mhz {
                    Some(c) => format!("{:.1}@{c:.0}MHz", x.tokens_per_s),
                    None => format!("{:.1}", x.tokens_per_s),
                })
                .collect();
            t.push_text(vec![
                format!("#{}", w.index),
                v.label.clone(),
                rates.join(" "),
                signed_pct(w.sag_pct),
                signed_pct(w.clock_change_pct),
                w.throttled_by.join(", "),
            ]);
        }
    }
    let title = format!(
        "decode per {}-token window (tok/s, first → last; the window's median gfx clock where measured)",
        crate::summary::windows::WINDOW_TOKENS
    );
    vec![Section::new(title).id("decode-windows").table(t)]
}
