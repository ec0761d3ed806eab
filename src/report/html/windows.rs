//! Decode under heat drawn (docs/methodology.md §9.8): one variant's accepted samples, each one's
//! decode rate per window of streamed tokens, with the gfx clock, power and temperature inside
//! each window in panels below, on one time axis from the decode's first token. A signal no window
//! measured gets no panel; the page says so in a line under the chart.
use super::chart::{
    line_with_dots, padded, series_colour, stacked_panel, svg, time_unit, ChartError, Signal, AXIS_TEXT, FONT, PANEL,
    WIDTH,
};
use super::markup::{esc, figure};
use super::timeline::axis_name;
use crate::report::number::signed_pct;
use crate::summary::windows::{DecodeWindow, SampleWindows, WINDOW_TOKENS};
use crate::telemetry::Field;
use plotters::prelude::*;
use std::fmt::Write;

const TITLE: u32 = 34;
/// One legend row per sample.
const ROW: u32 = 22;

const DECODE: &str = "decode (tok/s)";
/// The windows' temperature is the hottest reading (GPU, hotspot or memory; summary::windows).
const TEMP: &str = "hottest temp (°C)";

/// The telemetry panels, in drawing order.
fn telemetry() -> [Signal<DecodeWindow>; 3] {
    [
        Signal { name: axis_name(Field::GfxClockMhz), of: |w| w.gfx_clock_mhz },
        Signal { name: axis_name(Field::PowerW), of: |w| w.power_w },
        Signal { name: TEMP, of: |w| w.temp_c },
    ]
}

fn measured(samples: &[SampleWindows], s: &Signal<DecodeWindow>) -> bool {
    samples.iter().flat_map(|x| &x.windows).any(|w| (s.of)(w).is_some())
}

/// The telemetry signals no window of `samples` measured, by axis name.
fn unmeasured(samples: &[SampleWindows]) -> Vec<&'static str> {
    telemetry().into_iter().filter(|s| !measured(samples, s)).map(|s| s.name).collect()
}

/// A sample's legend entry: its index, sag, clock change (where measured) and throttle signals.
fn legend(x: &SampleWindows) -> String {
    let mut l = format!("#{} · sag {}", x.index, signed_pct(x.sag_pct));
    if let Some(c) = x.clock_change_pct {
        let _ = write!(l, " · clock {}", signed_pct(Some(c)));
    }
    match x.throttled_by.as_slice() {
        [] => l.push_str(" · not throttled"),
        by => {
            let _ = write!(l, " · throttled by {}", by.join(", "));
        }
    }
    l
}

/// The chart of one variant's samples, or `None` when none has a window.
pub(crate) fn chart(label: &str, samples: &[SampleWindows]) -> Option<Result<String, ChartError>> {
    if samples.iter().all(|x| x.windows.is_empty()) {
        return None;
    }
    let decode: Signal<DecodeWindow> = Signal { name: DECODE, of: |w| Some(w.tokens_per_s) };
    let signals: Vec<Signal<DecodeWindow>> =
        std::iter::once(decode).chain(telemetry().into_iter().filter(|s| measured(samples, s))).collect();
    let end_ms = samples.iter().flat_map(|x| &x.windows).map(|w| w.end_ms).fold(0.0, f64::max);
    let (per, unit) = time_unit(end_ms);
    let x_range = (0.0, end_ms.max(f64::MIN_POSITIVE) / per);
    // Each window at its middle, the value its rate or its telemetry's median.
    let points = |sample: &SampleWindows, s: &Signal<DecodeWindow>| -> Vec<(f64, f64)> {
        sample.windows.iter().filter_map(|w| Some(((w.start_ms + w.end_ms) / 2.0 / per, (s.of)(w)?))).collect()
    };
    let legend_h = ROW * samples.len() as u32 + 8;
    let height = TITLE + legend_h + signals.len() as u32 * PANEL + 30;
    Some(svg("decode windows", (WIDTH, height), |root| {
        let (top, rest) = root.split_vertically(TITLE);
        top.draw(&Text::new(
            format!("{label} · decode per {WINDOW_TOKENS}-token window, accepted samples"),
            (12, 10),
            (FONT, 18).into_font().color(&AXIS_TEXT),
        ))?;
        let (key, body) = rest.split_vertically(legend_h);
        for (i, sample) in samples.iter().enumerate() {
            let y = (i as u32 * ROW) as i32;
            key.draw(&Rectangle::new([(104, y + 4), (130, y + 14)], series_colour(i).filled()))?;
            key.draw(&Text::new(legend(sample), (138, y), (FONT, 15).into_font().color(&AXIS_TEXT)))?;
        }
        let areas = body.split_evenly((signals.len(), 1));
        let last = areas.len() - 1;
        let x_desc = format!("{unit} after the decode's first token");
        for (i, (area, s)) in areas.iter().zip(&signals).enumerate() {
            let y = padded(samples.iter().flat_map(|sample| points(sample, s)).map(|p| p.1), false);
            let mut c = stacked_panel(area, x_range, y, s.name, (i == last).then_some(&*x_desc))?;
            for (j, sample) in samples.iter().enumerate() {
                line_with_dots(&mut c, &points(sample, s), series_colour(j))?;
            }
        }
        Ok(())
    }))
}

/// One variant's chart on the page with its caption, and the line naming the signals no window
/// measured.
pub(super) fn variant_figure(o: &mut String, label: &str, samples: &[SampleWindows]) {
    let Some(drawn) = chart(label, samples) else { return };
    figure(
        o,
        drawn,
        &format!(
            "{}: each accepted sample's decode rate per {WINDOW_TOKENS} streamed tokens, drawn at the window's middle, \
             with the medians of the gfx clock, power and hottest temperature read inside the window; sag: the last \
             window's rate against the first's, beside it the clock's change (docs/methodology.md §9.8)",
            esc(label)
        ),
    );
    let missing = unmeasured(samples);
    if !missing.is_empty() {
        let _ = writeln!(o, "<p class=\"absent\">{}: {} not measured on this host</p>", esc(label), missing.join(", "));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Four windows of 100 ms, the rate falling from `r0` by 5 tok/s a window, each with the
    /// telemetry when `telemetry`.
    fn sample(index: usize, r0: f64, telemetry: bool) -> SampleWindows {
        let windows = (0..4)
            .map(|k| DecodeWindow {
                start_ms: k as f64 * 100.0,
                end_ms: (k + 1) as f64 * 100.0,
                tokens_per_s: r0 - 5.0 * k as f64,
                gfx_clock_mhz: telemetry.then_some(1980.0 - 30.0 * k as f64),
                power_w: telemetry.then_some(600.0),
                temp_c: telemetry.then_some(60.0 + k as f64),
            })
            .collect();
        crate::summary::windows::sample_windows(index, windows, Vec::new())
    }

    /// The data lines of `colour` (stroke width 2; the mesh and axes are 1 px).
    fn lines(svg: &str, colour: RGBColor) -> usize {
        let RGBColor(r, g, b) = colour;
        svg.matches(&format!(
            "<polyline fill=\"none\" opacity=\"1\" stroke=\"#{r:02X}{g:02X}{b:02X}\" stroke-width=\"2\""
        ))
        .count()
    }

    #[test]
    fn each_sample_is_a_line_in_the_decode_panel_and_in_each_measured_signals() {
        let samples = [sample(2, 100.0, true), sample(5, 90.0, true)];
        let mut page = String::new();
        variant_figure(&mut page, "q8_0", &samples);
        assert_eq!(page.matches("<svg").count(), 1, "{page}");
        for name in [DECODE, "gfx clock (MHz)", "power (W)", TEMP] {
            assert!(page.contains(name), "no {name} axis: {page}");
        }
        assert!(page.contains("ms after the decode"), "{page}");
        // One line per sample in each of the four panels.
        assert_eq!((lines(&page, series_colour(0)), lines(&page, series_colour(1))), (4, 4), "{page}");
        // The legend: 100 → 85 tok/s is −15%, the clock 1980 → 1890 MHz −4.55%.
        assert!(page.contains("#2 · sag -15.00% · clock -4.55% · throttled by decode rate"), "{page}");
        assert!(page.contains("#5 · sag -16.67%"), "{page}");
        assert!(page.contains("<figcaption>q8_0: each accepted sample"), "{page}");
        assert!(!page.contains("not measured"), "{page}");
    }

    #[test]
    fn without_telemetry_only_the_decode_panel_is_drawn_and_the_page_says_what_is_missing() {
        let samples = [sample(1, 100.0, false), sample(3, 50.0, false)];
        let mut page = String::new();
        variant_figure(&mut page, "f16", &samples);
        assert_eq!(page.matches("<svg").count(), 1, "{page}");
        let svg = &page[..page.find("</svg>").unwrap()];
        assert!(svg.contains("decode (tok/s)"), "{page}");
        assert!(!svg.contains("gfx clock (MHz)") && !svg.contains("power (W)") && !svg.contains(TEMP), "{page}");
        assert_eq!((lines(&page, series_colour(0)), lines(&page, series_colour(1))), (1, 1), "{page}");
        assert!(page.contains("#1 · sag -15.00% · throttled by decode rate"), "{page}");
        assert!(
            page.contains(
                "<p class=\"absent\">f16: gfx clock (MHz), power (W), hottest temp (°C) not measured on this host</p>"
            ),
            "{page}"
        );
        assert!(chart("f16", &[]).is_none(), "no window, no chart");
    }
}
