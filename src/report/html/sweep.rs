//! A sweep's page (docs/methodology.md §16): for each metric, the metric against the sweep's
//! points — every variant's median (left) and every candidate's change vs the baseline with its
//! 95% interval, coloured by its Holm-adjusted verdict (right) — then the metric's table, and how
//! each point's study went. Each point's own study report (`points/NN-…/report.html`) has its
//! samples, telemetry and evidence.
use super::chart::{
    padded, svg, tick, variant_colour, verdict_colour, whisker, ChartError, Slots, AXIS_TEXT, FONT, WIDTH,
};
use super::markup::{esc, figure, table};
use super::{close, note, open};
use crate::summary::stats::Verdict;
use crate::summary::sweep::{MetricTable, SweepSummary};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use std::fmt::Write;

const HEIGHT: u32 = 360;

/// One candidate's change at one point, with its 95% interval (all in %).
struct Change {
    variant: usize,
    /// The point's slot on the x axis.
    x: f64,
    change: f64,
    ci: Option<(f64, f64)>,
    verdict: Option<Verdict>,
}

type Panel<'a, 'b> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<Slots, RangedCoordf64>>;

/// One panel: the points along x, `lo..hi` up with ticks ending in `unit`.
fn panel<'a, 'b>(
    area: &'a DrawingArea<SVGBackend<'b>, Shift>,
    caption: String,
    points: &[&str],
    (lo, hi): (f64, f64),
    unit: &str,
) -> Result<Panel<'a, 'b>, Box<dyn std::error::Error>> {
    let mut c = ChartBuilder::on(area)
        .caption(caption, (FONT, 18).into_font().color(&AXIS_TEXT))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(64)
        .build_cartesian_2d(Slots::new(0, points.len()), lo..hi)?;
    c.configure_mesh()
        .disable_x_mesh()
        .x_label_formatter(&|x| points.get(x.round() as usize).map_or(String::new(), |p| p.to_string()))
        .y_labels(6)
        .y_label_formatter(&|y| format!("{}{unit}", tick(*y, hi - lo)))
        .label_style((FONT, 14))
        .light_line_style(WHITE)
        .draw()?;
    Ok(c)
}

/// The chart of one metric across the points, or `None` when no point has a median of it.
fn chart(s: &SweepSummary, t: &MetricTable) -> Option<Result<String, ChartError>> {
    let points: Vec<&str> = s.points.iter().map(|p| p.name.as_str()).collect();
    let at = |point: &str| points.iter().position(|p| *p == point).map(|i| i as f64);
    let variant = |label: &str| s.variants.iter().position(|v| v == label);
    let medians: Vec<(usize, f64, f64)> =
        t.rows.iter().filter_map(|r| Some((variant(&r.variant)?, at(&r.point)?, r.median?))).collect();
    if medians.is_empty() {
        return None;
    }
    let n = points.len();
    let candidates = s.variants.len() > 1;
    Some(svg("sweep", (WIDTH, HEIGHT), |root| {
        let (left, right) = if candidates { root.split_horizontally(WIDTH / 2) } else { (root.clone(), root.clone()) };
        let (lo, hi) = padded(medians.iter().map(|m| m.2), false);
        let mut c = panel(&left, format!("{} · median per point", t.metric.title()), &points, (lo, hi), "")?;
        for (vi, _) in s.variants.iter().enumerate() {
            let colour = variant_colour(vi);
            // Each variant a little beside the point, so equal medians stay visible.
            let dx = (vi as f64 - (s.variants.len() as f64 - 1.0) / 2.0) * 0.08;
            let mine: Vec<(f64, f64)> = medians.iter().filter(|m| m.0 == vi).map(|m| (m.1 + dx, m.2)).collect();
            c.draw_series(std::iter::once(PathElement::new(mine.clone(), colour.stroke_width(2))))?;
            c.draw_series(mine.iter().map(|p| Circle::new(*p, 5, colour.filled())))?;
        }
        if !candidates {
            return Ok(());
        }
        let changes: Vec<Change> = t
            .rows
            .iter()
            .filter_map(|r| {
                Some(Change {
                    variant: variant(&r.variant).filter(|v| *v > 0)?,
                    x: at(&r.point)?,
                    change: r.change_pct?,
                    ci: r.ci.map(|c| (c.lo_pct, c.hi_pct)),
                    verdict: r.verdict,
                })
            })
            .collect();
        let (lo, hi) = padded(
            changes.iter().flat_map(|c| [c.change, c.ci.map_or(c.change, |x| x.0), c.ci.map_or(c.change, |x| x.1)]),
            true,
        );
        let caption = format!("change vs {}, 95% CI (Holm verdict)", s.variants[0]);
        let mut c = panel(&right, caption, &points, (lo, hi), "%")?;
        c.draw_series(std::iter::once(PathElement::new(
            vec![(-0.5, 0.0), (n as f64 - 0.5, 0.0)],
            BLACK.stroke_width(1),
        )))?;
        let k = s.variants.len() - 1;
        for Change { variant: vi, x, change, ci, verdict } in changes {
            let x = x + (vi as f64 - 1.0 - (k as f64 - 1.0) / 2.0) * 0.12;
            let colour = verdict_colour(verdict);
            if let Some(range) = ci {
                c.draw_series(whisker(x, range, 0.05, colour))?;
            }
            // The candidate's own colour inside, the verdict's around it.
            c.draw_series([
                Circle::new((x, change), 7, colour.filled()),
                Circle::new((x, change), 4, variant_colour(vi).filled()),
            ])?;
        }
        Ok(())
    }))
}

/// The whole page of a sweep.
pub(crate) fn page(s: &SweepSummary) -> String {
    let axes = s.axes.iter().map(|a| a.key()).collect::<Vec<_>>().join(" × ");
    let heading = format!("abprof sweep: {} over {axes}", s.variants.join(" vs "));
    let detail =
        format!("{} points · {} samples per variant per point · {}", s.points.len(), s.samples_per_variant, s.root);
    let mut body = String::new();
    let key = super::variant_key(s.variants.iter().map(String::as_str));
    open(&mut body, "sweep", "Each metric across the points");
    note(
        &mut body,
        &format!(
            "{key} · every point is a whole interleaved study of all variants. Right: each candidate's change \
             with its own 95% interval, the ring coloured by its verdict (green faster, red slower, grey no clear \
             difference), Holm-adjusted across each metric's family of points × candidates, familywise α = 5% \
             (docs/methodology.md §16)."
        ),
    );
    for t in &s.tables {
        let _ =
            writeln!(body, "<h3>{} — Holm family of {} comparisons</h3>", esc(t.metric.title()), t.family.comparisons);
        if let Some(drawn) = chart(s, t) {
            figure(&mut body, drawn, "");
        }
        body.push_str(&table(&crate::report::sweep::metric_table(s, t)));
    }
    close(&mut body);
    open(&mut body, "points", "Points");
    note(&mut body, "Each point's folder holds its own study and its own report (report.html there).");
    body.push_str(&table(&crate::report::sweep::points_table(s)));
    if s.unfinished() > 0 {
        let _ = writeln!(
            body,
            "<p class=\"problem\">{} point(s) not finished: <code>abprof ab --resume {}</code> completes them</p>",
            s.unfinished(),
            esc(&s.root)
        );
    }
    close(&mut body);
    let nav = "<a href=\"#sweep\">metrics</a><a href=\"#points\">points</a>";
    super::document(&heading, &detail, nav, &body)
}
