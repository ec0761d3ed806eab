//! The study report as GitHub-flavoured Markdown: the page's tables, ready to paste into a pull
//! request.
use super::tables;
use super::title::StudyTitle;
use crate::report::Table;
use crate::summary::traces::TraceComparison;
use crate::summary::view::StudyView;
use std::fmt::Write;

pub(crate) fn table(t: &Table) -> String {
    t.markdown()
}

fn section(o: &mut String, title: &str, t: &Table) {
    let _ = writeln!(o, "\n### {title}\n");
    o.push_str(&table(t));
}

pub(crate) fn document(v: &StudyView) -> String {
    let s = &v.summary;
    let mut o = String::new();
    // The answer is the file's first line (docs/formats.md "The report"), the title after it.
    let answer = crate::report::section::markdown(&crate::report::sections::answer::lines(s));
    o.push_str(answer.trim_start_matches('\n'));
    if !o.is_empty() {
        o.push('\n');
    }
    let title = StudyTitle::of(s);
    let _ = writeln!(o, "## {}\n\n{}", title.heading, title.detail);
    o.push_str(&crate::report::section::markdown(&crate::report::sections::answer::changed_limits(s)));
    if v.pi.is_none() {
        o.push_str(&crate::report::section::markdown(&crate::report::sections::of(s)));
    }
    match &v.traces {
        Some(TraceComparison::Compared { comparison, category_deltas, .. }) => {
            section(&mut o, "Kernel attribution: traced variants", &tables::trace_columns(comparison));
            section(
                &mut o,
                "Kernel categories (ms/token)",
                &crate::report::trace::comparison_categories(comparison, category_deltas),
            );
            if !comparison.moved_kernels.is_empty() {
                section(&mut o, "Top moved kernels (ms/token)", &crate::report::trace::moved_kernels(comparison));
            }
        }
        Some(TraceComparison::NotCompared { reason }) => {
            let _ = writeln!(o, "\n### Kernel attribution\n\nnot compared: {}", crate::report::md_cell(reason));
        }
        None => {}
    }
    if let Some(x) = &v.exactness {
        section(&mut o, "Exactness", &tables::exactness(x));
    }
    if let Some(p) = &v.pi {
        section(&mut o, "Pi agent: medians over valid samples", &tables::pi_variants(p));
        section(&mut o, "Pi agent: every sample", &tables::pi_samples(p));
    }
    let rejected = tables::rejected(s);
    if rejected.rows.is_empty() {
        let _ = writeln!(o, "\n### Rejected samples\n\nnone");
    } else {
        section(&mut o, "Rejected samples (not in the statistics)", &rejected);
    }
    if let Some(r) = &s.retakes {
        let _ = writeln!(o, "\n{}", crate::report::md_cell(&r.line()));
    }
    section(&mut o, "Host and study", &tables::host(v));
    section(&mut o, "Binaries and models", &tables::binaries(v));
    section(&mut o, "Launch", &tables::launch(v));
    if let Some(t) = tables::hooks(v) {
        section(&mut o, "Isolation hooks", &t);
    }
    for u in &v.unreadable {
        let _ = writeln!(o, "\n> unreadable evidence: {}", crate::report::md_cell(u));
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_cannot_break_the_table() {
        let mut t = tables::page_table(&["a", "b"], &[1]);
        t.push_text(vec!["x|y".into(), "1\n2".into()]);
        assert_eq!(table(&t), "| a | b |\n|---|---:|\n| x\\|y | 1<br>2 |\n");
    }
}
