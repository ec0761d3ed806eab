//! A finished study as the history stores it, built from the summary layer's typed results (never
//! from raw evidence files): the study's setup, each variant's fingerprint, every judged sample,
//! the verdicts, per-phase energy and kernel-category ms/token.
use crate::exactness::ExactnessReport;
use crate::measure::Sample;
use crate::study::facts::{HostFacts, VariantFacts};
use crate::study::StudyFacts;
use crate::summary::bench::BenchRun;
use crate::summary::fingerprint::ExactnessFacts;
use crate::summary::phases::PhaseFigures;
use crate::summary::pi::PiReport;
use crate::summary::rules::Rejection;
use crate::summary::stats::ChangeCi;
use crate::summary::traces::TraceComparison;
use crate::summary::{Judged, Metric, Summary};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// Which abprof command measured the study.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum RecordKind {
    Ab,
    Trace,
    Pi,
    Bench,
    Exactness,
}

impl RecordKind {
    pub(crate) const ALL: [RecordKind; 5] =
        [RecordKind::Ab, RecordKind::Trace, RecordKind::Pi, RecordKind::Bench, RecordKind::Exactness];

    pub(crate) fn name(self) -> &'static str {
        match self {
            RecordKind::Ab => "ab",
            RecordKind::Trace => "trace",
            RecordKind::Pi => "pi",
            RecordKind::Bench => "bench",
            RecordKind::Exactness => "exactness",
        }
    }

    /// The command that measured a study of this kind.
    pub(crate) fn of(kind: crate::study::file::KindName) -> RecordKind {
        use crate::study::file::KindName;
        match kind {
            KindName::Ab => RecordKind::Ab,
            KindName::Trace => RecordKind::Trace,
            KindName::Pi => RecordKind::Pi,
        }
    }

    pub(crate) fn from_name(s: &str) -> Option<RecordKind> {
        RecordKind::ALL.into_iter().find(|k| k.name() == s)
    }

    /// What one sample's load was: studies whose loads differ never compare
    /// (docs/methodology.md §15). `ab`, `trace` (its untraced samples) and `bench` time one
    /// streamed chat request; `pi` a whole agent run; `exactness` times nothing.
    pub(crate) fn load(self) -> &'static str {
        match self {
            RecordKind::Ab | RecordKind::Trace | RecordKind::Bench => "chat request",
            RecordKind::Pi => "Pi agent run",
            RecordKind::Exactness => "exactness check",
        }
    }
}

/// One judged sample.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SampleRow {
    pub(crate) index: usize,
    pub(crate) dir: String,
    pub(crate) rejections: Vec<Rejection>,
    pub(crate) decode_tps: Option<f64>,
    pub(crate) prefill_tps: Option<f64>,
    pub(crate) strict_tps: Option<f64>,
    pub(crate) ttft_ms: Option<f64>,
    pub(crate) prompt_tokens: Option<u64>,
    pub(crate) output_tokens: Option<u64>,
    pub(crate) draft_acceptance: Option<f64>,
    /// A Pi sample's whole agent run.
    pub(crate) wall_ms: Option<f64>,
    /// Every other metric the sample has a value of (the energy and power metrics, and any
    /// without a column of its own), in [`Metric::EVERY`]'s order, stored by name in the
    /// `sample_energy` table (named when only the energy metrics lacked a column;
    /// docs/methodology.md §9.6).
    pub(crate) more_metrics: Vec<(Metric, f64)>,
}

/// The metrics with a column of their own in the samples table.
const COLUMNS: [Metric; 4] =
    [Metric::ServerDecodeTps, Metric::ServerPrefillTps, Metric::StrictStreamedTps, Metric::TtftMs];

impl SampleRow {
    /// The row of one judged sample whose metrics' `values` (from [`Metric::values`]) are known.
    fn of(
        index: usize,
        dir: String,
        rejections: Vec<Rejection>,
        s: Option<&Sample>,
        values: &[(Metric, f64)],
    ) -> SampleRow {
        let metric = |m: Metric| values.iter().find(|(k, _)| *k == m).map(|(_, v)| *v);
        SampleRow {
            index,
            dir,
            rejections,
            decode_tps: metric(Metric::ServerDecodeTps),
            prefill_tps: metric(Metric::ServerPrefillTps),
            strict_tps: metric(Metric::StrictStreamedTps),
            ttft_ms: metric(Metric::TtftMs),
            prompt_tokens: s.and_then(|s| s.prompt_tokens()),
            output_tokens: s.and_then(|s| s.completion_tokens()),
            draft_acceptance: s.and_then(|s| s.draft.as_ref().map(|d| d.rate)),
            wall_ms: s.and_then(|s| s.extra.pi.as_ref().map(|p| p.pi_wall_ms)),
            more_metrics: values.iter().filter(|(m, _)| !COLUMNS.contains(m)).copied().collect(),
        }
    }

    /// The sample's value of `m`.
    pub(crate) fn value(&self, m: Metric) -> Option<f64> {
        match m {
            Metric::ServerDecodeTps => self.decode_tps,
            Metric::ServerPrefillTps => self.prefill_tps,
            Metric::StrictStreamedTps => self.strict_tps,
            Metric::TtftMs => self.ttft_ms,
            _ => self.more_metrics.iter().find(|(k, _)| *k == m).map(|(_, v)| *v),
        }
    }

    pub(crate) fn accepted(&self) -> bool {
        self.rejections.is_empty()
    }
}

/// What a stored verdict judges: one of the summary's metrics, a Pi study's wall time, or an
/// exactness check's own verdict. It becomes its name only at the SQL boundary (`history/row.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum VerdictOn {
    Metric(Metric),
    PiWallMs,
    Exactness,
}

impl VerdictOn {
    /// The name it is stored under: the metric's serde name, `pi-wall-ms`, `exactness`.
    pub(crate) fn name(self) -> &'static str {
        match self {
            VerdictOn::Metric(m) => m.stored_name(),
            VerdictOn::PiWallMs => "pi-wall-ms",
            VerdictOn::Exactness => "exactness",
        }
    }

    /// What `name` stores; None for a later abprof's.
    pub(crate) fn named(name: &str) -> Option<VerdictOn> {
        Metric::named(name)
            .map(VerdictOn::Metric)
            .or_else(|| [VerdictOn::PiWallMs, VerdictOn::Exactness].into_iter().find(|j| j.name() == name))
    }

    /// The order verdicts are given in: the summary's metric order, then a Pi study's and an
    /// exactness check's own.
    pub(crate) fn rank(self) -> usize {
        let n = Metric::every().count();
        match self {
            VerdictOn::Metric(m) => Metric::every().position(|x| x == m).unwrap_or(n),
            VerdictOn::PiWallMs => n,
            VerdictOn::Exactness => n + 1,
        }
    }
}

/// Written by its name, as the history's table holds it (the listing's JSON).
impl serde::Serialize for VerdictOn {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// A variant's median of one metric, with its change against the baseline and the verdict.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct VerdictRow {
    pub(crate) metric: VerdictOn,
    pub(crate) median: Option<f64>,
    pub(crate) mean: Option<f64>,
    pub(crate) change_pct: Option<f64>,
    pub(crate) ci: Option<ChangeCi>,
    pub(crate) verdict: Option<String>,
}

impl VerdictRow {
    /// The interval's bounds in %, as the `verdicts` table holds them.
    pub(crate) fn ci_bounds(&self) -> Option<(f64, f64)> {
        self.ci.map(|c| (c.lo_pct, c.hi_pct))
    }
}

/// The listing's JSON of a verdict (`abprof history`): the interval as its two bounds; the mean
/// stays in the table.
impl serde::Serialize for VerdictRow {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let (lo, hi) = self.ci_bounds().unzip();
        let mut v = s.serialize_struct("VerdictRow", 6)?;
        v.serialize_field("metric", &self.metric)?;
        v.serialize_field("median", &self.median)?;
        v.serialize_field("change_pct", &self.change_pct)?;
        v.serialize_field("ci_lo_pct", &lo)?;
        v.serialize_field("ci_hi_pct", &hi)?;
        v.serialize_field("verdict", &self.verdict)?;
        v.end()
    }
}

/// One variant with its fingerprint and everything measured of it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct VariantRecord {
    pub(crate) label: String,
    pub(crate) spec: String,
    pub(crate) binary_path: Option<String>,
    pub(crate) binary_sha256: Option<String>,
    pub(crate) version: Option<String>,
    pub(crate) commit: Option<String>,
    pub(crate) artifact_version: Option<String>,
    pub(crate) model_path: Option<String>,
    pub(crate) model_sha256: Option<String>,
    pub(crate) kv: Option<String>,
    /// The variant's own server arguments (KV type, `extra=`), after the study's common ones.
    pub(crate) own_args: Vec<String>,
    pub(crate) argv: Vec<String>,
    pub(crate) env: Vec<(String, String)>,
    pub(crate) expect: Option<String>,
    pub(crate) planned: usize,
    pub(crate) samples: Vec<SampleRow>,
    pub(crate) verdicts: Vec<VerdictRow>,
    /// `prefill` and `decode` telemetry.
    pub(crate) phases: Vec<(String, PhaseFigures)>,
    /// Kernel category → ms/token, when the variant was traced.
    pub(crate) kernels: Vec<(String, f64)>,
}

impl VariantRecord {
    /// The fingerprint from the variant's recorded facts; `common` is the study's common server
    /// arguments, which its argv holds after `-m MODEL`.
    fn of_facts(f: &VariantFacts, common: &[String]) -> VariantRecord {
        let own_args = match f.server_args.get(2..) {
            Some(rest) if f.server_args.first().map(String::as_str) == Some("-m") && rest.starts_with(common) => {
                rest[common.len()..].to_vec()
            }
            _ => f.server_args.clone(),
        };
        // Studies of releases before the history recorded no KV type: it is what the variant's
        // own arguments set (variant.rs puts `kv=` there as --cache-type-k).
        let kv = f.kv.clone().or_else(|| own_args.windows(2).find(|w| w[0] == "--cache-type-k").map(|w| w[1].clone()));
        VariantRecord {
            binary_path: Some(f.binary.real_path.display().to_string()),
            binary_sha256: Some(f.binary.sha256.clone()),
            version: Some(f.version.clone()),
            commit: f.commit(),
            artifact_version: f.artifact_version.clone(),
            model_path: Some(f.model.real_path.display().to_string()),
            model_sha256: Some(f.model.sha256.clone()),
            kv,
            own_args,
            argv: f.server_args.clone(),
            env: f.env.clone(),
            expect: f.expect.clone(),
            ..VariantRecord::unknown(&f.label, &f.spec)
        }
    }

    /// A variant whose facts were not recorded: only its label and spec are known.
    fn unknown(label: &str, spec: &str) -> VariantRecord {
        VariantRecord {
            label: label.into(),
            spec: spec.into(),
            binary_path: None,
            binary_sha256: None,
            version: None,
            commit: None,
            artifact_version: None,
            model_path: None,
            model_sha256: None,
            kv: None,
            own_args: Vec::new(),
            argv: Vec::new(),
            env: Vec::new(),
            expect: None,
            planned: 0,
            samples: Vec::new(),
            verdicts: Vec::new(),
            phases: Vec::new(),
            kernels: Vec::new(),
        }
    }

    pub(crate) fn accepted(&self) -> usize {
        self.samples.iter().filter(|s| s.accepted()).count()
    }
}

/// A finished study, ready to be written in one transaction.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct StudyRecord {
    /// Kind + measuring host + plan and start, hashed: the same study imported twice, from any
    /// path, has the same identity.
    pub(crate) identity: String,
    /// The identity an earlier abprof gave it (with the folder's path), matched too when it is
    /// recorded; `None` for a record read back from a history.
    pub(crate) folder_identity: Option<String>,
    pub(crate) kind: RecordKind,
    pub(crate) folder: PathBuf,
    pub(crate) name: Option<String>,
    /// An `abprof ab --aa` study: its second variant is its first run again.
    pub(crate) aa: bool,
    pub(crate) started_at: Option<String>,
    pub(crate) host: Option<HostFacts>,
    pub(crate) model_path: Option<String>,
    pub(crate) model_sha256: Option<String>,
    pub(crate) workload: Option<String>,
    pub(crate) output_tokens: Option<u32>,
    pub(crate) prompt_tokens: Option<u64>,
    /// The server arguments common to every variant.
    pub(crate) server_args: Vec<String>,
    pub(crate) pure_decode: bool,
    pub(crate) ignore_eos: bool,
    pub(crate) samples_per_variant: Option<u32>,
    pub(crate) missing: usize,
    pub(crate) isolation_restored: Option<bool>,
    /// A study-level verdict (`exactness`: exact, cosine_pass, fail).
    pub(crate) outcome: Option<String>,
    /// The study's minimum effect of interest (`--mei`), in %: its `same` verdicts mean inside ± it.
    pub(crate) mei_pct: Option<f64>,
    pub(crate) variants: Vec<VariantRecord>,
}

/// What a write did.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct RecordedStudy {
    pub(crate) id: i64,
    pub(crate) kind: RecordKind,
    pub(crate) folder: PathBuf,
    /// False: the study was already in the history (same identity), nothing was written.
    pub(crate) new: bool,
    pub(crate) samples: usize,
    pub(crate) write_ms: f64,
}

impl RecordedStudy {
    pub(crate) fn of(study: &StudyRecord, id: i64, new: bool, since: std::time::Instant) -> RecordedStudy {
        RecordedStudy {
            id,
            kind: study.kind,
            folder: study.folder.clone(),
            new,
            samples: study.variants.iter().map(|v| v.samples.len()).sum(),
            write_ms: since.elapsed().as_secs_f64() * 1000.0,
        }
    }
}

/// A study's identity (docs/methodology.md §15 "identity"): its kind, the host that measured it
/// and what only that run has (its plan and start, a bench's start, an exactness report's
/// creation), hashed. Where its evidence folder lies is not part of it: the same folder copied
/// to another path or host (a CI artifact, a backup) is the same study.
fn identity(kind: RecordKind, host: &str, discriminator: &str) -> String {
    let mut h = Sha256::new();
    h.update(format!("study\0{}\0{host}\0{discriminator}", kind.name()));
    hex::encode(h.finalize())
}

/// The identity an abprof before [`identity`] gave the same study (its kind, the folder's
/// absolute path, the same discriminator): a history written by one still recognizes the study.
fn folder_identity(kind: RecordKind, folder: &Path, discriminator: &str) -> String {
    let mut h = Sha256::new();
    h.update(format!("{}\0{}\0{discriminator}", kind.name(), folder.display()));
    hex::encode(h.finalize())
}

/// Both identities of one study.
fn identities(
    kind: RecordKind,
    host: Option<&HostFacts>,
    folder: &Path,
    discriminator: &str,
) -> (String, Option<String>) {
    let hostname = host.map_or("", |h| h.hostname.as_str());
    (identity(kind, hostname, discriminator), Some(folder_identity(kind, folder, discriminator)))
}

/// The folder as an absolute path, so one study reached by two relative paths is one study.
fn absolute(folder: &Path) -> PathBuf {
    std::fs::canonicalize(folder).unwrap_or_else(|_| folder.to_path_buf())
}

fn split_common(server_args: &str) -> Vec<String> {
    crate::variant::split_args(server_args).unwrap_or_else(|| vec![server_args.to_string()])
}

fn verdicts_of(v: &crate::summary::VariantSummary) -> Vec<VerdictRow> {
    v.metrics
        .iter()
        .map(|m| VerdictRow {
            metric: VerdictOn::Metric(m.metric),
            median: m.median,
            mean: m.mean,
            change_pct: m.change_pct,
            ci: m.ci,
            verdict: m.verdict.map(|v| m.metric.verdict_word(v).to_string()),
        })
        .collect()
}

/// Kernel category → ms/token of each compared variant.
fn kernels_of(traces: Option<&TraceComparison>) -> Vec<(String, Vec<(String, f64)>)> {
    let Some(TraceComparison::Compared { comparison, .. }) = traces else { return Vec::new() };
    comparison
        .variants
        .iter()
        .enumerate()
        .map(|(i, col)| {
            let cats = comparison
                .categories
                .iter()
                .filter_map(|c| c.ms_per_token.get(i).map(|ms| (c.category.clone(), *ms)))
                .collect();
            (col.label.clone(), cats)
        })
        .collect()
}

impl StudyRecord {
    /// The setup every study-folder kind shares, from its fingerprint.
    fn of_facts(kind: RecordKind, root: &Path, facts: &StudyFacts) -> StudyRecord {
        let folder = absolute(root);
        let plan = serde_json::to_string(&facts.plan).expect("a plan serializes");
        let started_at = facts.host.as_ref().map(|h| h.started_at.clone());
        let common = split_common(&facts.file.server_args);
        let variants = facts
            .plan
            .labels
            .iter()
            .enumerate()
            .map(|(i, label)| {
                let planned = facts.plan.slots.iter().filter(|s| s.variant == i && !facts.plan.is_traced(s)).count();
                let mut v = match facts.variants.iter().find(|f| f.label == *label) {
                    Some(f) => VariantRecord::of_facts(f, &common),
                    None => VariantRecord::unknown(label, facts.file.variants.get(i).map_or("", |s| s.as_str())),
                };
                v.planned = planned;
                v
            })
            .collect();
        let model = facts.variants.iter().find(|v| v.model.path == facts.file.model).map(|v| &v.model);
        let (identity, folder_identity) =
            identities(kind, facts.host.as_ref(), &folder, &format!("{plan}\0{}", started_at.as_deref().unwrap_or("")));
        StudyRecord {
            identity,
            folder_identity,
            kind,
            folder,
            name: facts.file.name.clone(),
            aa: facts.is_aa(),
            started_at,
            host: facts.host.clone(),
            model_path: Some(facts.file.model.display().to_string()),
            model_sha256: model.map(|m| m.sha256.clone()),
            workload: facts.file.workload.and_then(|w| serde_json::to_value(w).ok()?.as_str().map(String::from)),
            output_tokens: Some(facts.file.tokens),
            prompt_tokens: None,
            server_args: common,
            pure_decode: facts.file.pure_decode,
            ignore_eos: facts.file.ignore_eos,
            samples_per_variant: Some(facts.file.samples),
            missing: 0,
            isolation_restored: None,
            outcome: None,
            mei_pct: facts.file.mei_pct,
            variants,
        }
    }

    /// A finished `ab` or `trace` study from its judged summary, its kernel attribution the
    /// summary's own comparison of the study's traces.
    pub(crate) fn of_study(root: &Path, judged: &Judged) -> StudyRecord {
        let facts = &judged.facts;
        let kind = RecordKind::of(facts.file.kind.name());
        let s: &Summary = &judged.summary;
        let mut r = StudyRecord::of_facts(kind, root, facts);
        r.prompt_tokens = s.expected_prompt_tokens;
        r.missing = s.missing;
        r.isolation_restored = s.isolation_restored;
        for j in &judged.samples {
            if let Some(v) = r.variants.get_mut(j.variant) {
                v.samples.push(SampleRow::of(
                    j.index,
                    j.dir.clone(),
                    j.rejections.clone(),
                    j.sample.as_ref(),
                    &j.values,
                ));
            }
        }
        let kernels = kernels_of(s.traces.as_ref());
        for (v, vs) in r.variants.iter_mut().zip(&s.variants) {
            v.verdicts = verdicts_of(vs);
            v.phases = [("prefill", &vs.prefill), ("decode", &vs.decode)]
                .into_iter()
                .filter_map(|(p, f)| f.clone().map(|f| (p.to_string(), f)))
                .collect();
            v.kernels = kernels.iter().find(|(l, _)| *l == v.label).map(|(_, k)| k.clone()).unwrap_or_default();
        }
        r
    }

    /// A Pi study from its report: a sample's verdict is the report's, its failures the rules.
    pub(crate) fn of_pi(root: &Path, report: &PiReport, facts: &StudyFacts) -> StudyRecord {
        let mut r = StudyRecord::of_facts(RecordKind::Pi, root, facts);
        r.output_tokens = Some(report.max_tokens);
        r.isolation_restored = report.restored;
        r.missing = report.order.len().saturating_sub(report.samples.len());
        for s in &report.samples {
            let Some(v) = r.variants.iter_mut().find(|v| v.label == s.label) else { continue };
            let t = s.server.as_ref();
            v.samples.push(SampleRow {
                index: s.index,
                dir: s.evidence.strip_prefix(root).unwrap_or(&s.evidence).display().to_string(),
                rejections: s
                    .failures
                    .iter()
                    .map(|f| Rejection { rule: crate::summary::rules::Rule::PiSampleCheck, reason: f.clone() })
                    .collect(),
                decode_tps: t.map(|t| t.decode_tps),
                prefill_tps: t.map(|t| t.prefill_tps),
                strict_tps: None,
                ttft_ms: None,
                prompt_tokens: t.map(|t| t.prompt_tokens),
                output_tokens: s.output_tokens(),
                draft_acceptance: s.draft.as_ref().map(|d| d.rate),
                wall_ms: Some(s.run.pi_wall_ms),
                more_metrics: Vec::new(),
            });
        }
        for (v, vs) in r.variants.iter_mut().zip(&report.variants) {
            let median = |metric: VerdictOn, m: Option<f64>| VerdictRow {
                metric,
                median: m,
                mean: None,
                change_pct: None,
                ci: None,
                verdict: None,
            };
            v.verdicts = vec![
                median(VerdictOn::Metric(Metric::ServerDecodeTps), vs.median_decode_tps),
                median(VerdictOn::Metric(Metric::ServerPrefillTps), vs.median_prefill_tps),
                median(VerdictOn::PiWallMs, vs.median_pi_wall_ms),
            ];
        }
        r
    }

    /// One `abprof bench` sample, judged by the rulebook.
    pub(crate) fn of_bench(folder: &Path, bench: &BenchRun) -> StudyRecord {
        let folder = absolute(folder);
        let f = &bench.facts;
        let mut v = VariantRecord::of_facts(&f.variant, &f.common_args);
        v.planned = 1;
        v.samples.push(SampleRow::of(0, ".".into(), bench.rejections.clone(), Some(&bench.sample), &bench.values));
        let (identity, folder_identity) = identities(RecordKind::Bench, Some(&f.host), &folder, &f.host.started_at);
        StudyRecord {
            identity,
            folder_identity,
            kind: RecordKind::Bench,
            folder,
            name: None,
            aa: false,
            started_at: Some(f.host.started_at.clone()),
            host: Some(f.host.clone()),
            model_path: v.model_path.clone(),
            model_sha256: v.model_sha256.clone(),
            workload: None,
            output_tokens: Some(bench.sample.max_tokens),
            prompt_tokens: f.expected_prompt_tokens,
            server_args: f.common_args.clone(),
            pure_decode: false,
            ignore_eos: f.ignore_eos,
            samples_per_variant: Some(1),
            missing: 0,
            isolation_restored: None,
            outcome: None,
            mei_pct: None,
            variants: vec![v],
        }
    }

    /// An exactness check: its verdict is the study's outcome. `facts` are the sides' recorded
    /// fingerprints (absent in folders of releases before the history: then what the report
    /// itself records).
    pub(crate) fn of_exactness(folder: &Path, report: &ExactnessReport, facts: Option<&ExactnessFacts>) -> StudyRecord {
        let folder = absolute(folder);
        let mut variants: Vec<VariantRecord> = [&report.baseline, &report.candidate]
            .into_iter()
            .map(|side| {
                let mut v = match facts.and_then(|f| f.variants.iter().find(|f| f.label == side.label)) {
                    Some(f) => VariantRecord::of_facts(f, &[]),
                    None => VariantRecord {
                        binary_path: Some(side.binary.display().to_string()),
                        binary_sha256: side.binary_sha256.clone(),
                        argv: side.argv.clone(),
                        env: side.env.clone(),
                        ..VariantRecord::unknown(&side.label, &side.spec)
                    },
                };
                v.planned = 1;
                v.samples.push(SampleRow {
                    prompt_tokens: side.prompt_tokens,
                    output_tokens: side.completion_tokens,
                    ..SampleRow::of(0, side.evidence.display().to_string(), Vec::new(), None, &[])
                });
                v
            })
            .collect();
        let gate = serde_json::to_value(report.gate).ok().and_then(|v| v.as_str().map(String::from));
        if let Some(c) = variants.get_mut(1) {
            c.verdicts.push(VerdictRow {
                metric: VerdictOn::Exactness,
                median: None,
                mean: None,
                change_pct: None,
                ci: None,
                verdict: Some(report.headline.clone()),
            });
        }
        let host = facts.map(|f| &f.host);
        let (identity, folder_identity) = identities(RecordKind::Exactness, host, &folder, &report.created);
        StudyRecord {
            identity,
            folder_identity,
            kind: RecordKind::Exactness,
            folder,
            name: None,
            aa: false,
            started_at: Some(report.created.clone()),
            host: facts.map(|f| f.host.clone()),
            model_path: variants[0].model_path.clone(),
            model_sha256: variants[0].model_sha256.clone(),
            workload: None,
            output_tokens: Some(report.request.max_tokens),
            prompt_tokens: report.request.prompt_tokens,
            server_args: Vec::new(),
            pure_decode: false,
            ignore_eos: report.request.ignore_eos,
            samples_per_variant: Some(1),
            missing: 0,
            isolation_restored: None,
            outcome: gate,
            mei_pct: None,
            variants,
        }
    }
}

/// Records made by hand for the history's unit tests: one `ab` study of the given variants, each
/// with accepted samples of the given decode TPS.
#[cfg(test)]
pub(crate) mod testing {
    use super::*;

    pub(crate) fn sample(index: usize, decode_tps: f64) -> SampleRow {
        SampleRow {
            index,
            dir: format!("samples/{:03}", index + 1),
            rejections: Vec::new(),
            decode_tps: Some(decode_tps),
            prefill_tps: Some(decode_tps * 10.0),
            strict_tps: None,
            ttft_ms: None,
            prompt_tokens: Some(300),
            output_tokens: Some(8),
            draft_acceptance: None,
            wall_ms: None,
            more_metrics: Vec::new(),
        }
    }

    pub(crate) fn variant(label: &str, binary_sha: &str, decode: &[f64]) -> VariantRecord {
        let mut v = VariantRecord::unknown(label, &format!("{label}=/bin/llama-server"));
        v.binary_sha256 = Some(binary_sha.repeat(64 / binary_sha.len()));
        v.model_path = Some("/models/target.gguf".into());
        v.model_sha256 = Some("a".repeat(64));
        v.planned = decode.len();
        v.samples = decode.iter().enumerate().map(|(i, x)| sample(i, *x)).collect();
        v
    }

    /// A study started `minutes` after a fixed time, in folder `/studies/NAME`.
    pub(crate) fn study(name: &str, minutes: i64, variants: Vec<VariantRecord>) -> StudyRecord {
        let started = chrono::DateTime::parse_from_rfc3339("2026-11-30T10:00:00+00:00").unwrap()
            + chrono::Duration::minutes(minutes);
        StudyRecord {
            identity: identity(RecordKind::Ab, "vm", &format!("{name}\0{}", started.to_rfc3339())),
            folder_identity: None,
            kind: RecordKind::Ab,
            folder: PathBuf::from("/studies").join(name),
            name: None,
            aa: false,
            started_at: Some(started.to_rfc3339()),
            host: Some(HostFacts {
                hostname: "vm".into(),
                kernel: "Linux".into(),
                cpu: "AMD EPYC".into(),
                cores: 2,
                memory_kib: None,
                abprof: "test".into(),
                started_at: started.to_rfc3339(),
                telemetry: Some("GPU-less host".into()),
                power: None,
            }),
            model_path: Some("/models/target.gguf".into()),
            model_sha256: Some("a".repeat(64)),
            workload: None,
            output_tokens: Some(8),
            prompt_tokens: Some(300),
            server_args: vec!["-c".into(), "4096".into()],
            pure_decode: false,
            ignore_eos: true,
            samples_per_variant: Some(3),
            missing: 0,
            isolation_restored: Some(true),
            outcome: None,
            mei_pct: None,
            variants,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_verdict_is_on_reads_back_from_its_name_in_rank_order_and_a_later_name_is_none() {
        let every: Vec<VerdictOn> =
            Metric::every().map(VerdictOn::Metric).chain([VerdictOn::PiWallMs, VerdictOn::Exactness]).collect();
        for v in &every {
            assert_eq!(VerdictOn::named(v.name()), Some(*v), "{}", v.name());
        }
        assert!(every.windows(2).all(|w| w[0].rank() < w[1].rank()));
        assert_eq!(serde_json::to_value(VerdictOn::Metric(Metric::ServerDecodeTps)).unwrap(), "server-decode-tps");
        assert_eq!(VerdictOn::named("a-metric-of-a-later-abprof"), None);
    }
}
