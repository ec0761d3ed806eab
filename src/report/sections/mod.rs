//! The whole study report as one ordered list of sections, one file each: `summarize`'s text,
//! the report's Markdown and its HTML page iterate [`of`] (the page by [`groups`], one
//! `<section>` each, adding its charts by id) through their renderers (`report/section.rs`,
//! `report/html/sections.rs`). A feature that adds to the report adds its file and its place in
//! [`ORDER`]; no part of the report is built anywhere else.
pub(crate) mod answer;
mod context;
pub(crate) mod devices;
mod evidence;
mod exactness;
mod floor;
mod kernels;
mod llama_bench;
mod nothing_accepted;
mod outcome;
mod per_variant;
mod phases;
pub(crate) mod pi;
mod rejected;
mod run;
pub(crate) mod soak;
pub(crate) mod speculation;
mod speed_bench;
#[cfg(test)]
pub(crate) mod testing;
pub(crate) mod verdicts;
mod windows;

mod source;

use super::section::Section;
#[cfg(test)]
use crate::summary::view::StudyView;
use crate::summary::Summary;
pub(crate) use source::Source;

type Sections = fn(&Source) -> Vec<Section>;

/// How deep a reader goes: the text summary shows the answer's sections, `--full`, report.md and
/// the page every one (docs/commands.md "summarize").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Depth {
    /// The verdicts and what a reader needs to trust them: one screen for a plain A/B.
    Answer,
    /// Per-phase telemetry, decode windows and the decode floor: tables to dig with.
    Full,
}

use Depth::{Answer as A, Full as F};

/// One `<section>` of the page: its anchor, its heading, and the entries of [`ORDER`] it holds.
pub(crate) struct Group {
    pub(crate) id: &'static str,
    pub(crate) title: &'static str,
    pub(crate) sections: Vec<Section>,
}

/// The report, in the order shown, each entry with the page's group it belongs to.
const ORDER: [(&str, &str, Depth, Sections); 25] = [
    ("answer", "Answer", A, answer::sections),
    ("verdict", "Verdict", A, nothing_accepted::sections),
    ("verdict", "Verdict", A, |s| s.verdicts().map_or_else(Vec::new, llama_bench::sections)),
    ("verdict", "Verdict", A, |s| s.verdicts().map_or_else(Vec::new, verdicts::sections)),
    ("verdict", "Verdict", A, |s| s.verdicts().map_or_else(Vec::new, speculation::yardstick_sections)),
    ("verdict", "Verdict", A, |s| s.verdicts().map_or_else(Vec::new, speed_bench::sections)),
    ("verdict", "Verdict", A, |s| s.verdicts().map_or_else(Vec::new, soak::sections)),
    ("verdict", "Verdict", A, |s| s.verdicts().map_or_else(Vec::new, context::covariate)),
    ("verdict", "Verdict", A, |s| s.verdicts().map_or_else(Vec::new, context::lines)),
    ("verdict", "Verdict", A, |s| s.verdicts().map_or_else(Vec::new, verdicts::paired_line)),
    ("verdict", "Verdict", A, |s| s.verdicts().map_or_else(Vec::new, per_variant::sections)),
    ("verdict", "Verdict", A, |s| s.verdicts().map_or_else(Vec::new, speculation::acceptance_sections)),
    ("verdict", "Verdict", A, |s| s.verdicts().map_or_else(Vec::new, speculation::memory_sections)),
    ("verdict", "Verdict", F, |s| s.verdicts().map_or_else(Vec::new, phases::sections)),
    ("verdict", "Verdict", F, |s| s.verdicts().map_or_else(Vec::new, devices::sections)),
    ("verdict", "Verdict", F, |s| s.verdicts().map_or_else(Vec::new, windows::sections)),
    ("verdict", "Verdict", F, |s| s.verdicts().map_or_else(Vec::new, floor::sections)),
    ("verdict", "Verdict", A, outcome::sections),
    ("verdict", "Verdict", A, kernels::how_to_trace),
    ("kernels", "Kernel attribution", A, kernels::sections),
    ("exactness", "Exactness", A, exactness::sections),
    ("pi", "Pi agent", A, pi::sections),
    ("rejected", "Rejected samples", A, rejected::sections),
    ("run", "Run", A, run::sections),
    ("evidence", "Evidence", A, evidence::sections),
];

/// Every section of the report, in [`ORDER`].
pub(crate) fn of(src: &Source) -> Vec<Section> {
    of_depth(src, Depth::Full)
}

/// The sections a reader at `depth` sees, in [`ORDER`].
pub(crate) fn of_depth(src: &Source, depth: Depth) -> Vec<Section> {
    ORDER.iter().filter(|(_, _, d, _)| depth == Depth::Full || *d == A).flat_map(|(_, _, _, f)| f(src)).collect()
}

/// The titles of the sections only `--full` shows, those this report has.
pub(crate) fn left_out(src: &Source) -> Vec<String> {
    ORDER.iter().filter(|(_, _, d, _)| *d == F).flat_map(|(_, _, _, f)| f(src)).map(|x| x.title).collect()
}

/// [`of`] in the page's groups, those with a section.
pub(crate) fn groups(src: &Source) -> Vec<Group> {
    let mut out: Vec<Group> = Vec::new();
    for (id, title, _, f) in ORDER {
        let sections = f(src);
        match out.last_mut() {
            Some(g) if g.id == id => g.sections.extend(sections),
            _ => out.push(Group { id, title, sections }),
        }
    }
    out.retain(|g| !g.sections.is_empty());
    out
}

/// The sections of a summary alone (no folder read) at `depth`: `summarize`'s and `ab`'s text.
pub(crate) fn of_summary(s: &Summary, depth: Depth) -> Vec<Section> {
    of_depth(&Source::summary(s), depth)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn study() -> StudyView {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/evidence-pre-engine/study");
        StudyView::load(&dir).unwrap()
    }

    /// A study with nothing accepted says so above its tables of dashes.
    #[test]
    fn the_cause_of_nothing_accepted_comes_before_the_tables() {
        let mut s = testing::recorded_summary();
        for v in &mut s.variants {
            v.accepted = 0;
        }
        s.rejected = vec![crate::summary::RejectedSample {
            index: 0,
            label: "f16".into(),
            dir: "samples/001-f16".into(),
            reasons: vec![crate::summary::rules::Rejection {
                rule: crate::summary::rules::Rule::OtherWorkload,
                reason: String::new(),
            }],
        }];
        let titles: Vec<String> = of_summary(&s, Depth::Answer).into_iter().map(|x| x.title).collect();
        let at = |p: &str| titles.iter().position(|t| t.starts_with(p)).unwrap_or_else(|| panic!("{p}: {titles:?}"));
        assert!(at("no sample was accepted") < at("server decode TPS"), "{titles:?}");
    }

    /// The renderers draw the one list and build no table of their own: a part of the report
    /// added anywhere but `report/sections/` fails here.
    #[test]
    fn the_renderers_build_no_part_of_their_own() {
        for (file, src) in [
            ("report/html/mod.rs", include_str!("../html/mod.rs")),
            ("report/html/sections.rs", include_str!("../html/sections.rs")),
            ("report/study/markdown.rs", include_str!("../study/markdown.rs")),
            ("report/study/title.rs", include_str!("../study/title.rs")),
        ] {
            for builder in ["Table::new(", "Table::named(", "push_text(", "push_row(", "<table"] {
                assert!(!src.contains(builder), "{file} builds a table ({builder})");
            }
        }
    }

    #[test]
    fn the_captured_study_fills_every_table_it_has() {
        let v = study();
        let sections = of(&Source::view(&v));
        let table_of = |title: &str| {
            let sec = sections.iter().find(|x| x.title.starts_with(title)).unwrap_or_else(|| panic!("{title}"));
            match &sec.parts[0] {
                crate::report::section::Part::Table(t) | crate::report::section::Part::Grouped(t, _) => t.clone(),
                p => panic!("{p:?}"),
            }
        };
        let t = table_of("server decode TPS");
        assert_eq!(t.rows.len(), 2, "2 variants");
        assert!(t.rows.iter().all(|r| r.len() == t.columns.len()));
        assert_eq!(t.rows[0][8], "baseline");
        // 2 samples a side: no interval and no verdict (docs/methodology.md §8).
        assert_eq!(t.rows[1][8].as_str().unwrap(), "too few samples", "{:?}", t.rows[1]);
        assert_eq!(t.rows[0][4].as_str().unwrap(), "4.42%", "the baseline's per-sample CV: {:?}", t.rows[0]);
        let per_variant = table_of("per variant");
        assert_eq!(per_variant.rows[0].last().unwrap(), "2/2");
        let p = table_of("per phase");
        assert_eq!(p.rows.len(), 4, "prefill and decode of two variants");
        assert_eq!(p.rows[0][2], crate::report::NONE, "no power on a GPU-less host");
        assert!(sections.iter().any(|s| s.title.starts_with("rejected samples: none")));
        let b = evidence::binaries(&v);
        assert_eq!(b.rows[0][2].as_str().unwrap().len(), 64);
        assert!(b.rows[0][3].as_str().unwrap().contains("0c1e57098"));
        assert!(evidence::launch(&v).rows[0][2].as_str().unwrap().contains("--cache-type-k f16"));
        assert!(evidence::hooks(&v).is_none(), "the study declared no hooks");
        assert_eq!(evidence::host(&v).rows[1][1], "vm");
    }
}
