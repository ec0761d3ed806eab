//! The cause at the top of a study where no sample was accepted: every table below it is dashes,
//! and the rejected-samples table that says why sits two screens down (docs/methodology.md §7).
use super::source::Source;
use crate::report::section::Section;
use crate::summary::rules::Rule;

pub(crate) fn sections(src: &Source) -> Vec<Section> {
    let s = src.summary;
    if s.rejected.is_empty() || s.variants.iter().any(|v| v.accepted > 0) {
        return Vec::new();
    }
    // Each rule with its count, the most frequent first.
    let mut rules: Vec<(Rule, usize)> = Vec::new();
    for r in s.rejected.iter().flat_map(|r| &r.reasons) {
        match rules.iter_mut().find(|(x, _)| *x == r.rule) {
            Some((_, n)) => *n += 1,
            None => rules.push((r.rule.clone(), 1)),
        }
    }
    rules.sort_by_key(|(_, n)| std::cmp::Reverse(*n));
    let counts: Vec<String> = rules.iter().map(|(r, n)| format!("{r} ×{n}")).collect();
    let fix = match rules.first() {
        Some((Rule::OtherWorkload, _)) => "; the host was busy: `abprof doctor` names what else runs",
        _ => "",
    };
    vec![Section::line(format!(
        "no sample was accepted: all {} taken were rejected ({}), so nothing below is measured: the rejected samples say why{fix}",
        s.rejected.len(),
        counts.join(", ")
    ))]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_study_with_nothing_accepted_says_why_first() {
        let mut s = crate::report::sections::testing::recorded_summary();
        assert!(sections(&Source::summary(&s)).is_empty(), "a study with accepted samples says nothing here");
        for v in &mut s.variants {
            v.accepted = 0;
        }
        let why = |rule| crate::summary::rules::Rejection { rule, reason: String::new() };
        s.rejected = (0..3)
            .map(|i| crate::summary::RejectedSample {
                index: i,
                label: "f16".into(),
                dir: format!("samples/00{i}-f16"),
                reasons: vec![why(if i < 2 { Rule::OtherWorkload } else { Rule::LockedLength })],
            })
            .collect();
        let line = &sections(&Source::summary(&s))[0].title;
        assert!(line.contains("all 3 taken were rejected (other-workload ×2, locked-length ×1)"), "{line}");
        assert!(line.contains("`abprof doctor`"), "{line}");
    }
}
