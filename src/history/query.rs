//! Reading the history back: every recorded variant with its study's setup and its verdicts, and
//! the filters `abprof history` takes.
use super::record::{RecordKind, VerdictRow};
use super::row::{unix_seconds, StoredStudy};
use serde::Serialize;
use std::path::PathBuf;

/// One variant of one recorded study, with the study's setup: a row of `abprof history`, and a
/// point of a series in `--regressions`.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct HistoryRow {
    pub(crate) study: i64,
    pub(crate) kind: RecordKind,
    pub(crate) started_at: Option<String>,
    #[serde(skip)]
    pub(crate) started_unix: Option<f64>,
    pub(crate) folder: String,
    pub(crate) name: Option<String>,
    pub(crate) aa: bool,
    pub(crate) host: Option<String>,
    pub(crate) cpu: Option<String>,
    pub(crate) gpu: Option<String>,
    /// The study's power state as one line (docs/methodology.md §9.7); None for a study that did
    /// not record one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) power_state: Option<String>,
    pub(crate) workload: Option<String>,
    pub(crate) output_tokens: Option<u32>,
    pub(crate) prompt_tokens: Option<u64>,
    pub(crate) server_args: Vec<String>,
    pub(crate) pure_decode: bool,
    pub(crate) ignore_eos: bool,
    pub(crate) outcome: Option<String>,
    /// The study's minimum effect of interest (`--mei`): a `same` verdict is inside ± it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) mei_pct: Option<f64>,
    #[serde(skip)]
    pub(crate) variant_id: i64,
    pub(crate) position: usize,
    pub(crate) label: String,
    pub(crate) spec: String,
    pub(crate) binary_path: Option<String>,
    pub(crate) binary_sha256: Option<String>,
    pub(crate) version: Option<String>,
    pub(crate) commit: Option<String>,
    pub(crate) model_path: Option<String>,
    pub(crate) model_sha256: Option<String>,
    pub(crate) kv: Option<String>,
    pub(crate) own_args: Vec<String>,
    pub(crate) env: Vec<(String, String)>,
    pub(crate) expect: Option<String>,
    pub(crate) planned: usize,
    pub(crate) accepted: usize,
    pub(crate) verdicts: Vec<VerdictRow>,
}

impl HistoryRow {
    pub(crate) fn verdict(&self, metric: super::record::VerdictOn) -> Option<&VerdictRow> {
        self.verdicts.iter().find(|v| v.metric == metric)
    }

    /// The model's file name, for people.
    pub(crate) fn model_name(&self) -> Option<String> {
        let p = PathBuf::from(self.model_path.as_deref()?);
        Some(p.file_name().map_or_else(|| p.display().to_string(), |n| n.to_string_lossy().to_string()))
    }
}

/// What `abprof history` keeps: every given filter must match.
#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct Filters {
    pub(crate) label: Option<String>,
    /// A binary sha256 prefix, or part of its path.
    pub(crate) binary: Option<String>,
    /// A commit prefix.
    pub(crate) commit: Option<String>,
    /// A model sha256 prefix, or part of its path.
    pub(crate) model: Option<String>,
    pub(crate) workload: Option<String>,
    /// Studies run on this host (its name, exactly).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) host: Option<String>,
    /// Studies whose GPU (the telemetry source) contains this.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) gpu: Option<String>,
    /// Studies started at or after this time (seconds since the epoch)…
    pub(crate) since: Option<f64>,
    /// …and before this one.
    pub(crate) until: Option<f64>,
}

fn hash_or_path(want: &str, sha: Option<&str>, path: Option<&str>) -> bool {
    let want_lc = want.to_ascii_lowercase();
    sha.is_some_and(|s| s.starts_with(&want_lc)) || path.is_some_and(|p| p.contains(want))
}

impl Filters {
    pub(crate) fn matches(&self, r: &HistoryRow) -> bool {
        let date_ok = |bound: Option<f64>, after: bool| match (bound, r.started_unix) {
            (None, _) => true,
            (Some(_), None) => false,
            (Some(b), Some(t)) => (t >= b) == after,
        };
        self.label.as_ref().is_none_or(|l| *l == r.label)
            && self
                .binary
                .as_ref()
                .is_none_or(|b| hash_or_path(b, r.binary_sha256.as_deref(), r.binary_path.as_deref()))
            && self.commit.as_ref().is_none_or(|c| {
                r.commit.as_deref().is_some_and(|have| {
                    let (a, b) = (have.to_ascii_lowercase(), c.to_ascii_lowercase());
                    a.starts_with(&b) || b.starts_with(&a)
                })
            })
            && self.model.as_ref().is_none_or(|m| hash_or_path(m, r.model_sha256.as_deref(), r.model_path.as_deref()))
            && self.workload.as_ref().is_none_or(|w| r.workload.as_deref() == Some(w.as_str()))
            && self.host.as_ref().is_none_or(|h| r.host.as_deref() == Some(h.as_str()))
            && self.gpu.as_ref().is_none_or(|g| r.gpu.as_deref().is_some_and(|have| have.contains(g.as_str())))
            && date_ok(self.since, true)
            && date_ok(self.until, false)
    }
}

impl HistoryRow {
    /// The listing's flat view of variant `position` of a stored study: derived here from the
    /// one row model (src/history/row.rs), never read from the database on its own.
    pub(crate) fn of(s: &StoredStudy, position: usize) -> HistoryRow {
        let (r, v) = (&s.record, &s.record.variants[position]);
        let host = r.host.as_ref();
        HistoryRow {
            study: s.id,
            kind: r.kind,
            started_at: r.started_at.clone(),
            started_unix: r.started_at.as_deref().and_then(unix_seconds),
            folder: r.folder.display().to_string(),
            name: r.name.clone(),
            aa: r.aa,
            host: host.map(|h| h.hostname.clone()),
            cpu: host.map(|h| h.cpu.clone()),
            power_state: host.and_then(|h| h.power.as_ref()).map(|p| p.line()),
            gpu: host.and_then(|h| h.telemetry.clone()),
            workload: r.workload.clone(),
            output_tokens: r.output_tokens,
            prompt_tokens: r.prompt_tokens,
            server_args: r.server_args.clone(),
            pure_decode: r.pure_decode,
            ignore_eos: r.ignore_eos,
            outcome: r.outcome.clone(),
            mei_pct: r.mei_pct,
            variant_id: s.variant_ids[position],
            position,
            label: v.label.clone(),
            spec: v.spec.clone(),
            binary_path: v.binary_path.clone(),
            binary_sha256: v.binary_sha256.clone(),
            version: v.version.clone(),
            commit: v.commit.clone(),
            model_path: v.model_path.clone(),
            model_sha256: v.model_sha256.clone(),
            kv: v.kv.clone(),
            own_args: v.own_args.clone(),
            env: v.env.clone(),
            expect: v.expect.clone(),
            planned: v.planned,
            accepted: v.accepted(),
            verdicts: v.verdicts.clone(),
        }
    }
}

/// Every recorded variant, oldest study first.
pub(crate) fn rows(studies: &[StoredStudy]) -> Vec<HistoryRow> {
    studies.iter().flat_map(|s| (0..s.record.variants.len()).map(move |i| HistoryRow::of(s, i))).collect()
}

/// `abprof history`: the recorded variants the filters keep.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct HistoryList {
    pub(crate) history: String,
    pub(crate) filters: Filters,
    /// Studies in the whole history.
    pub(crate) studies_total: usize,
    pub(crate) rows: Vec<HistoryRow>,
    /// The imported llama-bench results the filters keep: runs of their own kind, listed beside
    /// the studies and never judged with them (docs/methodology.md §15 "llama-bench results").
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) llama_bench: Vec<super::BenchResult>,
}

pub(crate) fn list(
    studies: &[StoredStudy],
    bench: Vec<super::BenchResult>,
    history: String,
    filters: Filters,
) -> HistoryList {
    let rows = rows(studies).into_iter().filter(|r| filters.matches(r)).collect();
    let llama_bench = bench.into_iter().filter(|b| filters.matches_bench(b)).collect();
    HistoryList { history, filters, studies_total: studies.len(), rows, llama_bench }
}

impl Filters {
    /// Whether an imported llama-bench result is of the build (`--commit`, a prefix), model
    /// (`--model`, part of its file name) and host the filters keep; the filters of a study's
    /// variants (label, binary, workload, GPU, dates) do not apply to it.
    pub(crate) fn matches_bench(&self, b: &super::BenchResult) -> bool {
        let commit = self.commit.as_deref().is_none_or(|c| b.row.build_commit.starts_with(c));
        let model = self.model.as_deref().is_none_or(|m| b.row.model_filename.contains(m));
        let host = self.host.as_deref().is_none_or(|h| b.host.as_deref() == Some(h));
        commit && model && host
    }
}
