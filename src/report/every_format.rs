//! The study report in every format at once: the one list of sections
//! ([`super::sections::of`]) is what the text, report.md and the page show.
use super::section::{markdown, text, Part, Section};
use super::sections::{answer, left_out, of, of_summary, Depth, Source};
use super::{md_cell, table::Table};
use crate::summary::view::StudyView;

fn study() -> StudyView {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/evidence-pre-engine/study");
    StudyView::load(&dir).unwrap()
}

fn cells(t: &Table) -> Vec<String> {
    let head = t.columns.iter().map(|c| c.header.clone());
    head.chain(t.rows.iter().flat_map(|r| t.shown(r))).filter(|c| !c.is_empty()).collect()
}

/// Every part of the study report is one section of the one list, and every format shows it
/// with every cell of its tables: the text (all but the evidence tables, which need the
/// folder, and the answer, which the command prints last), report.md and the page.
#[test]
fn every_part_of_the_report_is_one_section_that_every_format_shows() {
    let v = study();
    let all = of(&Source::view(&v));
    let (txt, md, page) = (
        super::summary::render_text(&v.summary, Depth::Full),
        super::study::markdown::document(&v),
        super::html::page(&v),
    );
    let in_text: Vec<Section> =
        of_summary(&v.summary, Depth::Full).into_iter().filter(|s| s.id != Some(answer::ID)).collect();
    for sec in &all {
        assert!(md.contains(&md_cell(&sec.title)), "report.md lacks {:?}", sec.title);
        assert!(page.contains(&super::html::markup::esc(&sec.title)), "the page lacks {:?}", sec.title);
        for p in &sec.parts {
            let (Part::Table(t) | Part::Grouped(t, _)) = p else { continue };
            for c in cells(t) {
                assert!(md.contains(&md_cell(&c)), "report.md lacks {c:?} of {:?}", sec.title);
                let cell = super::html::markup::esc(&c).replace('\n', "<br>");
                assert!(page.contains(&cell), "the page lacks {c:?} of {:?}", sec.title);
            }
        }
    }
    for sec in &in_text {
        assert!(txt.contains(&sec.title), "the text lacks {:?}", sec.title);
    }
    let body = txt.splitn(3, '\n').nth(2).unwrap();
    assert_eq!(text(&in_text), body, "the text is the title, then the list");
    // The parts that used to be built twice are sections now, and named once.
    for title in ["run", "rejected samples: none", "host", "binaries and models", "launch"] {
        assert!(all.iter().any(|s| s.title.starts_with(title)), "{title}");
    }
    let run = all.iter().find(|s| s.title == "run").unwrap();
    let Part::Table(t) = &run.parts[0] else { panic!("{run:?}") };
    assert_eq!(t.shown(&t.rows[0])[1], "f16 q8_0 q8_0 f16", "the run order");
    assert!(markdown(&all).contains("| run order | f16 q8_0 q8_0 f16 |"));
}

/// The default text is the answer's sections, and its last line names every table only `--full`
/// (with report.md and the page) shows: nothing is dropped without a word.
#[test]
fn the_default_text_leaves_out_the_full_tables_and_names_them() {
    let v = study();
    let txt = super::summary::render_text(&v.summary, Depth::Answer);
    let more = left_out(&Source::summary(&v.summary));
    assert!(!more.is_empty(), "the captured study has per-phase tables");
    let in_text: Vec<Section> =
        of_summary(&v.summary, Depth::Answer).into_iter().filter(|s| s.id != Some(answer::ID)).collect();
    let body = txt.splitn(3, '\n').nth(2).unwrap();
    assert!(body.starts_with(&text(&in_text)), "the text is the title, then the answer's list");
    for title in &more {
        assert!(!txt.contains(title.as_str()), "{title} is a --full table");
        let name = title.split(['(', ':']).next().unwrap().trim();
        assert!(txt.lines().last().unwrap().contains(name), "the last line names {name}: {txt}");
    }
}
