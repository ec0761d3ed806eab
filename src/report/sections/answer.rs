//! What heads every report: each candidate's one-line answer (docs/methodology.md §8 "The
//! answer") and the rule limits the study changed from their defaults (§7.22).
//! Built once here; the text ends with the answer and opens with the limits, report.md and the
//! page open with both.
use crate::report::section::Section;
use crate::summary::Summary;

/// One line per candidate: the line the summary layer wrote once ([`crate::summary::answer`]).
pub(crate) fn lines(s: &Summary) -> Vec<Section> {
    s.answer.iter().map(|a| Section::line(a.line.clone())).collect()
}

/// The limits the study set to other than their defaults, one note each; nothing at the defaults.
pub(crate) fn changed_limits(s: &Summary) -> Vec<Section> {
    if s.changed_limits.is_empty() {
        return Vec::new();
    }
    let title = "rule limits changed from their defaults (docs/methodology.md §7.22)";
    vec![Section::new(title).notes(s.changed_limits.iter().map(|l| l.line()))]
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
