//! The summary of a sweep (docs/methodology.md §16): every point's own summary, then one table per
//! metric with a row per point and variant, its verdicts Holm-adjusted across the metric's family
//! (every point × candidate that has an interval).
use super::adaptive::Adaptive;
use super::stats::{holm, ChangeCi, Verdict};
use super::{Metric, Summary};
use crate::study::evidence::Evidence;
use crate::study::file::StudyFile;
use crate::study::file::{AxisName, AxisValue};
use crate::study::sweep::{PointState, SweepRecord};
use serde::{Deserialize, Serialize};

/// The familywise error rate the verdicts keep.
pub(crate) const FAMILY_ALPHA: f64 = 0.05;

/// How a metric's verdicts were adjusted.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Family {
    /// Always "holm": Holm's step-down adjustment of the t-test p-values (an adaptive point's
    /// repeated p, `ChangeCi::repeated_p`).
    pub(crate) method: String,
    pub(crate) alpha: f64,
    /// Comparisons in the family: every point × candidate with an interval of this metric.
    pub(crate) comparisons: usize,
}

/// One variant at one point.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct SweepRow {
    pub(crate) point: String,
    pub(crate) variant: String,
    pub(crate) accepted: usize,
    pub(crate) planned: usize,
    pub(crate) runs: Vec<f64>,
    pub(crate) median: Option<f64>,
    /// None for the baseline.
    pub(crate) change_pct: Option<f64>,
    /// The comparison's own 95% interval (not adjusted).
    pub(crate) ci: Option<ChangeCi>,
    pub(crate) p_holm: Option<f64>,
    /// Holm-adjusted; None for the baseline.
    pub(crate) verdict: Option<Verdict>,
}

/// One metric across the sweep.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct MetricTable {
    pub(crate) metric: Metric,
    pub(crate) family: Family,
    pub(crate) rows: Vec<SweepRow>,
}

/// One point: where its study is and how it went.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct PointSummary {
    pub(crate) name: String,
    pub(crate) dir: String,
    pub(crate) values: Vec<AxisValue>,
    pub(crate) state: PointState,
    pub(crate) tokens: Option<u32>,
    pub(crate) expected_prompt_tokens: Option<u64>,
    pub(crate) rejected: usize,
    /// Planned samples not taken yet.
    pub(crate) missing: usize,
    pub(crate) isolation_restored: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) adaptive: Option<Adaptive>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct SweepSummary {
    pub(crate) root: String,
    pub(crate) name: Option<String>,
    pub(crate) axes: Vec<AxisName>,
    /// Variant labels, the baseline first.
    pub(crate) variants: Vec<String>,
    pub(crate) samples_per_variant: u32,
    pub(crate) points: Vec<PointSummary>,
    pub(crate) tables: Vec<MetricTable>,
    /// Each started point as judged (its summary, samples and fingerprint): its summary is written
    /// to its folder (not repeated in this document), its report and history row come from it.
    #[serde(skip)]
    pub(crate) point_summaries: Vec<(Evidence, super::Judged)>,
}

/// The one type a sweep's `summary.json` holds.
impl crate::study::documents::SweepSummaryDoc for SweepSummary {}

impl SweepSummary {
    /// Writes each started point's summary into its own folder (`ab --sweep` at its end and
    /// `abprof summarize` both keep them here).
    pub(crate) fn keep_point_summaries(&self) -> Result<(), crate::study::evidence::EvidenceError> {
        self.point_summaries.iter().try_for_each(|(point, j)| point.write_study_summary(&j.summary))
    }

    /// Points not done: `abprof ab --resume` finishes them.
    pub(crate) fn unfinished(&self) -> usize {
        self.points.iter().filter(|p| p.state != PointState::Done || p.missing > 0).count()
    }
}

/// Builds the summary of the sweep in `ev`, whose study file (read once, by the caller) is `file`,
/// from its points' evidence alone.
pub(crate) fn summarize_sweep(ev: &Evidence, file: &StudyFile) -> anyhow::Result<SweepSummary> {
    let record = ev.read_sweep_record()?;
    let mut points = Vec::new();
    let mut summaries: Vec<Option<Summary>> = Vec::new();
    let mut point_summaries = Vec::new();
    for p in &record.points {
        let dir = ev.point(&p.dir);
        let point = if Evidence::started(&dir) { Some(Evidence::open(&dir)?) } else { None };
        let judged = point.as_ref().map(super::judge).transpose()?;
        let s = judged.as_ref().map(|j| j.summary.clone());
        points.push(PointSummary {
            name: p.name.clone(),
            dir: p.dir.clone(),
            values: p.values.clone(),
            state: p.state,
            tokens: s.as_ref().map(|s| s.tokens),
            expected_prompt_tokens: s.as_ref().and_then(|s| s.expected_prompt_tokens),
            rejected: s.as_ref().map_or(0, |s| s.rejected.len()),
            missing: s.as_ref().map_or(0, |s| s.missing),
            isolation_restored: s.as_ref().and_then(|s| s.isolation_restored),
            adaptive: s.as_ref().and_then(|s| s.adaptive.clone()),
        });
        if let (Some(point), Some(j)) = (point, judged) {
            point_summaries.push((point, j));
        }
        summaries.push(s);
    }
    let labels: Vec<String> = crate::variant::parse_variants(&file.variants)
        .map(|vs| vs.into_iter().map(|v| v.label).collect())
        .unwrap_or_default();
    // An energy metric's table only where some point measured it (docs/methodology.md §9.6); a
    // sweep of llama-bench studies tabulates their tests (§4.4).
    let mut metrics: Vec<Metric> = Vec::new();
    for m in summaries.iter().flatten().flat_map(Summary::metrics) {
        if !metrics.contains(&m) {
            metrics.push(m);
        }
    }
    let llama_bench = metrics.iter().any(|m| m.llama_bench_test().is_some());
    let tables = (if llama_bench { metrics } else { Metric::every().collect() })
        .into_iter()
        .map(|m| table(m, &record, &summaries))
        .filter(|t| !t.metric.is_energy() || !t.rows.is_empty())
        .collect();
    Ok(SweepSummary {
        root: ev.root.display().to_string(),
        name: file.name.clone(),
        axes: record.axes.clone(),
        variants: labels,
        samples_per_variant: file.samples,
        points,
        tables,
        point_summaries,
    })
}

/// One metric's rows, its candidates' verdicts Holm-adjusted across the sweep.
fn table(m: Metric, record: &SweepRecord, summaries: &[Option<Summary>]) -> MetricTable {
    let mut rows = Vec::new();
    for (p, s) in record.points.iter().zip(summaries) {
        let Some(s) = s else { continue };
        for v in &s.variants {
            let Some(x) = v.metric(m) else { continue };
            rows.push(SweepRow {
                point: p.name.clone(),
                variant: v.label.clone(),
                accepted: v.accepted,
                planned: v.planned,
                runs: x.runs.clone(),
                median: x.median,
                change_pct: x.change_pct,
                ci: x.ci,
                p_holm: None,
                verdict: x.verdict,
            });
        }
    }
    // The family: every comparison with a p-value (a candidate with too few samples has none).
    // An adaptive point's p is its repeated p (§17), valid at the look it stopped on.
    let tested: Vec<usize> =
        (0..rows.len()).filter(|&i| rows[i].ci.as_ref().and_then(|c| c.repeated_p()).is_some()).collect();
    let p: Vec<f64> = tested.iter().map(|&i| rows[i].ci.and_then(|c| c.repeated_p()).expect("tested")).collect();
    for (&i, adjusted) in tested.iter().zip(holm(&p)) {
        rows[i].p_holm = Some(adjusted);
    }
    for r in rows.iter_mut() {
        if let Some(own) = r.verdict {
            r.verdict = Some(Verdict::from_adjusted(r.ci.as_ref(), r.p_holm, FAMILY_ALPHA, own));
        }
    }
    MetricTable {
        metric: m,
        family: Family { method: "holm".into(), alpha: FAMILY_ALPHA, comparisons: tested.len() },
        rows,
    }
}
