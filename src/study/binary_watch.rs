//! A variant binary rebuilt in place mid-study, or its model replaced, would be measured without
//! notice while the evidence claims the old sha256 (docs/methodology.md §7.12 "binary-changed",
//! §7.14 "model-changed"). Before and after every sample each file's stamp (size, mtime, inode,
//! device) is compared with the one recorded with its facts in `variants.json`; only a different
//! stamp costs a new hash.
use crate::measure::{BinaryChange, FileStamp, SampleExtra};
use std::path::{Path, PathBuf};

pub(crate) fn stamp(path: &Path) -> Option<FileStamp> {
    std::fs::metadata(path).ok().map(|m| FileStamp::of(&m))
}

fn sha256(path: &Path) -> Option<String> {
    crate::artifact::sha256_file(path).ok()
}

/// One variant's binary as the study recorded it.
#[derive(Debug, Clone)]
pub(crate) struct WatchedBinary {
    pub(crate) path: PathBuf,
    pub(crate) sha256: String,
    pub(crate) stamp: FileStamp,
}

impl WatchedBinary {
    /// Unchanged bytes (same stamp, or a new stamp over the same sha256: a `touch`, a copy of
    /// the same build) pass, and the new stamp is kept so the hash runs once per change.
    pub(crate) fn check(&mut self) -> Result<(), Box<BinaryChange>> {
        let now = stamp(&self.path);
        if now == Some(self.stamp) {
            return Ok(());
        }
        let now_sha256 = now.and_then(|_| sha256(&self.path));
        if now_sha256.as_deref() == Some(self.sha256.as_str()) {
            self.stamp = now.expect("hashed, so it exists");
            return Ok(());
        }
        Err(Box::new(BinaryChange {
            path: self.path.clone(),
            recorded: self.stamp,
            now,
            recorded_sha256: self.sha256.clone(),
            now_sha256,
        }))
    }
}

/// The one line that stops a study whose binary changed.
pub(crate) fn describe(label: &str, c: &BinaryChange) -> String {
    format!(
        "variant {label}'s binary {} changed on disk during the study ({}): the evidence would claim the old bytes; build into another path (abprof build), then start a new study",
        c.path.display(),
        c.hashes()
    )
}

/// The files of one variant the study watches: the binary it runs and the model it loads.
#[derive(Debug, Clone)]
pub(crate) struct VariantFiles {
    pub(crate) binary: WatchedBinary,
    pub(crate) model: WatchedBinary,
}

/// Which of a variant's files changed, and how.
#[derive(Debug, Clone)]
pub(crate) enum FileChange {
    Binary(Box<BinaryChange>),
    Model(Box<BinaryChange>),
}

impl VariantFiles {
    pub(crate) fn check(&mut self) -> Result<(), FileChange> {
        self.binary.check().map_err(FileChange::Binary)?;
        self.model.check().map_err(FileChange::Model)
    }
}

impl FileChange {
    /// The one line that stops the study.
    pub(crate) fn describe(&self, label: &str) -> String {
        match self {
            FileChange::Binary(c) => describe(label, c),
            FileChange::Model(c) => format!(
                "variant {label}'s model {} changed on disk during the study ({}): the evidence would claim the old model; put the new model at another path, then start a new study",
                c.path.display(),
                c.hashes()
            ),
        }
    }

    /// Marks the sample it happened during, for its rule (binary-changed, model-changed).
    pub(crate) fn mark(&self, extra: &mut SampleExtra) {
        match self {
            FileChange::Binary(c) => extra.binary_changed = Some((**c).clone()),
            FileChange::Model(c) => extra.model_changed = Some((**c).clone()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_touch_passes_new_bytes_do_not() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("bin");
        std::fs::write(&p, b"one").unwrap();
        let mut w = WatchedBinary { path: p.clone(), sha256: sha256(&p).unwrap(), stamp: stamp(&p).unwrap() };
        assert!(w.check().is_ok());
        let f = std::fs::File::options().write(true).open(&p).unwrap();
        f.set_modified(std::time::SystemTime::now() + std::time::Duration::from_secs(5)).unwrap();
        assert!(w.check().is_ok(), "same bytes, new mtime");
        assert_eq!(w.stamp, stamp(&p).unwrap(), "the new stamp is kept");
        let tmp = d.path().join("bin.new");
        std::fs::write(&tmp, b"two").unwrap();
        std::fs::rename(&tmp, &p).unwrap();
        let c = w.check().unwrap_err();
        assert_ne!(c.now.unwrap().inode, c.recorded.inode);
        assert!(describe("a", &c).contains("changed on disk"));
        std::fs::remove_file(&p).unwrap();
        assert!(describe("a", &w.check().unwrap_err()).contains("→ gone"));
    }
}
