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
//! samples/NNN-LABEL/      server.log, request.json, response.sse, sample.json, telemetry.csv
//! summary.json            written at the end and by `abprof summarize`
//! ```
//! Every record is written atomically (temp file + rename, or one O_APPEND line), so a crash loses
//! at most the sample in flight.
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
    #[error("{0} is not an abprof study folder (no study.toml): pass the --root of an earlier `abprof ab`")]
    NotAStudy(PathBuf),
    #[error("cannot write {path}: {source}")]
    Write { path: PathBuf, source: std::io::Error },
    #[error("cannot read {path}: {detail}")]
    Read { path: PathBuf, detail: String },
    #[error("{0} is in use by another abprof run: wait for it to finish, or pass another folder")]
    Locked(PathBuf),
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
    /// `ok`, `error`, `interrupted`.
    pub status: String,
    pub timeline: Timeline,
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
}

impl Plan {
    pub(crate) fn is_traced(&self, slot: &Slot) -> bool {
        self.traced.contains(&slot.index)
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
    /// Earlier failed attempts at this slot, kept beside it (`NNN-LABEL.attempt-K`).
    pub(crate) earlier_attempts: Vec<(PathBuf, Option<Sample>)>,
}

#[derive(Debug, Clone)]
pub struct Evidence {
    pub(crate) root: PathBuf,
    /// The exclusive lock a run holds on the folder (see [`Evidence::lock`]).
    lock: Option<std::sync::Arc<std::fs::File>>,
}

/// The lock file every study folder holds; a run keeps an exclusive `flock` on it.
const LOCK_FILE: &str = "abprof.lock";

pub(crate) fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<(), EvidenceError> {
    crate::atomic_file::write_json(path, value).map_err(|e| EvidenceError::Write { path: path.into(), source: e })
}

pub(crate) fn read_json<T: DeserializeOwned>(path: &Path) -> Result<T, EvidenceError> {
    let text =
        std::fs::read_to_string(path).map_err(|e| EvidenceError::Read { path: path.into(), detail: e.to_string() })?;
    serde_json::from_str(&text).map_err(|e| EvidenceError::Read { path: path.into(), detail: e.to_string() })
}

impl Evidence {
    /// A new study folder: it may exist only if empty.
    pub(crate) fn create(root: &Path) -> Result<Evidence, EvidenceError> {
        if root.exists() && std::fs::read_dir(root).map(|mut d| d.next().is_some()).unwrap_or(true) {
            return Err(EvidenceError::NotEmpty(root.into()));
        }
        std::fs::create_dir_all(root).map_err(|e| EvidenceError::Write { path: root.into(), source: e })?;
        let lock = root.join(LOCK_FILE);
        std::fs::write(&lock, b"").map_err(|e| EvidenceError::Write { path: lock, source: e })?;
        Ok(Evidence { root: root.into(), lock: None })
    }

    /// An existing study folder.
    pub(crate) fn open(root: &Path) -> Result<Evidence, EvidenceError> {
        if !root.join("study.toml").is_file() {
            return Err(EvidenceError::NotAStudy(root.into()));
        }
        Ok(Evidence { root: root.into(), lock: None })
    }

    /// Takes the folder for this run: two runs measuring into one folder would take the same
    /// slots and set each other's samples aside. The lock ends with the process, however it ends.
    pub(crate) fn lock(mut self) -> Result<Evidence, EvidenceError> {
        use std::os::fd::AsRawFd;
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

    pub(crate) fn path(&self, name: &str) -> PathBuf {
        self.root.join(name)
    }
    pub(crate) fn study_toml(&self) -> PathBuf {
        self.path("study.toml")
    }
    pub(crate) fn prompt(&self) -> PathBuf {
        self.path("prompt.txt")
    }

    /// The prompt length every sample must show: the calibration record beside the study's
    /// prompt, else the study file's `prompt_tokens`. The driver and `summarize` both ask here.
    pub(crate) fn expected_prompt_tokens(&self, file: &super::file::StudyFile) -> Option<u64> {
        crate::client::calibrate::recorded_prompt_tokens(&self.prompt()).or(file.prompt_tokens)
    }

    /// The folder of one planned sample; a traced one lives beside its trace, `LABEL/traced/`.
    pub(crate) fn sample_dir(&self, plan: &Plan, slot: &Slot) -> PathBuf {
        let label = &plan.labels[slot.variant];
        if plan.is_traced(slot) {
            return self.root.join(label).join("traced");
        }
        match plan.layout {
            SampleLayout::Study => self.root.join("samples").join(format!("{:03}-{label}", slot.index + 1)),
            SampleLayout::Pi => self.root.join("pi").join(format!("{label}-{}", slot.repeat + 1)),
        }
    }

    /// Appends one line to order.jsonl in a single write (atomic for a line this size).
    pub(crate) fn append_order(&self, entry: &OrderEntry) -> Result<(), EvidenceError> {
        let path = self.path("order.jsonl");
        let line = serde_json::to_string(entry).expect("serializable") + "\n";
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(|e| EvidenceError::Write { path: path.clone(), source: e })?;
        f.write_all(line.as_bytes()).map_err(|e| EvidenceError::Write { path, source: e })
    }

    pub fn order(&self) -> Vec<OrderEntry> {
        std::fs::read_to_string(self.path("order.jsonl"))
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
                let load = |d: &Path| read_json::<Sample>(&d.join("sample.json")).ok();
                let sample = load(&dir);
                let mut earlier_attempts = Vec::new();
                for k in 1.. {
                    let aside = PathBuf::from(format!("{}.attempt-{k}", dir.display()));
                    if !aside.exists() {
                        break;
                    }
                    let s = load(&aside);
                    earlier_attempts.push((aside, s));
                }
                FoundSample { slot: *slot, label, dir, sample, earlier_attempts }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
            status: "ok".into(),
            timeline: Timeline::default(),
        };
        ev.append_order(&e).unwrap();
        ev.append_order(&e).unwrap();
        assert_eq!(ev.order().len(), 2);
    }
}
