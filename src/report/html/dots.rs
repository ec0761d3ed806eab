//! One metric, every sample: each variant's samples as dots with their median (left), and each
//! candidate's change vs the baseline (the estimate its interval is built on) with its 95%
//! confidence interval (right).
use super::chart::{
    padded, svg, tick, variant_colour, verdict_colour, whisker, ChartError, Slots, AXIS_TEXT, FONT, SLOWER, UNCLEAR,
    WIDTH,
};
use crate::summary::stats::Verdict;
use crate::summary::view::{SampleStatus, StudyView};
use crate::summary::Metric;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

const HEIGHT: u32 = 330;

/// One candidate's change vs the baseline, with its 95% interval (both in %).
struct ChangeMark {
    variant: usize,
    change: f64,
    ci: Option<(f64, f64)>,
    verdict: Option<Verdict>,
}

/// The chart of `m`, or `None` when no sample has a value of it.
pub(crate) fn chart(view: &StudyView, m: Metric) -> Option<Result<String, ChartError>> {
    let labels: Vec<&str> = view.summary.variants.iter().map(|v| v.label.as_str()).collect();
    let variant_of = |label: &str| labels.iter().position(|l| *l == label);
    // (variant, value, status) of every sample with a value.
    let dots: Vec<(usize, f64, SampleStatus)> =
        view.samples.iter().filter_map(|s| Some((variant_of(&s.label)?, s.value(m)?, s.status))).collect();
    if dots.is_empty() {
        return None;
    }
    let compare = labels.len() > 1;
    Some(svg("samples", (WIDTH, HEIGHT), |root| {
        let (left, right) = if compare { root.split_horizontally(WIDTH * 3 / 5) } else { (root.clone(), root.clone()) };
        samples_panel(&left, view, m, &labels, &dots)?;
        if compare {
            change_panel(&right, view, m, &labels)?;
        }
        Ok(())
    }))
}

type Area<'a> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;
type Drawn = Result<(), Box<dyn std::error::Error>>;

/// Every sample of each variant as a dot (a cross when rejected, a triangle when traced), with
/// the variant's median as a bar and its value.
fn samples_panel(
    left: &Area<'_>,
    view: &StudyView,
    m: Metric,
    labels: &[&str],
    dots: &[(usize, f64, SampleStatus)],
) -> Drawn {
    let n = labels.len();
    {
        let (lo, hi) = padded(dots.iter().map(|d| d.1), false);
        let xs = Slots::new(0, n);
        let mut c = ChartBuilder::on(left)
            .caption(format!("{} · every sample", m.title()), (FONT, 19).into_font().color(&AXIS_TEXT))
            .margin(12)
            .x_label_area_size(38)
            .y_label_area_size(70)
            .build_cartesian_2d(xs, lo..hi)?;
        let label_of = |x: &f64| labels.get(x.round() as usize).map_or(String::new(), |l| l.to_string());
        c.configure_mesh()
            .disable_x_mesh()
            .x_label_formatter(&label_of)
            .y_labels(6)
            .y_label_formatter(&|y| tick(*y, hi - lo))
            .y_desc(m.unit())
            .axis_desc_style((FONT, 17))
            .label_style((FONT, 16))
            .light_line_style(WHITE)
            .draw()?;
        for (vi, v) in view.summary.variants.iter().enumerate() {
            let colour = variant_colour(vi);
            if let Some(med) = v.metric(m).and_then(|x| x.median) {
                let x = vi as f64;
                c.draw_series(std::iter::once(PathElement::new(
                    vec![(x - 0.25, med), (x + 0.25, med)],
                    colour.stroke_width(3),
                )))?;
                // The value right of the bar, clear of the dots (the legend says it is the median).
                c.draw_series(std::iter::once(
                    EmptyElement::at((x + 0.25, med))
                        + Text::new(
                            format!("{:.*}", m.decimals(), med),
                            (5, 0),
                            (FONT, 15).into_font().color(&colour).pos(Pos::new(HPos::Left, VPos::Center)),
                        ),
                ))?;
            }
            let mine: Vec<&(usize, f64, SampleStatus)> = dots.iter().filter(|d| d.0 == vi).collect();
            for (k, (_, y, status)) in mine.iter().enumerate() {
                // Spread a variant's dots sideways so equal values stay visible.
                let x = vi as f64 + (k as f64 - (mine.len() as f64 - 1.0) / 2.0) * (0.3 / mine.len().max(1) as f64);
                match status {
                    SampleStatus::Accepted => {
                        c.draw_series(std::iter::once(Circle::new((x, *y), 6, colour.filled())))?
                    }
                    SampleStatus::Rejected | SampleStatus::Unrecorded => {
                        c.draw_series(std::iter::once(Cross::new((x, *y), 6, SLOWER.stroke_width(2))))?
                    }
                    SampleStatus::Traced => {
                        c.draw_series(std::iter::once(TriangleMarker::new((x, *y), 7, colour.stroke_width(2))))?
                    }
                };
            }
        }
    }
    Ok(())
}

/// Each candidate's change vs the baseline with its 95% interval, coloured by its verdict.
fn change_panel(right: &Area<'_>, view: &StudyView, m: Metric, labels: &[&str]) -> Drawn {
    let n = labels.len();
    let label_of = |x: &f64| labels.get(x.round() as usize).map_or(String::new(), |l| l.to_string());
    {
        // Change vs the baseline, candidates only.
        let rows: Vec<ChangeMark> = view
            .summary
            .variants
            .iter()
            .enumerate()
            .skip(1)
            .filter_map(|(i, v)| {
                let ms = v.metric(m)?;
                Some(ChangeMark {
                    variant: i,
                    change: ms.change_pct?,
                    ci: ms.ci.map(|c| (c.lo_pct, c.hi_pct)),
                    verdict: ms.verdict,
                })
            })
            .collect();
        if rows.is_empty() {
            right.draw(&Text::new(
                "no change to show: too few accepted samples",
                (24, HEIGHT as i32 / 2),
                (FONT, 17).into_font().color(&UNCLEAR),
            ))?;
            return Ok(());
        }
        let (lo, hi) = padded(
            rows.iter().flat_map(|r| [r.change, r.ci.map_or(r.change, |c| c.0), r.ci.map_or(r.change, |c| c.1)]),
            true,
        );
        let xs = Slots::new(1, n);
        let mut c = ChartBuilder::on(right)
            .caption(format!("change vs {}, 95% CI", labels[0]), (FONT, 19).into_font().color(&AXIS_TEXT))
            .margin(12)
            .x_label_area_size(38)
            .y_label_area_size(64)
            .build_cartesian_2d(xs, lo..hi)?;
        c.configure_mesh()
            .disable_x_mesh()
            .x_label_formatter(&label_of)
            .y_labels(6)
            .y_label_formatter(&|y| format!("{}%", tick(*y, hi - lo)))
            .y_desc("% change (the interval's estimate)")
            .axis_desc_style((FONT, 17))
            .label_style((FONT, 16))
            .light_line_style(WHITE)
            .draw()?;
        c.draw_series(std::iter::once(PathElement::new(
            vec![(0.5, 0.0), (n as f64 - 0.5, 0.0)],
            BLACK.stroke_width(1),
        )))?;
        for ChangeMark { variant: i, change, ci, verdict } in rows {
            let colour = verdict_colour(verdict);
            let x = i as f64;
            if let Some(range) = ci {
                c.draw_series(whisker(x, range, 0.08, colour))?;
            }
            c.draw_series(std::iter::once(Circle::new((x, change), 7, colour.filled())))?;
            let word = verdict.map_or("", |v| m.verdict_word(v));
            let top = ci.map_or(change, |(_, b)| b.max(change));
            c.draw_series(std::iter::once(
                EmptyElement::at((x, top))
                    + Text::new(
                        format!("{change:+.2}% {word}"),
                        (0, -8),
                        (FONT, 16).into_font().color(&colour).pos(Pos::new(HPos::Center, VPos::Bottom)),
                    ),
            ))?;
        }
    }
    Ok(())
}
