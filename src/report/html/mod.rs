//! The study report as one self-contained HTML page: inline CSS, charts as inline SVG drawn by
//! plotters, no script, nothing fetched. Sections carry ids (`verdict`, `samples`, `timelines`,
//! `phases`, `kernels`, `exactness`, `pi`, `rejected`, `evidence`) so a reader can link to them
//! and a test can count their charts.
mod bars;
mod chart;
mod dots;
pub(crate) mod markup;
mod sections;
mod soak;
mod style;
pub(crate) mod sweep;
mod timeline;
mod windows;

use super::sections::{groups, Source};
use super::study::StudyTitle;
use crate::summary::view::{StudyView, TIMELINE_FIELDS};
use chart::variant_css;
use markup::{esc, figure};

use std::fmt::Write;

fn open(o: &mut String, id: &str, title: &str) {
    let _ = writeln!(o, "<section id=\"{id}\">\n<h2>{}</h2>", esc(title));
}

fn close(o: &mut String) {
    o.push_str("</section>\n");
}

fn note(o: &mut String, text: &str) {
    let _ = writeln!(o, "<p class=\"note\">{text}</p>");
}

/// Coloured swatches naming each variant.
fn variant_key<'a>(labels: impl IntoIterator<Item = &'a str>) -> String {
    let mut k = String::from("<span class=\"key\">");
    for (i, label) in labels.into_iter().enumerate() {
        let _ = write!(k, "<span style=\"background:{}\"></span>{}", variant_css(i), esc(label));
    }
    k.push_str("</span>");
    k
}

/// A whole page: the header with its `heading`, `detail` line and `nav` links (markup), then
/// `body`; inline CSS, nothing fetched.
fn document(heading: &str, detail: &str, nav: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{t}</title>\n<style>{css}</style>\n</head>\n<body>\n<header>\n<h1>{t}</h1>\n<p>{d}</p>\n\
         <nav>{nav}</nav>\n</header>\n<main>\n{body}</main>\n</body>\n</html>\n",
        t = esc(heading),
        d = esc(detail),
        css = style::CSS,
    )
}

fn samples_section(o: &mut String, v: &StudyView) {
    open(o, "samples", "Every sample");
    let _ = writeln!(
        o,
        "<p class=\"note\">{} · ● accepted sample · ✕ rejected (not in the statistics) · △ traced (never a median) · \
         bar and number: the variant's median. Right: the candidate's change (the estimate its interval is built on), bars the 95% CI.</p>",
        variant_key(v.summary.variants.iter().map(|x| x.label.as_str()))
    );
    // The metrics the page charts (strict streamed TPS only in the tables).
    for m in v.summary.metrics().into_iter().filter(|m| m.spec().charted) {
        if let Some(drawn) = dots::chart(v, m) {
            figure(o, drawn, "");
        }
    }
    close(o);
}

fn timelines_section(o: &mut String, v: &StudyView) {
    open(o, "timelines", "Telemetry per sample");
    let _ = writeln!(
        o,
        "<p class=\"note\"><span class=\"key\"><span style=\"background:#ffe0b2\"></span>prefill (request sent → first \
         token)<span style=\"background:#c5e1f5\"></span>decode (first → last token)</span> · telemetry source: {}</p>",
        esc(v.summary.telemetry.as_deref().unwrap_or(crate::report::NONE))
    );
    let mut any = false;
    for s in &v.samples {
        let Some(t) = &s.timeline else { continue };
        any = true;
        let mut caption = format!("sample #{} {} · <code>{}</code>", s.index, esc(&s.label), esc(&s.dir));
        if !t.absent.is_empty() {
            let names: Vec<&str> = t.absent.iter().map(|f| timeline::axis_name(*f)).collect();
            let _ =
                write!(caption, " · <span class=\"absent\">absent from this telemetry: {}</span>", names.join(", "));
        }
        if let Some(h) = &t.host_cpu {
            let _ = write!(
                caption,
                " · during the request: server {:.0}%, other processes {:.0}% of a core",
                h.server_pct, h.foreign_pct
            );
        }
        if let Some(why) = &t.unreadable {
            let _ = writeln!(o, "<p class=\"problem\">sample #{}: {}</p>", s.index, esc(why));
        }
        match timeline::chart(s, t) {
            Some(drawn) => figure(o, drawn, &caption),
            None if t.unreadable.is_none() => {
                let _ = writeln!(o, "<p class=\"absent\">{caption}: the series holds no value to draw</p>");
            }
            None => {}
        }
    }
    if !any {
        let names: Vec<&str> = TIMELINE_FIELDS.iter().map(|f| timeline::axis_name(*f)).collect();
        note(o, &format!("No sample recorded telemetry ({} absent).", names.join(", ")));
    }
    close(o);
}

/// What the page says under a group's heading, before its sections.
fn prose(o: &mut String, id: &str) {
    match id {
        "verdict" => note(
            o,
            "Change of each candidate against the baseline (the mean log ratio its interval is built on; the ratio of \
             medians beside it) with a 95% confidence interval from Student's t on \
             log values, paired within interleaved blocks once 3 blocks hold both sides, Welch's otherwise \
             (docs/methodology.md §8): <b>faster</b> or <b>slower</b> only when the whole interval is on one side of 0.",
        ),
        "exactness" => note(o, "Same deterministic request to both variants (docs/methodology.md §12)."),
        _ => {}
    }
}

/// The whole page: the report's sections in their groups ([`crate::report::sections::groups`]),
/// each a `<section>` with its charts, and the per-sample charts after the verdict.
pub(crate) fn page(v: &StudyView) -> String {
    let title = StudyTitle::of(&v.summary);
    let src = Source::view(v);
    let mut body = String::new();
    let mut nav = String::new();
    let mut charted = false;
    let link = |nav: &mut String, id: &str, name: &str| {
        let _ = write!(nav, "<a href=\"#{id}\">{}</a>", esc(name));
    };
    for g in groups(&src) {
        if !charted && !matches!(g.id, "answer" | "verdict") {
            charted = true;
            if v.pi.is_none() {
                samples_section(&mut body, v);
                link(&mut nav, "samples", "samples");
            }
            timelines_section(&mut body, v);
            link(&mut nav, "timelines", "telemetry");
        }
        open(&mut body, g.id, g.title);
        prose(&mut body, g.id);
        sections::render(&mut body, &src, &g.sections);
        close(&mut body);
        if g.id != "answer" {
            let name = match g.id {
                "rejected" => format!("rejected ({})", v.summary.rejected.len()),
                _ => g.title.to_lowercase(),
            };
            link(&mut nav, g.id, &name);
        }
    }
    document(&title.heading, &title.detail, &nav, &body)
}
