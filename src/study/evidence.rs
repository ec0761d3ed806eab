//! The evidence folder of one study, and the only code that knows its layout:
//!
//! ```text
//! study.toml              the study as run (abprof ab --study DIR/study.toml re-runs it)
//! host.json               host facts, abprof version, telemetry source
//! variants.json           per variant: binary real path, sha256, --version, model + sha256, argv, env
//! plan.json               the run order (and its shuffle seed)
//! order.jsonl             one line per finished sample attempt, with timestamps and timeline
//! prompt.txt              the calibrated prompt (+ prompt.txt.calibration.json)
//! isolation.json          every hook run: before (per sample), after and verify (once, at exit)
//! roofline.json           per variant: decode bytes by class, KV shape, memory bandwidth (§13)
//! samples/NNN-LABEL/      server.log, request.json, response.sse, sample.json, telemetry.csv,
//!                         SHA256SUMS (the seal: `seal.rs`)
//! summary.json            written at the end and by `abprof summarize`
//! report.html, report.md  written at the end of `ab` and `trace` and by `abprof report`
//! ```
//!
//! A sweep (docs/methodology.md §16) is a folder of such studies:
//!
//! ```text
//! study.toml              the sweep as run, with its [sweep] section
//! sweep.json              the axes, and every point's values, folder and state
//! points/NN-AXIS=V,…/     one study folder per point, laid out as above
//! summary.json            the sweep's summary: a table per metric, one row per point
//! ```
//!
//! Every record is written atomically (temp file + rename, or one O_APPEND line), so a crash loses
//! at most the sample in flight.
//!
//! Every name above is `layout.rs`'s. Outside `study/`, a file here is reached only through a
//! typed method of [`Evidence`] (the generic readers and the names stay private to `study/`,
//! checked by tests/layers.rs), a sample's through its [`SampleFolder`] ([`FoundSample::series`]
//! its telemetry), a trace capture's through its `TraceFolder` (`trace_folder.rs`); an exactness
//! check's, a bench's and a bisect's folders are laid out beside, in `run_folders.rs`. A document
//! whose type lives a floor up is read and written by its one type (`documents.rs`).
use super::documents::{PiReportDoc, StudySummaryDoc, SweepSummaryDoc};
use super::facts::{HostFacts, VariantFacts};
use super::file::StudyKind;
use super::layout::{
    CALIBRATION_DIR, HOST_FILE, HTML_FILE, ISOLATION_FILE, LOCK_FILE, MARKDOWN_FILE, ORDER_FILE, PARTIAL_START,
    PI_REPORT_FILE, PI_SAMPLES_DIR, PLAN_FILE, POINTS_DIR, PROMPT_FILE, ROOFLINE_FILE, SAMPLES_DIR, STUDY_FILE,
    SUMMARY_FILE, SWEEP_RECORD, TRACES_DIR, VARIANTS_FILE,
};
use super::sample_folder::SampleFolder;
use super::trace_folder::TraceFolder;
use crate::measure::Sample;
use crate::schedule::Slot;
use serde::{de::DeserializeOwned, Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};
use thiserror::Error;

#[derive(Debug, Error)]
pub(crate) enum EvidenceError {
    #[error("{0} already holds files: pass a new --root, or --resume {0} to continue that study")]
    NotEmpty(PathBuf),
    #[error("{0} is a file, not a folder: pass a new --root (a folder that does not exist yet, or an empty one)")]
    NotAFolder(PathBuf),
    #[error("{0} is not an abprof study folder (no study.toml): pass the --root of an earlier `abprof ab`")]
    NotAStudy(PathBuf),
    #[error("cannot write {path}: {source}")]
    Write { path: PathBuf, source: std::io::Error },
    #[error("cannot read {path}: {detail}")]
    Read { path: PathBuf, detail: String },
    #[error("{0} is in use by another abprof run: wait for it to finish, or pass another folder")]
    Locked(PathBuf),
    #[error("{0} is not an abprof sweep folder (no sweep.json): pass the --root of an earlier `abprof ab --sweep`")]
    NotASweep(PathBuf),
    #[error("{0} has no plan.json: that study never started (a write failed at its start), so there is nothing to resume; run it again with --root {0}, which reuses the folder")]
    NeverStarted(PathBuf),
}

/// One line of `order.jsonl`: a sample attempt as it happened.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct OrderEntry {
    pub(crate) index: usize,
    pub(crate) label: String,
    pub(crate) repeat: usize,
    pub(crate) dir: String,
    pub(crate) started_at: String,
    pub(crate) ended_at: String,
    pub status: AttemptStatus,
    pub timeline: Timeline,
}

/// How a sample attempt ended, as `order.jsonl` spells it.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum AttemptStatus {
    /// A sample was recorded (the rules may still reject it).
    Ok,
    /// The attempt failed (its server, its load, a changed binary or model): retried on resume.
    Error,
    /// A stop signal ended it; nothing was recorded.
    Interrupted,
}

/// Where one sample's wall time went, in ms. `dead_ms` is the driver's own share: everything but
/// the server's start-up-to-health and the request itself.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Default)]
pub struct Timeline {
    pub(crate) total_ms: f64,
    pub(crate) hooks_ms: f64,
    pub startup_ms: f64,
    pub idle_gate_ms: f64,
    pub request_ms: f64,
    pub stop_ms: f64,
    pub dead_ms: f64,
}

/// The run order, fixed when the study starts so `--resume` keeps it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub(crate) struct Plan {
    pub(crate) labels: Vec<String>,
    pub(crate) order_seed: Option<u64>,
    pub(crate) slots: Vec<Slot>,
    /// Where each sample's folder goes (absent in plans of earlier releases: the A/B layout).
    #[serde(default, skip_serializing_if = "SampleLayout::is_default")]
    pub(crate) layout: SampleLayout,
    /// Indices (into `slots`) of samples taken under a kernel tracer: evidence for the trace,
    /// never part of the medians (a tracer slows decode).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) traced: Vec<usize>,
    /// Blocks added at the end of the schedule to retake blocks a rule about the host spoiled
    /// (docs/methodology.md §7.19); counted apart from the blocks an adaptive rule adds.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub(crate) retakes: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// Why the study loop plans one more interleaved block once its planned samples are taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NextBlock {
    /// The adaptive rule asks for more precision or a decision (docs/methodology.md §17, §19).
    Adaptive,
    /// A block a rule about the host spoiled is retaken (docs/methodology.md §7.19).
    Retake,
}

impl Plan {
    pub(crate) fn is_traced(&self, slot: &Slot) -> bool {
        self.traced.contains(&slot.index)
    }

    /// Interleaved blocks planned (each one sample of every variant).
    pub(crate) fn blocks(&self) -> usize {
        self.slots.iter().filter(|s| !self.is_traced(s)).map(|s| s.repeat + 1).max().unwrap_or(0)
    }

    /// Interleaved blocks planned other than retakes: the count an adaptive rule's cap bounds.
    pub(crate) fn counted_blocks(&self) -> usize {
        self.blocks().saturating_sub(self.retakes)
    }

    /// Plans one more interleaved block at the end of the schedule, exactly the block a study
    /// planned with one more sample per variant would have had (docs/methodology.md §5, §17), for
    /// `why`. A trace study's traced slots stay where they were: the block follows them.
    pub(crate) fn add_block(&mut self, variants: usize, why: NextBlock) {
        let block = self.blocks();
        let next = crate::schedule::interleaved(variants, block + 1, self.order_seed);
        let first = self.slots.len();
        let added = next.into_iter().filter(|s| s.repeat == block);
        self.slots.extend(added.enumerate().map(|(i, s)| Slot { index: first + i, ..s }));
        if why == NextBlock::Retake {
            self.retakes += 1;
        }
    }
}

/// How sample folders are named.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum SampleLayout {
    /// `samples/NNN-LABEL/`, NNN the study index from 1.
    #[default]
    Study,
    /// `pi/LABEL-N/`, N the variant's repeat from 1.
    Pi,
}

impl SampleLayout {
    fn is_default(&self) -> bool {
        *self == SampleLayout::Study
    }
}

/// A sample folder as found on disk.
#[derive(Debug, Clone)]
pub(crate) struct FoundSample {
    pub(crate) slot: Slot,
    pub(crate) label: String,
    pub(crate) dir: PathBuf,
    pub(crate) sample: Option<Sample>,
    /// Why `sample.json` exists but could not be read (docs/methodology.md §7 "corrupt-record").
    pub(crate) corrupt: Option<String>,
    /// Earlier failed attempts at this slot, kept beside it (`NNN-LABEL.attempt-K`).
    pub(crate) earlier_attempts: Vec<(PathBuf, Option<Sample>)>,
}

impl FoundSample {
    /// Whether this sample's files are the ones abprof sealed (docs/methodology.md §7.21).
    pub(crate) fn seal(&self) -> super::seal::SealCheck {
        super::seal::check(&self.dir)
    }

    /// The sample's folder, which names its files.
    pub(crate) fn folder(&self) -> SampleFolder {
        SampleFolder::at(&self.dir)
    }

    /// The sample's telemetry series, empty where none was recorded (or it cannot be read); of a
    /// server on several GPUs, the server's series of its devices' (docs/methodology.md §9.11).
    pub(crate) fn series(&self) -> Vec<crate::telemetry::sampler::TelemetrySample> {
        self.sample.as_ref().map_or_else(Vec::new, |s| self.folder().series(s))
    }
}

#[derive(Debug, Clone)]
pub struct Evidence {
    pub(crate) root: PathBuf,
    /// The exclusive lock a run holds on the folder (see [`Evidence::lock`]).
    lock: Option<std::sync::Arc<std::fs::File>>,
}

/// The study file of the study (or sweep) folder at `root`.
pub(super) fn study_toml_in(root: &Path) -> PathBuf {
    root.join(STUDY_FILE)
}

/// The calibrated prompt of the study folder at `root` (a sweep's earlier point's).
pub(super) fn prompt_in(root: &Path) -> PathBuf {
    root.join(PROMPT_FILE)
}

/// Whether `root` holds a sweep (rather than one study).
pub(crate) fn is_sweep(root: &Path) -> bool {
    root.join(SWEEP_RECORD).is_file()
}

enum Leftovers {
    /// Missing, empty, or only the lock file.
    None,
    OwnPartialStart,
    Other,
}

fn start_leftovers(root: &Path) -> Leftovers {
    let Ok(dir) = std::fs::read_dir(root) else {
        return if root.exists() { Leftovers::Other } else { Leftovers::None };
    };
    let names: Vec<String> = dir.flatten().map(|e| e.file_name().to_string_lossy().to_string()).collect();
    if names.iter().all(|n| n == LOCK_FILE) {
        Leftovers::None
    } else if names.iter().all(|n| PARTIAL_START.contains(&n.as_str())) {
        Leftovers::OwnPartialStart
    } else {
        Leftovers::Other
    }
}

pub(super) fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<(), EvidenceError> {
    crate::atomic_file::write_json(path, value).map_err(|e| EvidenceError::Write { path: path.into(), source: e })
}

/// Reads a document [`write_json`] wrote. A list is written kept under `items` beside
/// `schema_version` (src/schema.rs), so a list is read from there; a bare list (written before
/// versioning) reads as it is.
pub(super) fn read_json<T: DeserializeOwned>(path: &Path) -> Result<T, EvidenceError> {
    let text =
        std::fs::read_to_string(path).map_err(|e| EvidenceError::Read { path: path.into(), detail: e.to_string() })?;
    let bad = |e: serde_json::Error| EvidenceError::Read { path: path.into(), detail: e.to_string() };
    let doc: serde_json::Value = serde_json::from_str(&text).map_err(bad)?;
    match doc {
        serde_json::Value::Object(mut m)
            if m.len() == 2 && m.contains_key("schema_version") && m.contains_key("items") =>
        {
            serde_json::from_value(m.remove("items").expect("checked above")).map_err(bad)
        }
        doc => serde_json::from_value(doc).map_err(bad),
    }
}

impl Evidence {
    /// A new study folder, locked for this run: it may exist only if empty, or if it holds only
    /// what a start that failed before `plan.json` left (a disk filled up, say): such a folder
    /// is not resumable, so it is reused rather than refused both ways. Two runs racing for one
    /// folder meet at the lock: the loser is told the folder already holds files.
    pub(crate) fn create(root: &Path) -> Result<Evidence, EvidenceError> {
        if root.exists() && !root.is_dir() {
            return Err(EvidenceError::NotAFolder(root.into()));
        }
        let reusable = match start_leftovers(root) {
            Leftovers::None => false,
            Leftovers::OwnPartialStart => true,
            Leftovers::Other => return Err(EvidenceError::NotEmpty(root.into())),
        };
        if let Some(parent) = root.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|e| EvidenceError::Write { path: parent.into(), source: e })?;
        }
        match std::fs::create_dir(root) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(EvidenceError::Write { path: root.into(), source: e }),
        }
        let ev = Evidence { root: root.into(), lock: None }.lock().map_err(|e| match e {
            EvidenceError::Locked(p) => EvidenceError::NotEmpty(p),
            e => e,
        })?;
        // Checked again under the lock: another run may have started here meanwhile.
        match start_leftovers(root) {
            Leftovers::Other => return Err(EvidenceError::NotEmpty(root.into())),
            Leftovers::OwnPartialStart if reusable => {
                // Never the lock file: a run that opened it meanwhile would hold a lock on a
                // file nobody else can find.
                for name in PARTIAL_START.iter().filter(|n| **n != LOCK_FILE) {
                    let _ = std::fs::remove_file(root.join(name));
                }
            }
            _ => {}
        }
        Ok(ev)
    }

    /// Whether `root` can hold a new study ([`Evidence::create`]'s checks, made before anything
    /// else so a bad `--root` is refused before any probe or server runs).
    pub(crate) fn check_new(root: &Path) -> Result<(), EvidenceError> {
        if root.exists() && !root.is_dir() {
            return Err(EvidenceError::NotAFolder(root.into()));
        }
        match start_leftovers(root) {
            Leftovers::Other => Err(EvidenceError::NotEmpty(root.into())),
            _ => Ok(()),
        }
    }

    /// An existing study folder.
    pub(crate) fn open(root: &Path) -> Result<Evidence, EvidenceError> {
        if !study_toml_in(root).is_file() {
            return Err(EvidenceError::NotAStudy(root.into()));
        }
        if !root.join(PLAN_FILE).is_file() {
            return Err(EvidenceError::NeverStarted(root.into()));
        }
        Ok(Evidence { root: root.into(), lock: None })
    }

    /// Whether `root` holds a study (or a sweep): its study file.
    pub(crate) fn holds_study(root: &Path) -> bool {
        study_toml_in(root).is_file()
    }

    /// An existing sweep folder.
    pub(crate) fn open_sweep(root: &Path) -> Result<Evidence, EvidenceError> {
        if !is_sweep(root) {
            return Err(EvidenceError::NotASweep(root.into()));
        }
        Ok(Evidence { root: root.into(), lock: None })
    }

    /// A sweep's record of its points.
    pub(super) fn sweep_record(&self) -> PathBuf {
        self.path(SWEEP_RECORD)
    }

    /// The study folder of one point of a sweep, relative to the sweep's (as sweep.json keeps it).
    pub(crate) fn point_folder(dir_name: &str) -> String {
        format!("{POINTS_DIR}/{dir_name}")
    }

    /// A point's study folder, from its folder as sweep.json keeps it ([`Evidence::point_folder`]).
    pub(crate) fn point(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    /// Whether a study was started here (its plan is written), so a run must resume it.
    pub(crate) fn started(root: &Path) -> bool {
        root.join(PLAN_FILE).is_file()
    }

    /// Takes the folder for this run: two runs measuring into one folder would take the same
    /// slots and set each other's samples aside. The lock ends with the process, however it ends.
    pub(crate) fn lock(mut self) -> Result<Evidence, EvidenceError> {
        use std::os::fd::AsRawFd;
        if self.lock.is_some() {
            return Ok(self);
        }
        let path = self.root.join(LOCK_FILE);
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| EvidenceError::Write { path: path.clone(), source: e })?;
        #[allow(deprecated)] // nix's Flock wrapper takes the File by value; the raw call keeps it ours.
        let locked = nix::fcntl::flock(file.as_raw_fd(), nix::fcntl::FlockArg::LockExclusiveNonblock);
        match locked {
            Ok(()) => {
                self.lock = Some(std::sync::Arc::new(file));
                Ok(self)
            }
            Err(nix::errno::Errno::EWOULDBLOCK) => Err(EvidenceError::Locked(self.root)),
            Err(e) => Err(EvidenceError::Write { path, source: e.into() }),
        }
    }

    pub(super) fn path(&self, name: &str) -> PathBuf {
        self.root.join(name)
    }
    pub(crate) fn study_toml(&self) -> PathBuf {
        study_toml_in(&self.root)
    }
    /// The calibrated prompt (its calibration record beside it).
    pub(crate) fn prompt(&self) -> PathBuf {
        prompt_in(&self.root)
    }
    /// Where the server that calibrates the prompt keeps its log file and console output.
    pub(super) fn calibration_logs(&self) -> (PathBuf, PathBuf) {
        SampleFolder::at(&self.path(CALIBRATION_DIR)).server_logs()
    }
    /// `report.html`, the study's (or sweep's) page.
    pub(crate) fn html_page(&self) -> PathBuf {
        self.path(HTML_FILE)
    }
    /// `report.md`, the page's tables in Markdown.
    pub(crate) fn markdown_page(&self) -> PathBuf {
        self.path(MARKDOWN_FILE)
    }
    /// `isolation.json`: every hook run, and what to restore.
    pub(crate) fn isolation_file(&self) -> PathBuf {
        self.path(ISOLATION_FILE)
    }
    pub(crate) fn has_isolation(&self) -> bool {
        self.isolation_file().exists()
    }

    /// `plan.json`: the run order.
    pub(crate) fn read_plan(&self) -> Result<Plan, EvidenceError> {
        read_json(&self.path(PLAN_FILE))
    }
    pub(crate) fn write_plan(&self, plan: &Plan) -> Result<(), EvidenceError> {
        write_json(&self.path(PLAN_FILE), plan)
    }

    /// `host.json`: absent only in a folder whose start was cut short.
    /// The record of the sample in `dir`, one of this study's sample folders.
    pub(crate) fn read_sample(&self, dir: &Path) -> Result<crate::measure::Sample, EvidenceError> {
        read_json(&SampleFolder::at(dir).record())
    }

    pub(crate) fn read_host(&self) -> Result<HostFacts, EvidenceError> {
        read_json(&self.path(HOST_FILE))
    }
    pub(crate) fn write_host(&self, host: &HostFacts) -> Result<(), EvidenceError> {
        write_json(&self.path(HOST_FILE), host)
    }
    /// Whether `host.json` exists (read or not).
    pub(crate) fn has_host(&self) -> bool {
        self.path(HOST_FILE).exists()
    }

    /// `variants.json`: each variant's binary, model and argv as recorded.
    pub(crate) fn read_variants(&self) -> Result<Vec<VariantFacts>, EvidenceError> {
        read_json(&self.path(VARIANTS_FILE))
    }
    pub(crate) fn write_variants(&self, variants: &[VariantFacts]) -> Result<(), EvidenceError> {
        write_json(&self.path(VARIANTS_FILE), &variants)
    }
    pub(crate) fn has_variants(&self) -> bool {
        self.variants_file().exists()
    }
    pub(crate) fn variants_file(&self) -> PathBuf {
        self.path(VARIANTS_FILE)
    }

    /// `roofline.json`: per variant, the decode floor's inputs (docs/methodology.md §18).
    pub(crate) fn roofline_file(&self) -> PathBuf {
        self.path(ROOFLINE_FILE)
    }
    pub(crate) fn read_roofline(&self) -> Result<crate::roofline::RooflineRecord, EvidenceError> {
        read_json(&self.roofline_file())
    }

    /// A study's `summary.json`, written at the end and by `abprof summarize` (its type,
    /// `summary::Summary`, lives in the summary floor above).
    pub(crate) fn write_study_summary<S: StudySummaryDoc>(&self, summary: &S) -> Result<(), EvidenceError> {
        write_json(&self.summary_file(), summary)
    }
    pub(crate) fn read_study_summary<S: StudySummaryDoc>(&self) -> Result<S, EvidenceError> {
        read_json(&self.summary_file())
    }
    /// A sweep's `summary.json`: a table per metric, one row per point (`summary::sweep::SweepSummary`).
    pub(crate) fn write_sweep_summary<S: SweepSummaryDoc>(&self, summary: &S) -> Result<(), EvidenceError> {
        write_json(&self.summary_file(), summary)
    }
    pub(crate) fn summary_file(&self) -> PathBuf {
        self.path(SUMMARY_FILE)
    }

    /// `pi.json`, a Pi study's report.
    pub(crate) fn pi_report_file(&self) -> PathBuf {
        self.path(PI_REPORT_FILE)
    }
    pub(crate) fn read_pi_report<R: PiReportDoc>(&self) -> Result<R, EvidenceError> {
        read_json(&self.pi_report_file())
    }
    pub(crate) fn write_pi_report<R: PiReportDoc>(&self, report: &R) -> Result<(), EvidenceError> {
        write_json(&self.pi_report_file(), report)
    }

    /// The prompt length every sample must show: the calibration record beside the study's
    /// prompt, else the study file's `prompt_tokens`. The driver and `summarize` both ask here.
    pub(crate) fn expected_prompt_tokens(&self, file: &super::file::StudyFile) -> Option<u64> {
        crate::client::calibrate::recorded_prompt_tokens(&self.prompt()).or(file.prompt_tokens)
    }

    /// Where the study's trace captures are, one folder per variant ([`TraceFolder::of`]): an A/B
    /// (or Pi) study's under `traces/` (`abprof trace --root DIR/traces`); an `abprof trace`
    /// study's in its own folder, beside the untraced samples that scale them.
    pub(crate) fn traces_dir(&self, kind: &StudyKind) -> PathBuf {
        match kind {
            StudyKind::Trace(_) => self.root.clone(),
            StudyKind::Ab | StudyKind::Pi(_) => self.path(TRACES_DIR),
        }
    }

    /// The folder of one planned sample; a traced one lives beside its trace, `LABEL/traced/`
    /// (the second `LABEL/traced-2/`, and so on).
    pub(crate) fn sample_dir(&self, plan: &Plan, slot: &Slot) -> PathBuf {
        let label = &plan.labels[slot.variant];
        if plan.is_traced(slot) {
            return TraceFolder::of(&self.root, label).traced_sample(slot.repeat);
        }
        match plan.layout {
            SampleLayout::Study => self.root.join(SAMPLES_DIR).join(format!("{:03}-{label}", slot.index + 1)),
            SampleLayout::Pi => self.root.join(PI_SAMPLES_DIR).join(format!("{label}-{}", slot.repeat + 1)),
        }
    }

    /// Appends one line to order.jsonl in a single write (atomic for a line this size).
    pub(crate) fn append_order(&self, entry: &OrderEntry) -> Result<(), EvidenceError> {
        let path = self.path(ORDER_FILE);
        let line = crate::schema::to_json_line(entry) + "\n";
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(|e| EvidenceError::Write { path: path.clone(), source: e })?;
        f.write_all(line.as_bytes()).map_err(|e| EvidenceError::Write { path, source: e })
    }

    pub fn order(&self) -> Vec<OrderEntry> {
        std::fs::read_to_string(self.path(ORDER_FILE))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    /// Moves a failed or unfinished attempt aside so the slot can be measured again; nothing is
    /// deleted.
    pub(crate) fn set_aside(&self, dir: &Path) -> Result<PathBuf, EvidenceError> {
        for k in 1.. {
            let aside = PathBuf::from(format!("{}.attempt-{k}", dir.display()));
            if !aside.exists() {
                std::fs::rename(dir, &aside).map_err(|e| EvidenceError::Write { path: aside.clone(), source: e })?;
                return Ok(aside);
            }
        }
        unreachable!("some attempt number is free")
    }

    /// Every planned slot with what is on disk for it.
    pub(crate) fn samples(&self, plan: &Plan) -> Vec<FoundSample> {
        plan.slots
            .iter()
            .map(|slot| {
                let label = plan.labels[slot.variant].clone();
                let dir = self.sample_dir(plan, slot);
                let record = |d: &Path| SampleFolder::at(d).record();
                let load = |d: &Path| read_json::<Sample>(&record(d)).ok();
                let (sample, corrupt) = match read_json::<Sample>(&record(&dir)) {
                    Ok(s) => (Some(s), None),
                    Err(_) if !record(&dir).exists() => (None, None),
                    Err(e) => (None, Some(e.to_string())),
                };
                let mut earlier_attempts = Vec::new();
                for k in 1.. {
                    let aside = PathBuf::from(format!("{}.attempt-{k}", dir.display()));
                    if !aside.exists() {
                        break;
                    }
                    let s = load(&aside);
                    earlier_attempts.push((aside, s));
                }
                FoundSample { slot: *slot, label, dir, sample, corrupt, earlier_attempts }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_written_with_its_schema_version_reads_back() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("list.json");
        write_json(&path, &vec![1u32, 2, 3]).unwrap();
        assert_eq!(read_json::<Vec<u32>>(&path).unwrap(), vec![1, 2, 3]);
        std::fs::write(&path, "[4, 5]").unwrap();
        assert_eq!(read_json::<Vec<u32>>(&path).unwrap(), vec![4, 5]);
    }

    #[test]
    fn create_refuses_a_used_folder_and_set_aside_keeps_attempts() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().join("study");
        let ev = Evidence::create(&root).unwrap();
        assert!(matches!(Evidence::create(&root), Err(EvidenceError::NotEmpty(_))));
        assert!(matches!(Evidence::open(&root), Err(EvidenceError::NotAStudy(_))));
        let slot = Slot { index: 0, variant: 0, repeat: 0 };
        let plan = Plan {
            labels: vec!["A".into()],
            order_seed: None,
            slots: vec![slot],
            layout: SampleLayout::Study,
            traced: vec![],
            retakes: 0,
        };
        let dir = ev.sample_dir(&plan, &slot);
        std::fs::create_dir_all(&dir).unwrap();
        assert!(ev.set_aside(&dir).unwrap().ends_with("001-A.attempt-1"));
        std::fs::create_dir_all(&dir).unwrap();
        assert!(ev.set_aside(&dir).unwrap().ends_with("001-A.attempt-2"));
        let e = OrderEntry {
            index: 0,
            label: "A".into(),
            repeat: 0,
            dir: "samples/001-A".into(),
            started_at: "t0".into(),
            ended_at: "t1".into(),
            status: AttemptStatus::Ok,
            timeline: Timeline::default(),
        };
        ev.append_order(&e).unwrap();
        ev.append_order(&e).unwrap();
        assert_eq!(ev.order().len(), 2);
    }

    #[test]
    fn a_list_reads_back_from_under_items_and_bare() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("list.json");
        write_json(&p, &vec![1u32, 2, 3]).unwrap();
        assert!(std::fs::read_to_string(&p).unwrap().contains("\"items\""));
        assert_eq!(read_json::<Vec<u32>>(&p).unwrap(), [1, 2, 3]);
        std::fs::write(&p, "[4, 5]").unwrap();
        assert_eq!(read_json::<Vec<u32>>(&p).unwrap(), [4, 5]);
    }

    #[test]
    fn a_start_that_failed_before_its_plan_is_reused_not_resumed() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().join("study");
        drop(Evidence::create(&root).unwrap());
        // What a disk that filled up while plan.json was written leaves.
        std::fs::write(root.join("study.toml"), "model = \"m\"\n").unwrap();
        std::fs::write(root.join(".plan.json.tmp"), "{\"lab").unwrap();
        // The facts come before the plan, so a start can fail with them written.
        std::fs::write(root.join("variants.json"), "[]").unwrap();
        std::fs::write(root.join("host.json"), "{}").unwrap();
        let e = Evidence::open(&root).err().unwrap();
        assert!(matches!(e, EvidenceError::NeverStarted(_)), "{e}");
        assert!(e.to_string().contains("run it again with --root"), "{e}");
        let ev = Evidence::create(&root).unwrap();
        assert!(!root.join("study.toml").exists() && !root.join(".plan.json.tmp").exists());
        assert!(!root.join("variants.json").exists() && !root.join("host.json").exists());
        let second = Evidence::create(&root);
        assert!(matches!(second, Err(EvidenceError::NotEmpty(_))), "locked: refused {second:?}");
        drop(ev);
        std::fs::write(root.join("notes.txt"), "mine").unwrap();
        assert!(matches!(Evidence::create(&root), Err(EvidenceError::NotEmpty(_))), "a user's file: refused");
    }
}
