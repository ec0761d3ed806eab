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
pub enum EvidenceError {
    #[error("{0} already holds files: pass a new --root, or --resume {0} to continue that study")]
    NotEmpty(PathBuf),
    #[error("{0} is not an abprof study folder (no study.toml): pass the --root of an earlier `abprof ab`")]
    NotAStudy(PathBuf),
    #[error("cannot write {path}: {source}")]
    Write { path: PathBuf, source: std::io::Error },
    #[error("cannot read {path}: {detail}")]
    Read { path: PathBuf, detail: String },
}

/// One line of `order.jsonl`: a sample attempt as it happened.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct OrderEntry {
    pub index: usize,
    pub label: String,
    pub repeat: usize,
    pub dir: String,
    pub started_at: String,
    pub ended_at: String,
    /// `ok`, `error`, `interrupted`.
    pub status: String,
    pub timeline: Timeline,
}

/// Where one sample's wall time went, in ms. `dead_ms` is the driver's own share: everything but
/// the server's start-up-to-health and the request itself.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Default)]
pub struct Timeline {
    pub total_ms: f64,
    pub hooks_ms: f64,
    pub startup_ms: f64,
    pub idle_gate_ms: f64,
    pub request_ms: f64,
    pub stop_ms: f64,
    pub dead_ms: f64,
}

/// The run order, fixed when the study starts so `--resume` keeps it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Plan {
    pub labels: Vec<String>,
    pub order_seed: Option<u64>,
    pub slots: Vec<Slot>,
}

/// A sample folder as found on disk.
#[derive(Debug, Clone)]
pub struct FoundSample {
    pub slot: Slot,
    pub label: String,
    pub dir: PathBuf,
    pub sample: Option<Sample>,
    /// Earlier failed attempts at this slot, kept beside it (`NNN-LABEL.attempt-K`).
    pub earlier_attempts: Vec<(PathBuf, Option<Sample>)>,
}

#[derive(Debug, Clone)]
pub struct Evidence {
    pub root: PathBuf,
}

pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), EvidenceError> {
    crate::atomic_file::write_atomic(path, bytes).map_err(|e| EvidenceError::Write { path: path.into(), source: e })
}

pub fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<(), EvidenceError> {
    crate::atomic_file::write_json(path, value).map_err(|e| EvidenceError::Write { path: path.into(), source: e })
}

pub fn read_json<T: DeserializeOwned>(path: &Path) -> Result<T, EvidenceError> {
    let text =
        std::fs::read_to_string(path).map_err(|e| EvidenceError::Read { path: path.into(), detail: e.to_string() })?;
    serde_json::from_str(&text).map_err(|e| EvidenceError::Read { path: path.into(), detail: e.to_string() })
}

impl Evidence {
    /// A new study folder: it may exist only if empty.
    pub fn create(root: &Path) -> Result<Evidence, EvidenceError> {
        if root.exists() && std::fs::read_dir(root).map(|mut d| d.next().is_some()).unwrap_or(true) {
            return Err(EvidenceError::NotEmpty(root.into()));
        }
        std::fs::create_dir_all(root.join("samples"))
            .map_err(|e| EvidenceError::Write { path: root.into(), source: e })?;
        Ok(Evidence { root: root.into() })
    }

    /// An existing study folder.
    pub fn open(root: &Path) -> Result<Evidence, EvidenceError> {
        if !root.join("study.toml").is_file() {
            return Err(EvidenceError::NotAStudy(root.into()));
        }
        Ok(Evidence { root: root.into() })
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.root.join(name)
    }
    pub fn study_toml(&self) -> PathBuf {
        self.path("study.toml")
    }
    pub fn prompt(&self) -> PathBuf {
        self.path("prompt.txt")
    }

    /// The prompt length every sample must show: the calibration record beside the study's
    /// prompt, else the study file's `prompt_tokens`. The driver and `summarize` both ask here.
    pub fn expected_prompt_tokens(&self, file: &super::file::StudyFile) -> Option<u64> {
        crate::client::calibrate::recorded_prompt_tokens(&self.prompt()).or(file.prompt_tokens)
    }

    pub fn sample_dir(&self, slot: &Slot, label: &str) -> PathBuf {
        self.root.join("samples").join(format!("{:03}-{label}", slot.index + 1))
    }

    /// Appends one line to order.jsonl in a single write (atomic for a line this size).
    pub fn append_order(&self, entry: &OrderEntry) -> Result<(), EvidenceError> {
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
    pub fn set_aside(&self, dir: &Path) -> Result<PathBuf, EvidenceError> {
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
    pub fn samples(&self, plan: &Plan) -> Vec<FoundSample> {
        plan.slots
            .iter()
            .map(|slot| {
                let label = plan.labels[slot.variant].clone();
                let dir = self.sample_dir(slot, &label);
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
        let dir = ev.sample_dir(&slot, "A");
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
