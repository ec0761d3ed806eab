//! Everything a study report shows, gathered once from the evidence folder: the summary, the facts
//! the study recorded (host, binaries, versions, argv, env, isolation hooks), every sample's metric
//! values and telemetry timeline, and the exactness and Pi reports when the folder holds them.
//! The renderers in `report/` read this and never the files.
use super::pi::PiReport;
use super::traces::TraceComparison;
use super::{Metric, Summary};
use crate::exactness::ExactnessReport;
use crate::measure::Sample;
use crate::study::evidence::{Evidence, EvidenceError, Plan};
use crate::study::facts::{HostFacts, VariantFacts};
use crate::study::isolation::IsolationRecord;
use crate::study::sample_folder::SampleFolder;
use crate::study::StudyFacts;
use crate::telemetry::record::HostCpu;
use crate::telemetry::Field;
use std::path::Path;

/// The telemetry a timeline is meant to show; each one a sample lacks is named as absent.
pub(crate) const TIMELINE_FIELDS: [Field; 4] = [Field::PowerW, Field::BusyPct, Field::GfxClockMhz, Field::TempGpuC];

/// Also drawn when the series has them (the server's CPU is all a GPU-less host records).
const EXTRA_FIELDS: [Field; 4] = [Field::PowerAvgW, Field::TempHotspotC, Field::MemBusyPct, Field::CpuPct];

#[derive(Debug, Clone)]
pub(crate) struct StudyView {
    pub(crate) summary: Summary,
    pub(crate) host: Option<HostFacts>,
    pub(crate) variants: Vec<VariantFacts>,
    pub(crate) isolation: Option<IsolationRecord>,
    /// Every planned sample found on disk, in study order (earlier attempts are in
    /// `summary.rejected`).
    pub(crate) samples: Vec<SampleView>,
    /// The study's kernel attribution: `summary.traces`, or for an `abprof trace` folder the
    /// comparison of its own traces.
    pub(crate) traces: Option<TraceComparison>,
    pub(crate) exactness: Option<ExactnessReport>,
    pub(crate) pi: Option<PiReport>,
    /// Evidence files that exist but could not be read, each with why: shown, never skipped.
    pub(crate) unreadable: Vec<String>,
}

/// What the rulebook made of a sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SampleStatus {
    Accepted,
    Rejected,
    /// Taken under a kernel tracer: the trace's evidence, never a median.
    Traced,
    /// Its record is missing or unreadable.
    Unrecorded,
}

#[derive(Debug, Clone)]
pub(crate) struct SampleView {
    /// 1-based study index.
    pub(crate) index: usize,
    pub(crate) label: String,
    /// Relative to the study folder.
    pub(crate) dir: String,
    pub(crate) status: SampleStatus,
    pub(crate) values: Vec<(Metric, f64)>,
    pub(crate) timeline: Option<SampleTimeline>,
}

impl SampleView {
    pub(crate) fn value(&self, m: Metric) -> Option<f64> {
        self.values.iter().find(|(x, _)| *x == m).map(|(_, v)| *v)
    }
}

/// One field of a telemetry series: (ms since the request started, value).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FieldSeries {
    pub(crate) field: Field,
    pub(crate) points: Vec<(f64, f64)>,
}

/// A sample's telemetry over time, on the request's clock (0 = request sent).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SampleTimeline {
    pub(crate) source: String,
    pub(crate) achieved_hz: f64,
    /// [start, end] in ms: request → first token.
    pub(crate) prefill_ms: Option<[f64; 2]>,
    /// [start, end] in ms: first → last token.
    pub(crate) decode_ms: Option<[f64; 2]>,
    /// Fields with at least one value, [`TIMELINE_FIELDS`] first.
    pub(crate) series: Vec<FieldSeries>,
    /// [`TIMELINE_FIELDS`] the series never held.
    pub(crate) absent: Vec<Field>,
    pub(crate) host_cpu: Option<HostCpu>,
    /// Why the series file could not be read, when it could not.
    pub(crate) unreadable: Option<String>,
}

fn timeline(folder: &SampleFolder, s: &Sample) -> Option<SampleTimeline> {
    let rec = s.extra.telemetry.as_ref()?;
    let series = match folder.telemetry_file(rec) {
        None => Err("the record names no series file".to_string()),
        Some(file) => crate::telemetry::csv::read_series(&file).map_err(|e| e.to_string()),
    };
    let rows = series.as_deref().unwrap_or_default();
    let origin = s.request_start.or_else(|| rows.first().map(|r| r.at));
    let ms = |t: u64| origin.map_or(0.0, |o| (t as f64 - o.mono_ns as f64) / 1e6);
    let span = |a: Option<crate::clock::Stamp>, b: Option<crate::clock::Stamp>| match (a, b) {
        (Some(a), Some(b)) => Some([ms(a.mono_ns), ms(b.mono_ns)]),
        _ => None,
    };
    let mut out = Vec::new();
    for field in TIMELINE_FIELDS.into_iter().chain(EXTRA_FIELDS) {
        let points: Vec<(f64, f64)> =
            rows.iter().filter_map(|r| r.reading.get(field).map(|v| (ms(r.at.mono_ns), v))).collect();
        if !points.is_empty() {
            out.push(FieldSeries { field, points });
        }
    }
    let has = |f: Field| out.iter().any(|x| x.field == f || (f == Field::PowerW && x.field == Field::PowerAvgW));
    Some(SampleTimeline {
        source: rec.source.clone(),
        achieved_hz: rec.achieved_hz,
        prefill_ms: span(s.request_start, s.first_token),
        decode_ms: span(s.first_token, s.last_token),
        absent: TIMELINE_FIELDS.into_iter().filter(|f| !has(*f)).collect(),
        series: out,
        host_cpu: rec.host_cpu.clone(),
        unreadable: series.err(),
    })
}

/// Reads an optional evidence file: absent is `None`; present but unreadable is `None` and a line
/// in `unreadable`.
fn optional<T>(exists: bool, read: Result<T, EvidenceError>, unreadable: &mut Vec<String>) -> Option<T> {
    if !exists {
        return None;
    }
    read.map_err(|e| unreadable.push(e.to_string())).ok()
}

impl StudyView {
    /// The view of the study in `ev`, around its already computed `summary` and the facts it was
    /// judged on (read once, by the summary floor).
    pub(crate) fn of(ev: &Evidence, summary: Summary, facts: &StudyFacts) -> anyhow::Result<StudyView> {
        let plan: &Plan = &facts.plan;
        let mut unreadable = facts.unreadable.clone();
        let (host, variants) = (facts.host.clone(), facts.variants.clone());
        let isolation = optional(ev.has_isolation(), ev.read_isolation(), &mut unreadable);
        let exactness = optional(ev.exactness().has_report(), ExactnessReport::read(&ev.exactness()), &mut unreadable);
        let pi = optional(ev.pi_report_file().exists(), ev.read_pi_report(), &mut unreadable);
        let rel = |p: &Path| p.strip_prefix(&ev.root).unwrap_or(p).display().to_string();
        let samples = ev
            .samples(plan)
            .into_iter()
            .map(|f| {
                let dir = rel(&f.dir);
                let status = match &f.sample {
                    None => SampleStatus::Unrecorded,
                    Some(_) if plan.is_traced(&f.slot) => SampleStatus::Traced,
                    Some(_) if summary.rejected.iter().any(|r| r.dir == dir) => SampleStatus::Rejected,
                    Some(_) => SampleStatus::Accepted,
                };
                let values = f.sample.as_ref().map_or_else(Vec::new, |s| {
                    let series = f.series();
                    Metric::values(super::MetricInput { sample: s, series: &series })
                });
                SampleView {
                    index: f.slot.index + 1,
                    label: f.label.clone(),
                    timeline: f.sample.as_ref().and_then(|s| timeline(&f.folder(), s)),
                    dir,
                    status,
                    values,
                }
            })
            .collect();
        let traces = summary.traces.clone();
        Ok(StudyView { summary, host, variants, isolation, samples, traces, exactness, pi, unreadable })
    }

    /// Summarizes the study in `dir` and gathers its view.
    #[cfg(test)]
    pub(crate) fn load(dir: &Path) -> anyhow::Result<StudyView> {
        let ev = crate::study::open(dir)?.evidence;
        let judged = super::judge(&ev)?;
        StudyView::of(&ev, judged.summary, &judged.facts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture() -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/evidence-pre-engine/study")
    }

    #[test]
    fn the_captured_study_reads_into_one_view() {
        let v = StudyView::load(&fixture()).unwrap();
        assert!(v.unreadable.is_empty(), "{:?}", v.unreadable);
        assert_eq!(v.variants.len(), 2);
        assert_eq!(v.host.as_ref().unwrap().cores, 2);
        assert_eq!(v.isolation.as_ref().unwrap().restored, Some(true));
        assert!(v.exactness.is_none() && v.pi.is_none() && v.traces.is_none());
        let labels: Vec<(usize, &str)> = v.samples.iter().map(|s| (s.index, s.label.as_str())).collect();
        assert_eq!(labels, [(1, "f16"), (2, "q8_0"), (3, "q8_0"), (4, "f16")]);
        for s in &v.samples {
            assert_eq!(s.status, SampleStatus::Accepted);
            assert!(s.value(Metric::ServerDecodeTps).unwrap() > 0.0);
            let t = s.timeline.as_ref().unwrap();
            assert_eq!(t.unreadable, None);
            // A GPU-less host: the server's CPU only, the GPU fields named as absent.
            assert_eq!(t.series.iter().map(|x| x.field).collect::<Vec<_>>(), [Field::CpuPct]);
            assert_eq!(t.absent, TIMELINE_FIELDS);
            let [p0, p1] = t.prefill_ms.unwrap();
            let [d0, d1] = t.decode_ms.unwrap();
            assert!(p0 == 0.0 && p1 > 0.0 && d0 == p1 && d1 > d0, "{t:?}");
            assert!(t.host_cpu.is_some());
        }
        // The accepted values are the summary's runs, sample for sample.
        let runs = &v.summary.variants[0].metric(Metric::ServerDecodeTps).unwrap().runs;
        let mine: Vec<f64> =
            v.samples.iter().filter(|s| s.label == "f16").filter_map(|s| s.value(Metric::ServerDecodeTps)).collect();
        assert_eq!(&mine, runs);
    }

    #[test]
    fn a_series_that_cannot_be_read_is_said_not_dropped() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join("study");
        let st = std::process::Command::new("cp").arg("-r").arg(fixture()).arg(&dir).status().unwrap();
        assert!(st.success());
        std::fs::remove_file(dir.join("samples/002-q8_0/telemetry.csv")).unwrap();
        std::fs::write(dir.join("host.json"), "{").unwrap();
        let v = StudyView::load(&dir).unwrap();
        assert_eq!(v.unreadable.len(), 1, "{:?}", v.unreadable);
        assert!(v.unreadable[0].contains("host.json"));
        let t = v.samples[1].timeline.as_ref().unwrap();
        assert!(t.unreadable.as_ref().unwrap().contains("telemetry.csv"), "{t:?}");
        assert!(t.series.is_empty());
    }
}
