//! The soak drawn (docs/methodology.md §4.2): each variant's rate per request, medians over its
//! accepted samples, with the device's temperature at each request's start, power and gfx clock in
//! panels below, on one axis of the requests in the order sent. A signal no request measured gets
//! no panel.
use super::chart::{
    line_with_dots, padded, stacked_panel, svg, variant_colour, ChartError, Signal, AXIS_TEXT, FONT, PANEL, WIDTH,
};
use crate::summary::soak::SoakRequestLine;
use crate::summary::Summary;
use plotters::prelude::*;

const TITLE: u32 = 34;

const SIGNALS: [Signal<SoakRequestLine>; 5] = [
    Signal { name: "decode (tok/s)", of: |r| r.decode_tps },
    Signal { name: "prefill (tok/s)", of: |r| r.prefill_tps },
    Signal { name: "start temp (°C)", of: |r| r.start_temp_c },
    Signal { name: "power (W)", of: |r| r.power_w },
    Signal { name: "gfx clock (MHz)", of: |r| r.gfx_clock_mhz },
];

/// The chart of every variant's soak, or `None` outside the soak.
pub(crate) fn chart(s: &Summary) -> Option<Result<String, ChartError>> {
    let soaks: Vec<(usize, &str, &[SoakRequestLine])> = s
        .variants
        .iter()
        .enumerate()
        .filter_map(|(i, v)| v.soak.as_ref().map(|k| (i, v.label.as_str(), k.requests.as_slice())))
        .filter(|(_, _, r)| !r.is_empty())
        .collect();
    if soaks.is_empty() {
        return None;
    }
    let points = |requests: &[SoakRequestLine], s: &Signal<SoakRequestLine>| -> Vec<(f64, f64)> {
        requests.iter().filter_map(|r| Some((r.request as f64, (s.of)(r)?))).collect()
    };
    let drawn: Vec<&Signal<SoakRequestLine>> =
        SIGNALS.iter().filter(|sig| soaks.iter().any(|(_, _, r)| !points(r, sig).is_empty())).collect();
    let n = soaks.iter().map(|(_, _, r)| r.len()).max().unwrap_or(1) as f64;
    let height = TITLE + drawn.len() as u32 * PANEL + 30;
    Some(svg("soak", (WIDTH, height), |root| {
        let (top, body) = root.split_vertically(TITLE);
        let names: Vec<&str> = soaks.iter().map(|(_, l, _)| *l).collect();
        top.draw(&Text::new(
            format!("soak · {} · each request, medians over accepted samples", names.join(", ")),
            (12, 10),
            (FONT, 18).into_font().color(&AXIS_TEXT),
        ))?;
        let areas = body.split_evenly((drawn.len(), 1));
        let last = areas.len() - 1;
        for (i, (area, sig)) in areas.iter().zip(&drawn).enumerate() {
            let y = padded(soaks.iter().flat_map(|(_, _, r)| points(r, sig)).map(|p| p.1), false);
            let mut c = stacked_panel(area, (0.5, n + 0.5), y, sig.name, (i == last).then_some("request"))?;
            for (vi, _, requests) in &soaks {
                line_with_dots(&mut c, &points(requests, sig), variant_colour(*vi))?;
            }
        }
        Ok(())
    }))
}
