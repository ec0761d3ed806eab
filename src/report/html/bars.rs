//! Kernel attribution: each category's ms/token per traced variant as grouped bars (the measured
//! ms/token split by the traces' shares, docs/methodology.md §10).
use super::chart::{svg, tick, variant_colour, ChartError, Slots, AXIS_TEXT, FONT, WIDTH};
use crate::trace::compare::Comparison;
use plotters::prelude::*;

/// Pixels per variant's bar in a category.
const BAR: u32 = 22;

pub(crate) fn chart(c: &Comparison) -> Result<String, ChartError> {
    let rows = c.categories.len();
    let n = c.variants.len().max(1);
    let height = 100 + (BAR * n as u32 + 16) * rows.max(1) as u32;
    let max = c.categories.iter().flat_map(|r| r.ms_per_token.iter().copied()).fold(0.0, f64::max);
    let hi = if max > 0.0 { max * 1.15 } else { 1.0 };
    let names: Vec<&str> = c.categories.iter().map(|r| r.category.as_str()).collect();
    svg("kernel categories", (WIDTH, height), |root| {
        // Category j is drawn at rows-1-j: the first category at the top.
        let ys = Slots::rows(rows.max(1));
        let mut ch = ChartBuilder::on(root)
            .caption(
                "ms/token per kernel category (measured ms/token × the trace's share)",
                (FONT, 19).into_font().color(&AXIS_TEXT),
            )
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(170)
            .build_cartesian_2d(0.0..hi, ys)?;
        let name_of = |y: &f64| {
            let from_top = rows as f64 - 1.0 - y.round();
            if from_top < 0.0 {
                return String::new();
            }
            names.get(from_top as usize).map_or(String::new(), |s| s.to_string())
        };
        ch.configure_mesh()
            .disable_y_mesh()
            .y_label_formatter(&name_of)
            .x_label_formatter(&|x| tick(*x, hi))
            .x_desc("ms per output token")
            .axis_desc_style((FONT, 17))
            .label_style((FONT, 16))
            .light_line_style(WHITE)
            .draw()?;
        let band = 0.8 / n as f64;
        for vi in 0..c.variants.len() {
            let colour = variant_colour(vi);
            let bars = c.categories.iter().enumerate().map(|(j, r)| {
                let y0 = (rows - 1 - j) as f64 - 0.4 + band * (n - 1 - vi) as f64;
                let ms = r.ms_per_token.get(vi).copied().unwrap_or(0.0);
                Rectangle::new([(0.0, y0), (ms, y0 + band * 0.9)], colour.filled())
            });
            ch.draw_series(bars)?;
        }
        Ok(())
    })
}
