//! The report's sections ([`crate::report::sections::of`]) on the page: each an `<h3>` and its
//! tables and notes, the same list `summarize` prints as text and the Markdown file holds, with
//! the page's charts drawn under the sections they belong to (the soak's requests, the decode
//! windows, the kernel categories).
use super::chart::variant_css;
use super::markup::{esc, figure, table};
use super::{bars, soak, windows};
use crate::report::section::{Part, Section};
use crate::report::sections::Source;
use crate::summary::traces::TraceComparison;
use std::fmt::Write;

pub(crate) fn render(o: &mut String, src: &Source, sections: &[Section]) {
    for sec in sections {
        if sec.parts.is_empty() {
            let _ = writeln!(o, "<p class=\"note\">{}</p>", esc(&sec.title));
            continue;
        }
        match sec.id {
            Some(id) => {
                let _ = writeln!(o, "<h3 id=\"{id}\">{}</h3>", esc(&sec.title));
            }
            None => {
                let _ = writeln!(o, "<h3>{}</h3>", esc(&sec.title));
            }
        }
        charts(o, src, sec.id);
        for p in &sec.parts {
            match p {
                Part::Table(t) => o.push_str(&table(t)),
                Part::Grouped(t, groups) => {
                    o.push_str(&table(t));
                    for n in Section::group_notes(groups) {
                        let _ = writeln!(o, "<p class=\"note\">{}</p>", esc(n));
                    }
                }
                Part::Note(n) => {
                    let _ = writeln!(o, "<p class=\"note\">{}</p>", esc(n));
                }
                Part::Pre(lines) => {
                    let _ = writeln!(o, "<pre>{}</pre>", esc(&lines.join("\n")));
                }
            }
        }
    }
}

/// The charts drawn under a section: the soak's rates per request, each variant's decode
/// windows, the traced variants' kernel categories.
fn charts(o: &mut String, src: &Source, id: Option<&str>) {
    let s = src.summary;
    match id {
        Some("soak") => {
            if let Some(drawn) = soak::chart(s) {
                figure(
                    o,
                    drawn,
                    "each variant's decode and prefill rate per request of the soak, with the device's temperature at \
                     the request's start, power and gfx clock over it where measured (docs/methodology.md §4.2)",
                );
            }
        }
        Some("decode-windows") => {
            for x in &s.variants {
                windows::variant_figure(o, &x.label, &x.decode_windows);
            }
        }
        Some("traced-variants") => {
            let Some(TraceComparison::Compared { comparison, .. }) = src.traces() else { return };
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
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::section::{markdown, text, Part};
    use crate::report::sections::of_summary;

    /// Every format shows every section, and each table with its own header and cells: the text,
    /// the Markdown file and the page are three renderings of one list, not three builders.
    #[test]
    fn text_markdown_and_the_page_show_the_same_tables_cell_for_cell() {
        let mut s = crate::report::sections::testing::recorded_summary();
        s.variants[1].caveats = vec!["a caveat under its row".into()];
        s.variants[0].throttled = vec![1];
        let sections = of_summary(&s, crate::report::sections::Depth::Full);
        let (txt, md) = (text(&sections), markdown(&sections));
        let mut html = String::new();
        render(&mut html, &Source::summary(&s), &sections);
        let mut tables = 0;
        for sec in &sections {
            assert!(txt.contains(&sec.title), "{}", sec.title);
            assert!(md.contains(&crate::report::md_cell(&sec.title)), "{}", sec.title);
            assert!(html.contains(&esc(&sec.title)), "{}", sec.title);
            for p in &sec.parts {
                let (Part::Table(t) | Part::Grouped(t, _)) = p else { continue };
                tables += 1;
                for row in std::iter::once(t.columns.iter().map(|c| c.header.clone()).collect())
                    .chain(t.rows.iter().map(|r| t.shown(r)))
                {
                    let row: Vec<String> = row;
                    for cell in row.iter().filter(|c| !c.is_empty()) {
                        assert!(txt.contains(cell.as_str()), "text lacks {cell:?}");
                        assert!(md.contains(&crate::report::md_cell(cell)), "Markdown lacks {cell:?}");
                        assert!(html.contains(&esc(cell)), "page lacks {cell:?}");
                    }
                    let md_row = format!(
                        "| {} |",
                        row.iter().map(|c| crate::report::md_cell(c)).collect::<Vec<_>>().join(" | ")
                    );
                    assert!(md.contains(&md_row), "Markdown lacks the row {md_row}");
                }
            }
        }
        assert!(tables >= 6, "the verdicts of four metrics, per variant and per phase: {tables}");
        for note in ["q8_0: a caveat under its row", "throttled during decode (the firmware's limit, or a gfx clock > 10% below the study median): #1 (gfx clock)"] {
            assert!(txt.contains(note) && md.contains(note) && html.contains(&esc(note)), "{note}");
        }
        assert!(txt.contains("  ! q8_0: a caveat under its row\n"), "under its row in text:\n{txt}");
    }
}
