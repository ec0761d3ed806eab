//! How the study ended: why an adaptive study stopped (docs/methodology.md §17), and the planned
//! samples not taken yet with the command that takes them.
use super::source::Source;
use crate::report::section::Section;

pub(crate) fn sections(src: &Source) -> Vec<Section> {
    let s = src.summary;
    let mut out = Vec::new();
    if let Some(a) = &s.adaptive {
        out.push(Section::line(a.line()));
    }
    if s.missing > 0 {
        out.push(Section::line(format!(
            "{} planned samples not taken yet: `abprof ab --resume {}` finishes the study",
            s.missing, s.root
        )));
    }
    out
}
