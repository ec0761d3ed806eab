//! What heads every report: each candidate's one-line answer (docs/methodology.md §8 "The
//! answer") and the rule limits the study changed from their defaults (§7.22).
//! Built once here and first in the report; the text prints the answer last instead (the
//! command's final lines, [`ID`]), report.md and the page open with both.
use super::source::Source;
use crate::report::section::Section;
use crate::summary::Summary;

/// The answer lines' id: what the text leaves for the command to print last.
pub(crate) const ID: &str = "answer";

pub(crate) fn sections(src: &Source) -> Vec<Section> {
    lines(src.summary).into_iter().chain(changed_limits(src.summary)).collect()
}

/// One line per candidate: the line the summary layer wrote once ([`crate::summary::answer`]).
pub(crate) fn lines(s: &Summary) -> Vec<Section> {
    s.answer.iter().map(|a| Section::line(a.line.clone()).id(ID)).collect()
}

/// The limits the study set to other than their defaults, one note each; nothing at the defaults.
pub(crate) fn changed_limits(s: &Summary) -> Vec<Section> {
    if s.changed_limits.is_empty() {
        return Vec::new();
    }
    let title = "rule limits changed from their defaults (docs/methodology.md §7.22)";
    vec![Section::new(title).id("limits").notes(s.changed_limits.iter().map(|l| l.line()))]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::section::{markdown, text};
    use crate::report::sections::testing::recorded_summary;

    #[test]
    fn a_study_at_the_default_limits_lists_none() {
        let mut s = recorded_summary();
        s.changed_limits.clear();
        assert!(changed_limits(&s).is_empty());
    }

    #[test]
    fn each_changed_limit_shows_in_text_and_markdown() {
        let mut s = recorded_summary();
        let mut f = crate::study::file::StudyFile::new("m".into(), 8, 2, vec![]);
        f.idle.foreign_cpu_max_pct = 1000.0;
        s.changed_limits = f.changed_limits();
        let sections = changed_limits(&s);
        let want = "--foreign-cpu-max 1000% (default 50%; other-workload)";
        assert!(text(&sections).contains(&format!("\n  {want}\n")), "{}", text(&sections));
        assert!(markdown(&sections).contains(want), "{}", markdown(&sections));
    }
}
