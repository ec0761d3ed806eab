//! The verdict of every metric (docs/methodology.md §8): one section per metric, a row per
//! variant with its runs, mean, median, CV, change vs the baseline (the estimate the interval is
//! built on), the 95% interval, the ratio of medians and the verdict, then what each undecided
//! interval rules out. The rows ([`verdict_lines`]) are also the machine formats' table.
use crate::report::section::Section;
use crate::report::table::{Column, Table};
use crate::report::{ci_pct, cv_pct, num, runs, signed_pct};
use crate::summary::stats::{ChangeCi, CiMethod};
use crate::summary::{Metric, Summary};
use serde::Serialize;

/// One metric of one variant: the verdict table's row, built once per summary ([`verdict_lines`])
/// and shown by every format (the text, the `--format` table, the report's page and Markdown).
#[derive(Debug, Clone, Serialize)]
pub(crate) struct VerdictLine<'a> {
    pub(crate) metric: Metric,
    pub(crate) variant: &'a str,
    pub(crate) accepted: usize,
    pub(crate) planned: usize,
    /// Every accepted sample's value, at full precision (the text prints them at the metric's
    /// decimals, [`crate::report::runs`]).
    pub(crate) runs: &'a [f64],
    pub(crate) mean: Option<f64>,
    pub(crate) median: Option<f64>,
    /// The per-sample noise: the accepted values' coefficient of variation, % (docs/methodology.md §8).
    pub(crate) cv_pct: Option<f64>,
    /// `cv_pct` is above the level every report flags (docs/methodology.md §8 "Per-sample noise").
    #[serde(skip)]
    pub(crate) high_cv: bool,
    /// The estimate the interval is built on (docs/methodology.md §8).
    pub(crate) change_pct: Option<f64>,
    /// The ratio of medians, a secondary figure no verdict uses.
    pub(crate) median_change_pct: Option<f64>,
    pub(crate) ci_lo_pct: Option<f64>,
    pub(crate) ci_hi_pct: Option<f64>,
    pub(crate) verdict: &'static str,
    pub(crate) measures: Option<&'a str>,
    /// The p beside the interval: an adaptive study's repeated p, the smallest α whose repeated
    /// interval excludes 0 (`ChangeCi::repeated_p`), a fixed study's plain t-test p.
    pub(crate) p_value: Option<f64>,
    pub(crate) ci_method: Option<CiMethod>,
    #[serde(skip)]
    pub(crate) ci: Option<ChangeCi>,
    /// The variant's median draft acceptance and its 95% interval, and the tokens one decode
    /// step yields: columns of the table only when some variant of the study drafted.
    pub(crate) acceptance_median: Option<f64>,
    pub(crate) acceptance_ci_lo: Option<f64>,
    pub(crate) acceptance_ci_hi: Option<f64>,
    pub(crate) tokens_per_step: Option<f64>,
    /// The variant's server memory (total and its MTP or draft context's, MiB): columns only when
    /// some variant's log sized its buffers.
    pub(crate) memory_total_mib: Option<f64>,
    pub(crate) memory_speculative_context_mib: Option<f64>,
    /// The MTP yardstick's aggregate block (§4.1): columns only in that workload.
    pub(crate) yardstick_acceptance_median: Option<f64>,
    pub(crate) yardstick_acceptance_ci_lo: Option<f64>,
    pub(crate) yardstick_acceptance_ci_hi: Option<f64>,
    pub(crate) yardstick_drafted_median: Option<f64>,
    pub(crate) yardstick_wall_ms_median: Option<f64>,
}

/// The verdict table's rows: every metric × variant that has the metric, metrics in
/// the summary's order ([`Summary::metrics`]).
pub(crate) fn verdict_lines(s: &Summary) -> Vec<VerdictLine<'_>> {
    let mut lines = Vec::new();
    for m in s.metrics() {
        for v in &s.variants {
            let Some(ms) = v.metric(m) else { continue };
            lines.push(VerdictLine {
                metric: m,
                variant: &v.label,
                accepted: v.accepted,
                planned: v.planned,
                runs: &ms.runs,
                mean: ms.mean,
                median: ms.median,
                cv_pct: crate::stats::cv_pct(&ms.runs),
                high_cv: ms.high_cv,
                change_pct: ms.change_pct,
                median_change_pct: ms.median_change_pct,
                ci_lo_pct: ms.ci.map(|c| c.lo_pct),
                ci_hi_pct: ms.ci.map(|c| c.hi_pct),
                verdict: ms.verdict.map_or("baseline", |v| m.verdict_word(v)),
                measures: ms.measures.as_deref(),
                p_value: ms.ci.and_then(|c| c.repeated_p()),
                ci_method: ms.ci.map(|c| c.method),
                ci: ms.ci,
                acceptance_median: v.acceptance_median,
                acceptance_ci_lo: v.acceptance_ci.map(|c| c[0]),
                acceptance_ci_hi: v.acceptance_ci.map(|c| c[1]),
                tokens_per_step: v.mean_acceptance_length_median,
                memory_total_mib: v.memory.as_ref().map(|m| m.total_mib),
                memory_speculative_context_mib: v.memory.as_ref().map(|m| m.speculative_context_mib),
                yardstick_acceptance_median: v.mtp_yardstick.as_ref().and_then(|y| y.acceptance_median),
                yardstick_acceptance_ci_lo: v.mtp_yardstick.as_ref().and_then(|y| y.acceptance_ci).map(|c| c[0]),
                yardstick_acceptance_ci_hi: v.mtp_yardstick.as_ref().and_then(|y| y.acceptance_ci).map(|c| c[1]),
                yardstick_drafted_median: v.mtp_yardstick.as_ref().and_then(|y| y.drafted_median),
                yardstick_wall_ms_median: v.mtp_yardstick.as_ref().and_then(|y| y.wall_ms_median),
            });
        }
    }
    lines
}

/// What an undecided interval rules out (docs/methodology.md §8): the smallest change the
/// study would have found, and the blocks a change the size of its estimate needs. An adaptive
/// study's interval says first which interval its verdict "same" read (§17).
pub(crate) fn undecided_line(ci: &ChangeCi) -> Option<String> {
    let same = ci.equivalence.map(|[lo, hi]| {
        format!("its equivalence interval (repeated 90%, docs/methodology.md §17) is [{lo:+.2}%, {hi:+.2}%]; ")
    });
    let mde = ci.mde_pct?;
    let need = match ci.blocks_to_decide {
        Some(n) => format!(
            "a change the size of this estimate ({:+.2}%) needs about {n} blocks (`--until-decided --max-samples {n}`)",
            ci.center_pct()
        ),
        None => format!(
            "a change the size of this estimate ({:+.2}%) needs more than {} blocks at this spread",
            ci.center_pct(),
            crate::summary::stats::MAX_BLOCKS_ADVISED
        ),
    };
    Some(format!(
        "{}no clear difference rules out changes beyond ±{mde:.2}% (found 80% of the time by this study); {need}",
        same.unwrap_or_default()
    ))
}

/// The flag beside a metric whose per-sample CV is above the level of docs/methodology.md §8.
fn high_cv_line(variant: &str, cv: Option<f64>) -> String {
    format!(
        "! {variant}: per-sample CV {} is above {}% (docs/methodology.md §8 \"Per-sample noise\"): at this spread only a large change can be resolved",
        cv_pct(cv),
        crate::summary::noise::HIGH_CV_PCT
    )
}

/// One section per metric the study has ([`Summary::metrics`]: an energy metric only where
/// measured, a llama-bench study's tests).
pub(crate) fn sections(s: &Summary) -> Vec<Section> {
    let base = s.variants.first().map_or("baseline", |v| v.label.as_str());
    let lines = verdict_lines(s);
    let mut out = Vec::new();
    for m in s.metrics() {
        let rows: Vec<&VerdictLine> = lines.iter().filter(|l| l.metric == m).collect();
        if m.is_energy() && rows.is_empty() {
            continue;
        }
        let mut t = Table::new(vec![
            Column::text("variant"),
            Column::text("runs"),
            Column::number("mean"),
            Column::number("median"),
            Column::number("CV"),
            Column::number(&format!("vs {base}")),
            Column::number("95% CI"),
            Column::number("medians"),
            Column::verdict("verdict"),
        ]);
        let d = m.decimals();
        for l in &rows {
            t.push_text(vec![
                l.variant.into(),
                runs(l.runs, d),
                num(l.mean, d),
                num(l.median, d),
                cv_pct(l.cv_pct),
                signed_pct(l.change_pct),
                ci_pct(l.ci),
                signed_pct(l.median_change_pct),
                l.verdict.into(),
            ]);
        }
        let undecided = rows.iter().filter_map(|l| Some(format!("{}: {}", l.variant, undecided_line(l.ci.as_ref()?)?)));
        let noisy = rows.iter().filter(|l| l.high_cv).map(|l| high_cv_line(l.variant, l.cv_pct));
        out.push(Section::new(metric_title(s, m)).table(t).notes(undecided.chain(noisy)));
    }
    out
}

/// The metric's title, with what it measures in this study and where its energy came from.
fn metric_title(s: &Summary, m: Metric) -> String {
    let from = s.variants.iter().find_map(|v| v.metric(m)?.energy_from.clone());
    let caveat = s.variants.first().and_then(|v| v.metric(m)).and_then(|x| x.measures.clone());
    match (caveat, from) {
        (Some(c), Some(f)) => format!("{} — {c}; from the {f}", m.title()),
        (None, Some(f)) => format!("{} — from the {f}", m.title()),
        (Some(c), None) => format!("{} — {c}", m.title()),
        (None, None) => m.title().into(),
    }
}

/// Which candidates' intervals are paired within blocks, and over how many (§8).
pub(crate) fn paired_line(s: &Summary) -> Vec<Section> {
    let paired: Vec<String> = s
        .variants
        .iter()
        .filter_map(|v| {
            let c = v.metric(Metric::ServerDecodeTps)?.ci?;
            matches!(c.method, CiMethod::PairedBlocks | CiMethod::PairedT | CiMethod::PooledT)
                .then(|| format!("{} ({} blocks)", v.label, c.pairs.unwrap_or(0)))
        })
        .collect();
    if paired.is_empty() {
        return Vec::new();
    }
    vec![Section::line(format!(
        "intervals paired within interleaved blocks (a drift both sides of a block share cancels): {}",
        paired.join(", ")
    ))]
}
