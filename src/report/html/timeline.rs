//! One sample's telemetry over its request: a panel per field the series holds, prefill (request
//! → first token) and decode (first → last token) shaded, on one time axis.
use super::chart::{padded, svg, tick, ChartError, AXIS_TEXT, DECODE_SHADE, FONT, PREFILL_SHADE, WIDTH};
use crate::summary::view::{SampleTimeline, SampleView};
use crate::telemetry::Field;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

const PANEL: u32 = 150;
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
    // Seconds once a request runs longer than 10 s: five-digit ms ticks are hard to read.
    let (per, unit) = if x1 - x0 > 10_000.0 { (1000.0, "s") } else { (1.0, "ms") };
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
            let mut c = ChartBuilder::on(area)
                .margin_left(12)
                .margin_right(20)
                .margin_top(6)
                .x_label_area_size(if i == last { 40 } else { 18 })
                .y_label_area_size(84)
                .build_cartesian_2d(x0..x1, lo..hi)?;
            let y_fmt = |y: &f64| tick(*y, hi - lo);
            let x_fmt = |x: &f64| tick(*x, x1 - x0);
            let mut mesh = c.configure_mesh();
            mesh.y_desc(axis_name(s.field))
                .y_labels(4)
                .y_label_formatter(&y_fmt)
                .x_label_formatter(&x_fmt)
                .axis_desc_style((FONT, 15))
                .label_style((FONT, 15))
                .light_line_style(RGBColor(240, 240, 240));
            if i == last {
                mesh.x_desc(format!("{unit} since the request was sent"));
            }
            mesh.draw()?;
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
            let colour = line_colour(s.field);
            c.draw_series(LineSeries::new(s.points.iter().map(at), colour.stroke_width(2)))?;
            if s.points.len() <= 120 {
                c.draw_series(s.points.iter().map(|p| Circle::new(at(p), 3, colour.filled())))?;
            }
        }
        Ok(())
    }))
}
