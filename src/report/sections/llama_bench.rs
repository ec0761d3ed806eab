//! A llama-bench study's table in the shape users paste into a pull request
//! (compare-llama-bench.py's: model, test, each side's t/s, speedup), with the study's own
//! paired 95% interval and verdict beside each speedup (docs/methodology.md §4.4).
use crate::report::number::{ci_pct, num, signed_pct, NONE};
use crate::report::section::Section;
use crate::report::table::Table;
use crate::summary::{Metric, Summary, VariantSummary};

/// One table per candidate against the baseline; none for a server study.
pub(crate) fn sections(s: &Summary) -> Vec<Section> {
    let tests: Vec<Metric> = s.metrics().into_iter().filter(|m| m.llama_bench_test().is_some()).collect();
    let Some((base, candidates)) = s.variants.split_first() else { return Vec::new() };
    if tests.is_empty() {
        return Vec::new();
    }
    candidates
        .iter()
        .map(|cand| {
            Section::new(format!(
                "llama-bench: {} vs {} (compare-llama-bench.py's table: t/s the mean of the accepted samples, one repetition each; change and 95% CI the study's, paired by block)",
                cand.label, base.label
            ))
            .table(table(base, cand, &tests))
        })
        .collect()
}

fn table(base: &VariantSummary, cand: &VariantSummary, tests: &[Metric]) -> Table {
    let (b, c) = (format!("t/s {}", base.label), format!("t/s {}", cand.label));
    let mut t = Table::of_cells(&["Model", "Test", &b, &c, "Speedup", "Change", "95% CI", "Verdict"], &[2, 3, 4, 5, 6]);
    let model = match (&base.llama_bench, &cand.llama_bench) {
        (Some(x), Some(y)) if x.model_type != y.model_type => format!("{} / {}", x.model_type, y.model_type),
        (Some(x), _) | (None, Some(x)) => x.model_type.clone(),
        (None, None) => NONE.into(),
    };
    for &m in tests {
        let (bm, cm) = (base.metric(m), cand.metric(m));
        let mean = |x: Option<&crate::summary::MetricSummary>| x.and_then(|x| x.mean);
        let speedup = mean(cm).zip(mean(bm)).filter(|(_, b)| *b > 0.0).map(|(c, b)| c / b);
        t.push_text(vec![
            model.clone(),
            m.short_title().into(),
            num(mean(bm), 2),
            num(mean(cm), 2),
            num(speedup, 2),
            signed_pct(cm.and_then(|x| x.change_pct)),
            ci_pct(cm.and_then(|x| x.ci)),
            cm.and_then(|x| x.verdict).map_or_else(|| NONE.into(), |v| m.verdict_word(v).into()),
        ]);
    }
    t
}
