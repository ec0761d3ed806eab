//! What every chart shares: the SVG canvas, fonts, the variant palette and the error a failed
//! drawing becomes (shown on the page in the chart's place, never a silent gap).
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::RGBColor;

/// The width of every chart, px (the page's content column).
pub(crate) const WIDTH: u32 = 960;

pub(crate) const FONT: &str = "sans-serif";

/// One colour per variant, in study order (Tableau 10: distinct in colour and in grey).
const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

pub(crate) fn variant_colour(i: usize) -> RGBColor {
    series_colour(i)
}

/// The `i`-th of several lines in one chart (the same palette as the variants').
pub(crate) fn series_colour(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// CSS form of a variant's colour, for the page's legends.
pub(crate) fn variant_css(i: usize) -> String {
    let RGBColor(r, g, b) = variant_colour(i);
    format!("#{r:02x}{g:02x}{b:02x}")
}

pub(crate) const FASTER: RGBColor = RGBColor(26, 127, 55);
pub(crate) const SLOWER: RGBColor = RGBColor(207, 34, 46);
pub(crate) const UNCLEAR: RGBColor = RGBColor(110, 119, 129);
pub(crate) const PREFILL_SHADE: RGBColor = RGBColor(255, 224, 178);
pub(crate) const DECODE_SHADE: RGBColor = RGBColor(197, 225, 245);
pub(crate) const AXIS_TEXT: RGBColor = RGBColor(36, 41, 47);

/// A verdict's colour: green faster, red slower (within the margin or not), grey for the same,
/// no clear difference or none.
pub(crate) fn verdict_colour(v: Option<crate::summary::stats::Verdict>) -> RGBColor {
    use crate::summary::stats::Direction;
    match v.and_then(|v| v.decided()) {
        Some(Direction::Better) => FASTER,
        Some(Direction::Worse) => SLOWER,
        None => UNCLEAR,
    }
}

/// An interval drawn as a whisker at `x` from `lo` to `hi`, its caps `cap` wide either side.
pub(crate) fn whisker(x: f64, (lo, hi): (f64, f64), cap: f64, colour: RGBColor) -> [PathElement<(f64, f64)>; 3] {
    let style = colour.stroke_width(3);
    [
        PathElement::new(vec![(x, lo), (x, hi)], style),
        PathElement::new(vec![(x - cap, lo), (x + cap, lo)], style),
        PathElement::new(vec![(x - cap, hi), (x + cap, hi)], style),
    ]
}

#[derive(Debug, thiserror::Error)]
#[error("the {chart} chart could not be drawn: {detail}")]
pub(crate) struct ChartError {
    pub(crate) chart: &'static str,
    pub(crate) detail: String,
}

/// Draws on a `width`×`height` SVG canvas and returns the SVG text.
pub(crate) fn svg(
    chart: &'static str,
    (width, height): (u32, u32),
    draw: impl for<'a> FnOnce(
        &DrawingArea<SVGBackend<'a>, plotters::coord::Shift>,
    ) -> Result<(), Box<dyn std::error::Error>>,
) -> Result<String, ChartError> {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (width, height)).into_drawing_area();
        let drawn = root.fill(&WHITE).map_err(|e| e.to_string()).and_then(|_| draw(&root).map_err(|e| e.to_string()));
        drawn.map_err(|detail| ChartError { chart, detail })?;
        root.present().map_err(|e| ChartError { chart, detail: e.to_string() })?;
    }
    Ok(out)
}

/// One panel of a stacked chart: its axis name and the value it draws of each point.
pub(crate) struct Signal<T> {
    pub(crate) name: &'static str,
    pub(crate) of: fn(&T) -> Option<f64>,
}

/// The height of one panel of a stacked chart (one field over time), px.
pub(crate) const PANEL: u32 = 150;

/// The unit of a time axis spanning `span_ms`: (ms per unit, its name). Seconds once it runs
/// longer than 10 s: five-digit ms ticks are hard to read.
pub(crate) fn time_unit(span_ms: f64) -> (f64, &'static str) {
    if span_ms > 10_000.0 {
        (1000.0, "s")
    } else {
        (1.0, "ms")
    }
}

/// One panel of a stack of panels sharing the x axis `x0..x1`: its y axis `lo..hi` named `y_desc`,
/// the x axis named only under the bottom panel (`x_desc` given).
pub(crate) fn stacked_panel<'a, 'b>(
    area: &'a DrawingArea<SVGBackend<'b>, Shift>,
    (x0, x1): (f64, f64),
    (lo, hi): (f64, f64),
    y_desc: &str,
    x_desc: Option<&str>,
) -> Result<ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>, Box<dyn std::error::Error>> {
    let mut c = ChartBuilder::on(area)
        .margin_left(12)
        .margin_right(20)
        .margin_top(6)
        .x_label_area_size(if x_desc.is_some() { 40 } else { 18 })
        .y_label_area_size(84)
        .build_cartesian_2d(x0..x1, lo..hi)?;
    let y_fmt = |y: &f64| tick(*y, hi - lo);
    let x_fmt = |x: &f64| tick(*x, x1 - x0);
    let mut mesh = c.configure_mesh();
    mesh.y_desc(y_desc)
        .y_labels(4)
        .y_label_formatter(&y_fmt)
        .x_label_formatter(&x_fmt)
        .axis_desc_style((FONT, 15))
        .label_style((FONT, 15))
        .light_line_style(RGBColor(240, 240, 240));
    if let Some(d) = x_desc {
        mesh.x_desc(d);
    }
    mesh.draw()?;
    Ok(c)
}

/// `points` as a line of `colour` on panel `c`, each point a dot while there are few enough to see.
pub(crate) fn line_with_dots(
    c: &mut ChartContext<'_, SVGBackend<'_>, Cartesian2d<RangedCoordf64, RangedCoordf64>>,
    points: &[(f64, f64)],
    colour: RGBColor,
) -> Result<(), Box<dyn std::error::Error>> {
    c.draw_series(LineSeries::new(points.iter().copied(), colour.stroke_width(2)))?;
    if points.len() <= 120 {
        c.draw_series(points.iter().map(|p| Circle::new(*p, 3, colour.filled())))?;
    }
    Ok(())
}

/// A categorical axis with room between categories: category `i` sits at `i` (ticks only there),
/// and values in between place dots beside it. plotters' own key-point override has no value
/// formatter, so the axis is this small type.
#[derive(Debug, Clone)]
pub(crate) struct Slots {
    lo: f64,
    hi: f64,
    keys: Vec<f64>,
}

impl Slots {
    /// Categories `first..end`, each with half a slot of room either side.
    pub(crate) fn new(first: usize, end: usize) -> Slots {
        Slots {
            lo: first as f64 - 0.5,
            hi: end.max(first + 1) as f64 - 0.5,
            keys: (first..end).map(|i| i as f64).collect(),
        }
    }

    /// Categories `0..n` drawn from the top down.
    pub(crate) fn rows(n: usize) -> Slots {
        Slots::new(0, n)
    }
}

impl Ranged for Slots {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, v: &f64, (a, b): (i32, i32)) -> i32 {
        a + ((v - self.lo) / (self.hi - self.lo) * (b - a) as f64).round() as i32
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.keys.clone()
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.lo..self.hi
    }
}

/// A value range that shows every value with a margin, never empty.
pub(crate) fn padded(values: impl IntoIterator<Item = f64>, include_zero: bool) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in values.into_iter().filter(|v| v.is_finite()) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    if include_zero {
        lo = lo.min(0.0);
        hi = hi.max(0.0);
    }
    let span = if hi > lo { hi - lo } else { hi.abs().max(1.0) };
    let pad = span * 0.12;
    let lo = if include_zero && lo >= 0.0 { 0.0 } else { lo - pad };
    (lo, hi + pad)
}

/// Tick labels with as few digits as the axis span needs.
pub(crate) fn tick(v: f64, span: f64) -> String {
    let d = if span >= 100.0 {
        0
    } else if span >= 10.0 {
        1
    } else if span >= 1.0 {
        2
    } else {
        3
    };
    format!("{v:.d$}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_hold_their_values_and_are_never_empty() {
        let (lo, hi) = padded([10.0, 20.0], false);
        assert!(lo < 10.0 && hi > 20.0);
        assert_eq!(padded([5.0, 8.0], true).0, 0.0);
        let (lo, hi) = padded([-3.0, 2.0], true);
        assert!(lo < -3.0 && hi > 2.0);
        let (lo, hi) = padded([7.0], false);
        assert!(lo < 7.0 && hi > 7.0);
        assert_eq!(padded([], false), (0.0, 1.0));
        assert_eq!(tick(1234.5, 500.0), "1234");
        assert_eq!(tick(1.23456, 2.0), "1.23");
    }
}
