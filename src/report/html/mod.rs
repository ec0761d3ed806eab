//! The study report as one self-contained HTML page: inline CSS, charts as inline SVG drawn by
//! plotters, no script, nothing fetched. Sections carry ids (`verdict`, `samples`, `timelines`,
//! `phases`, `kernels`, `exactness`, `pi`, `rejected`, `evidence`) so a reader can link to them
//! and a test can count their charts.
mod bars;
mod chart;
mod dots;
mod markup;
mod sections;
mod soak;
mod style;
pub(crate) mod sweep;
mod timeline;
mod windows;

use super::study::tables::{self, REPORT_METRICS};
use super::study::StudyTitle;
use crate::summary::traces::TraceComparison;
use crate::summary::view::{StudyView, TIMELINE_FIELDS};
use chart::variant_css;
use markup::{esc, figure, table};
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

/// The page's first section: each candidate's one-line answer and the rule limits the study
/// changed from their defaults (docs/methodology.md §8 "The answer", §7.22).
fn answer_section(o: &mut String, v: &StudyView) {
    let s = &v.summary;
    let head: Vec<_> = crate::report::sections::answer::lines(s)
        .into_iter()
        .chain(crate::report::sections::answer::changed_limits(s))
        .collect();
    if head.is_empty() {
        return;
    }
    open(o, "answer", "Answer");
    sections::render(o, s, &head);
    close(o);
}

fn verdict_section(o: &mut String, v: &StudyView) {
    let s = &v.summary;
    open(o, "verdict", "Verdict");
    note(
        o,
        "Change of each candidate against the baseline (the mean log ratio its interval is built on; the ratio of \
         medians beside it) with a 95% confidence interval from Student's t on \
         log values, paired within interleaved blocks once 3 blocks hold both sides, Welch's otherwise \
         (docs/methodology.md §8): <b>faster</b> or <b>slower</b> only when the whole interval is on one side of 0.",
    );
    sections::render(o, s, &crate::report::sections::of(s));
    if s.missing > 0 {
        let _ = writeln!(
            o,
            "<p class=\"problem\">{} planned samples not taken yet: <code>abprof ab --resume {}</code> finishes the study</p>",
            s.missing,
            esc(&s.root)
        );
    }
    close(o);
}

fn samples_section(o: &mut String, v: &StudyView) {
    open(o, "samples", "Every sample");
    let _ = writeln!(
        o,
        "<p class=\"note\">{} · ● accepted sample · ✕ rejected (not in the statistics) · △ traced (never a median) · \
         bar and number: the variant's median. Right: the candidate's change (the estimate its interval is built on), bars the 95% CI.</p>",
        variant_key(v.summary.variants.iter().map(|x| x.label.as_str()))
    );
    for m in REPORT_METRICS.into_iter().chain(crate::summary::Metric::ENERGY) {
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

fn kernels_section(o: &mut String, v: &StudyView) {
    let Some(traces) = &v.traces else { return };
    open(o, "kernels", "Kernel attribution");
    match traces {
        TraceComparison::Compared { comparison, scaled_by_trace_samples, category_deltas } => {
            note(
                o,
                "Each trace's decode time split into kernel categories by share of GPU busy time, scaled to the \
                 variant's measured (untraced) ms/token so the categories sum to what was measured \
                 (docs/methodology.md §10).",
            );
            if let Some(m) = scaled_by_trace_samples {
                note(
                    o,
                    &format!(
                        "The study ran {} output tokens, the traces {}: each trace is scaled by its own untraced samples.",
                        m.study_tokens,
                        m.trace_tokens.map_or("an unknown number of".into(), |t| t.to_string())
                    ),
                );
            }
            let mut key = String::from("<span class=\"key\">");
            for (i, col) in comparison.variants.iter().enumerate() {
                let _ = write!(
                    key,
                    "<span style=\"background:{}\"></span>{} ({:.3} ms/token measured)",
                    variant_css(i),
                    esc(&col.label),
                    col.measured_ms_per_token
                );
            }
            key.push_str("</span>");
            figure(o, bars::chart(comparison), &key);
            o.push_str(&table(&tables::trace_columns(comparison)));
            let _ = writeln!(o, "<h3>Categories</h3>");
            o.push_str(&table(&crate::report::trace::comparison_categories(comparison, category_deltas)));
            if !comparison.moved_kernels.is_empty() {
                let _ = writeln!(o, "<h3>Top moved kernels</h3>");
                o.push_str(&table(&crate::report::trace::moved_kernels(comparison)));
            }
        }
        TraceComparison::NotCompared { reason } => {
            let _ = writeln!(o, "<p class=\"problem\">traces not compared: {}</p>", esc(reason));
        }
    }
    close(o);
}

fn rejected_section(o: &mut String, v: &StudyView) {
    open(o, "rejected", "Rejected samples");
    let t = tables::rejected(&v.summary);
    if t.rows.is_empty() {
        note(o, "None: every sample taken passed every rule of docs/methodology.md §7.");
    } else {
        note(o, "Listed with the rule each broke (docs/methodology.md §7); none is in the statistics.");
        o.push_str(&table(&t));
    }
    if let Some(r) = &v.summary.retakes {
        note(o, &r.line());
    }
    close(o);
}

fn evidence_section(o: &mut String, v: &StudyView) {
    open(o, "evidence", "Evidence");
    o.push_str(&table(&tables::host(v)));
    let _ = writeln!(o, "<h3>Binaries and models</h3>");
    o.push_str(&table(&tables::binaries(v)));
    let _ = writeln!(o, "<h3>Launch</h3>");
    o.push_str(&table(&tables::launch(v)));
    if let Some(t) = tables::hooks(v) {
        let _ = writeln!(o, "<h3>Isolation hooks</h3>");
        o.push_str(&table(&t));
    }
    for u in &v.unreadable {
        let _ = writeln!(o, "<p class=\"problem\">unreadable evidence: {}</p>", esc(u));
    }
    close(o);
}

/// The whole page.
pub(crate) fn page(v: &StudyView) -> String {
    let title = StudyTitle::of(&v.summary);
    let mut body = String::new();
    answer_section(&mut body, v);
    if v.pi.is_none() {
        verdict_section(&mut body, v);
        samples_section(&mut body, v);
    }
    timelines_section(&mut body, v);
    kernels_section(&mut body, v);
    if let Some(x) = &v.exactness {
        open(&mut body, "exactness", "Exactness");
        note(&mut body, "Same deterministic request to both variants (docs/methodology.md §12).");
        body.push_str(&table(&tables::exactness(x)));
        close(&mut body);
    }
    if let Some(p) = &v.pi {
        open(&mut body, "pi", "Pi agent");
        note(&mut body, &esc(&format!("Pi {} · prompt {}", p.pi_version.as_deref().unwrap_or("?"), p.prompt)));
        body.push_str(&table(&tables::pi_variants(p)));
        body.push_str(&table(&tables::pi_samples(p)));
        for w in &p.warnings {
            let _ = writeln!(body, "<p class=\"problem\">{}</p>", esc(w));
        }
        close(&mut body);
    }
    rejected_section(&mut body, v);
    evidence_section(&mut body, v);
    let rejected = v.summary.rejected.len();
    let mut nav = String::new();
    for (id, name) in [
        ("verdict", "verdict"),
        ("samples", "samples"),
        ("timelines", "telemetry"),
        ("kernels", "kernels"),
        ("exactness", "exactness"),
        ("pi", "Pi"),
        ("rejected", "rejected"),
        ("evidence", "evidence"),
    ] {
        if body.contains(&format!("<section id=\"{id}\">")) {
            let name = if id == "rejected" { format!("rejected ({rejected})") } else { name.to_string() };
            let _ = write!(nav, "<a href=\"#{id}\">{name}</a>");
        }
    }
    document(&title.heading, &title.detail, &nav, &body)
}
