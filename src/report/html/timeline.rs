//! One sample's telemetry over its request: a panel per field the series holds, prefill (request
//! → first token) and decode (first → last token) shaded, on one time axis.
use super::chart::{
    line_with_dots, padded, stacked_panel, svg, time_unit, ChartError, AXIS_TEXT, DECODE_SHADE, FONT, PANEL,
    PREFILL_SHADE, WIDTH,
};
use crate::summary::view::{SampleTimeline, SampleView};
use crate::telemetry::Field;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

const CAPTION: u32 = 34;

/// What a field is, in words and units, on its axis.
pub(crate) fn axis_name(f: Field) -> &'static str {
    match f {
        Field::PowerW => "power (W)",
        Field::PowerAvgW => "avg power (W)",
        Field::BusyPct => "GPU busy (%)",
        Field::MemBusyPct => "memory busy (%)",
        Field::GfxClockMhz => "gfx clock (MHz)",
        Field::TempGpuC => "GPU temp (°C)",
        Field::TempHotspotC => "hotspot (°C)",
        Field::CpuPct => "server CPU (% of a core)",
        other => other.name(),
    }
}

fn line_colour(f: Field) -> RGBColor {
    match f {
        Field::PowerW | Field::PowerAvgW => RGBColor(214, 39, 40),
        Field::BusyPct | Field::MemBusyPct => RGBColor(44, 160, 44),
        Field::GfxClockMhz => RGBColor(148, 103, 189),
        Field::TempGpuC | Field::TempHotspotC => RGBColor(255, 127, 14),
        _ => RGBColor(31, 119, 180),
    }
}

/// The chart of one sample, or `None` when its series holds no value to draw.
pub(crate) fn chart(sample: &SampleView, t: &SampleTimeline) -> Option<Result<String, ChartError>> {
    if t.series.is_empty() {
        return None;
    }
    let panels = t.series.len() as u32;
    let height = CAPTION + panels * PANEL + 30;
    let spans = [t.prefill_ms, t.decode_ms];
    let (x0, x1) = {
        let xs = t.series.iter().flat_map(|s| s.points.iter().map(|p| p.0));
        let (lo, hi) = padded(xs.chain(spans.iter().flatten().flatten().copied()), false);
        (lo.min(0.0), hi)
    };
    let (per, unit) = time_unit(x1 - x0);
    let (x0, x1) = (x0 / per, x1 / per);
    let at = |p: &(f64, f64)| (p.0 / per, p.1);
    let span = |s: Option<[f64; 2]>| s.map(|[a, b]| [a / per, b / per]);
    Some(svg("timeline", (WIDTH, height), |root| {
        let status = format!("{:?}", sample.status).to_lowercase();
        let (top, body) = root.split_vertically(CAPTION);
        top.draw(&Text::new(
            format!("#{} {} ({status}) · {} at {:.0} Hz", sample.index, sample.label, t.source, t.achieved_hz),
            (12, 10),
            (FONT, 18).into_font().color(&AXIS_TEXT),
        ))?;
        let areas = body.split_evenly((t.series.len(), 1));
        let last = areas.len() - 1;
        for (i, (area, s)) in areas.iter().zip(&t.series).enumerate() {
            let (lo, hi) = padded(s.points.iter().map(|p| p.1), matches!(s.field, Field::BusyPct | Field::CpuPct));
            let x_desc = format!("{unit} since the request was sent");
            let mut c = stacked_panel(area, (x0, x1), (lo, hi), axis_name(s.field), (i == last).then_some(&*x_desc))?;
            for (span, shade, name) in
                [(span(t.prefill_ms), PREFILL_SHADE, "prefill"), (span(t.decode_ms), DECODE_SHADE, "decode")]
            {
                let Some([a, b]) = span else { continue };
                c.draw_series(std::iter::once(Rectangle::new([(a, lo), (b, hi)], shade.mix(0.6).filled())))?;
                if i == 0 {
                    c.draw_series(std::iter::once(Text::new(
                        name.to_string(),
                        (a, hi),
                        (FONT, 15).into_font().color(&AXIS_TEXT).pos(Pos::new(HPos::Left, VPos::Top)),
                    )))?;
                }
            }
            line_with_dots(&mut c, &s.points.iter().map(at).collect::<Vec<_>>(), line_colour(s.field))?;
        }
        Ok(())
    }))
}
