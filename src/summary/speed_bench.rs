//! SPEED-Bench's block per variant (docs/methodology.md §4.3): the upstream client's figures per
//! category — mean prefill and decode rate of the category's requests (`timings`), mean client
//! latency, drafted, accepted and their ratio — over the accepted samples, and for a candidate the
//! upstream compare script's two speedups beside the study's own paired interval of the category's
//! decode rate.
use super::stats::{change_ci, ChangeCi, Measured};
use crate::measure::sequence::SequenceRequest;
use crate::measure::speed_bench::SpeedBenchRun;
use serde::{Deserialize, Serialize};

/// The row that takes every category together, as the upstream client's summary ends.
pub(crate) const OVERALL: &str = "overall";

/// One category's figures over a variant's accepted samples (the upstream client's summary row).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct CategoryFigures {
    pub(crate) category: String,
    /// The category's requests over the accepted samples.
    pub(crate) requests: usize,
    /// Mean of the requests' prefill rates (`prompt_n` / `prompt_ms`), tok/s: `avg_prompt_t/s`.
    pub(crate) prompt_tps_mean: Option<f64>,
    /// Mean of the requests' decode rates (`predicted_n` / `predicted_ms`), tok/s: `avg_pred_t/s`.
    pub(crate) decode_tps_mean: Option<f64>,
    /// Mean request start → response end as the client saw it, ms: `avg_latency`.
    pub(crate) latency_ms_mean: Option<f64>,
    /// Σ `draft_n`, Σ `draft_n_accepted`, and their ratio (`accept_rate`; none when nothing was
    /// drafted).
    pub(crate) drafted: u64,
    pub(crate) accepted: u64,
    pub(crate) acceptance: Option<f64>,
}

/// A candidate's category against the baseline's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct CategoryChange {
    pub(crate) category: String,
    /// The compare script's `decode_speedup`: candidate `avg_pred_t/s` / baseline's.
    pub(crate) decode_speedup: Option<f64>,
    /// The compare script's `latency_speedup`: baseline `avg_latency` / candidate's.
    pub(crate) latency_speedup: Option<f64>,
    /// The study's 95% interval of the change of the category's decode rate, block by block
    /// (docs/methodology.md §8), each category at 95% on its own; in an adaptive study the
    /// repeated interval at the look's level (§17), as every interval of such a study.
    pub(crate) decode_change: Option<ChangeCi>,
}

/// A variant's SPEED-Bench block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct SpeedBenchFigures {
    /// In the order the prompts were sent, then [`OVERALL`].
    pub(crate) categories: Vec<CategoryFigures>,
    /// A candidate's changes against the baseline, in the same order; empty for the baseline.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) changes: Vec<CategoryChange>,
}

/// The accepted samples' runs of one variant, each with its block.
pub(crate) type Runs<'a> = [(usize, &'a SpeedBenchRun)];

/// The block of a variant's `runs`, against the `baseline`'s runs for a candidate, its intervals
/// at `per_look_alpha` in an adaptive study; `None` when no sample ran SPEED-Bench.
pub(crate) fn figures(
    runs: &Runs<'_>,
    baseline: Option<&Runs<'_>>,
    per_look_alpha: Option<f64>,
) -> Option<SpeedBenchFigures> {
    let order = categories(runs)?;
    let categories: Vec<CategoryFigures> = order.iter().map(|c| category_figures(c, runs)).collect();
    let changes = match baseline.filter(|b| !b.is_empty()) {
        Some(base) => {
            let base_figures: Vec<CategoryFigures> = order.iter().map(|c| category_figures(c, base)).collect();
            order
                .iter()
                .zip(categories.iter().zip(&base_figures))
                .map(|(c, (cand, base_row))| CategoryChange {
                    category: c.clone(),
                    decode_speedup: ratio(cand.decode_tps_mean, base_row.decode_tps_mean),
                    latency_speedup: ratio(base_row.latency_ms_mean, cand.latency_ms_mean),
                    decode_change: change_ci(&per_block(c, base), &per_block(c, runs), 0.95, per_look_alpha),
                })
                .collect()
        }
        None => Vec::new(),
    };
    Some(SpeedBenchFigures { categories, changes })
}

/// The categories in the order the first run sent them, then [`OVERALL`].
fn categories(runs: &Runs<'_>) -> Option<Vec<String>> {
    let (_, first) = runs.first()?;
    let mut order: Vec<String> = Vec::new();
    for r in &first.requests {
        if !order.contains(&r.name) {
            order.push(r.name.clone());
        }
    }
    order.push(OVERALL.into());
    Some(order)
}

/// The requests of `category` ([`OVERALL`]: every request) of one run.
fn of_category<'r>(category: &str, run: &'r SpeedBenchRun) -> impl Iterator<Item = &'r SequenceRequest> {
    let (all, category) = (category == OVERALL, category.to_string());
    run.requests.iter().filter(move |r| all || r.name == category)
}

fn category_figures(category: &str, runs: &Runs<'_>) -> CategoryFigures {
    let requests: Vec<&SequenceRequest> = runs.iter().flat_map(|(_, run)| of_category(category, run)).collect();
    let drafted = requests.iter().map(|r| r.draft_n).sum();
    let accepted = requests.iter().map(|r| r.draft_n_accepted).sum();
    CategoryFigures {
        category: category.into(),
        requests: requests.len(),
        prompt_tps_mean: mean(requests.iter().filter_map(|r| r.prefill_tps())),
        decode_tps_mean: mean(requests.iter().filter_map(|r| r.decode_tps())),
        latency_ms_mean: mean(requests.iter().filter_map(|r| r.wall_ms)),
        drafted,
        accepted,
        acceptance: (drafted > 0).then(|| accepted as f64 / drafted as f64),
    }
}

/// Each block's decode rate of `category`: the mean of its requests' rates, as the row's.
fn per_block(category: &str, runs: &Runs<'_>) -> Vec<Measured> {
    runs.iter()
        .filter_map(|(block, run)| {
            mean(of_category(category, run).filter_map(|r| r.decode_tps()))
                .map(|value| Measured { block: *block, value })
        })
        .collect()
}

/// The project's mean (non-finite values ignored) of an iterator's values.
fn mean(xs: impl Iterator<Item = f64>) -> Option<f64> {
    crate::stats::mean(&xs.collect::<Vec<_>>())
}

fn ratio(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    a.zip(b).filter(|&(_, b)| b > 0.0).map(|(a, b)| a / b)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A request of `category` that decoded 100 tokens at `tps` after a 50-token prefill at 1000
    /// tok/s, drafted 60 and accepted `accepted`, in `wall_ms`.
    fn request(category: &str, tps: f64, accepted: u64, wall_ms: f64) -> SequenceRequest {
        SequenceRequest {
            name: category.into(),
            wall_ms: Some(wall_ms),
            start_mono_ns: None,
            end_mono_ns: None,
            finish_reason: Some("length".into()),
            completion_tokens: Some(100),
            prompt_tokens: Some(50),
            prompt_n: Some(50),
            prompt_ms: Some(50.0),
            predicted_n: Some(100),
            predicted_ms: Some(100_000.0 / tps),
            draft_n: 60,
            draft_n_accepted: accepted,
        }
    }

    fn run(coding_tps: f64, math_tps: f64, wall_ms: f64) -> SpeedBenchRun {
        SpeedBenchRun {
            requests: vec![request("coding", coding_tps, 45, wall_ms), request("math", math_tps, 30, wall_ms)],
        }
    }

    #[test]
    fn each_category_has_the_clients_figures_and_the_overall_row_takes_them_together() {
        let (a, b) = (run(100.0, 50.0, 1000.0), run(110.0, 60.0, 2000.0));
        let f = figures(&[(0, &a), (1, &b)], None, None).unwrap();
        let names: Vec<&str> = f.categories.iter().map(|c| c.category.as_str()).collect();
        assert_eq!(names, ["coding", "math", OVERALL]);
        let coding = &f.categories[0];
        assert_eq!(coding.requests, 2);
        assert!((coding.decode_tps_mean.unwrap() - 105.0).abs() < 1e-9, "the mean of the requests' rates");
        assert!((coding.prompt_tps_mean.unwrap() - 1000.0).abs() < 1e-9);
        assert!((coding.latency_ms_mean.unwrap() - 1500.0).abs() < 1e-9);
        assert_eq!((coding.drafted, coding.accepted), (120, 90));
        assert_eq!(coding.acceptance, Some(0.75));
        let overall = &f.categories[2];
        assert_eq!((overall.requests, overall.drafted, overall.accepted), (4, 240, 150));
        assert!((overall.decode_tps_mean.unwrap() - 80.0).abs() < 1e-9);
        assert!(f.changes.is_empty(), "the baseline has no changes");
    }

    #[test]
    fn a_candidate_gets_the_compare_scripts_speedups_beside_its_paired_interval() {
        let base = [run(100.0, 50.0, 1000.0), run(102.0, 51.0, 1000.0), run(98.0, 49.0, 1000.0)];
        let cand = [run(120.0, 50.5, 800.0), run(123.0, 51.0, 800.0), run(117.0, 49.4, 800.0)];
        fn blocks(runs: &[SpeedBenchRun]) -> Vec<(usize, &SpeedBenchRun)> {
            runs.iter().enumerate().collect()
        }
        let f = figures(&blocks(&cand), Some(&blocks(&base)), None).unwrap();
        assert_eq!(f.changes.len(), 3);
        let coding = &f.changes[0];
        assert!((coding.decode_speedup.unwrap() - 1.2).abs() < 1e-9, "{coding:?}");
        assert!((coding.latency_speedup.unwrap() - 1.25).abs() < 1e-9);
        let ci = coding.decode_change.unwrap();
        assert!(ci.lo_pct > 15.0 && ci.hi_pct < 25.0, "a steady +20%: {ci:?}");
        let math = f.changes[1].decode_change.unwrap();
        assert!(math.contains_zero(), "+0.5% on ±2% per block is not called: {math:?}");
        assert_eq!(f.changes[2].category, OVERALL);
        assert!(figures(&[], None, None).is_none(), "no SPEED-Bench sample, no block");
        // An adaptive study's look: the repeated interval, wider than the plain one.
        let repeated = figures(&blocks(&cand), Some(&blocks(&base)), Some(0.003)).unwrap();
        let wide = repeated.changes[0].decode_change.unwrap();
        assert!(wide.lo_pct < ci.lo_pct && wide.hi_pct > ci.hi_pct, "{wide:?} against {ci:?}");
    }
}
