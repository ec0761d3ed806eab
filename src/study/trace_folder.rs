//! An `abprof trace` capture's folder, one per traced variant (`LABEL/`: a trace study's own
//! folder, an A/B study's `traces/LABEL/`):
//!
//! ```text
//! LABEL/trace.json          the manifest: which variant, the windows, the untraced samples
//! LABEL/tracer-out[-N]/     each traced sample's tracer output (the trace file the manifest names)
//! LABEL/traced[-N]/         each traced sample's own folder (a sample folder)
//! ```
//!
//! `trace/` reads the manifest and the trace it is given; the folder's layout is read here.
use super::layout::{numbered, TRACED_DIR, TRACER_OUT_DIR, TRACE_MANIFEST};
use crate::trace::manifest::{ManifestError, TraceManifest};
use crate::trace::{folder_input, folder_inputs, TraceError, TraceInput};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TraceFolder {
    dir: PathBuf,
}

impl TraceFolder {
    pub(crate) fn at(dir: &Path) -> TraceFolder {
        TraceFolder { dir: dir.into() }
    }

    /// Variant `label`'s capture among the study's traces in `traces_dir`
    /// ([`Evidence::traces_dir`](super::evidence::Evidence::traces_dir)).
    pub(crate) fn of(traces_dir: &Path, label: &str) -> TraceFolder {
        TraceFolder::at(&traces_dir.join(label))
    }

    /// The capture whose first traced sample's folder is `sample_dir` (`LABEL/traced/`, the one
    /// `abprof timeline` draws), when it is one; its manifest may be missing (the run failed).
    pub(crate) fn of_traced_sample(sample_dir: &Path) -> Option<TraceFolder> {
        sample_dir.parent().filter(|_| sample_dir.ends_with(TRACED_DIR)).map(TraceFolder::at)
    }

    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// `trace.json`.
    pub(crate) fn manifest_file(&self) -> PathBuf {
        self.dir.join(TRACE_MANIFEST)
    }

    /// Whether the manifest is here: what makes the folder a capture's.
    pub(crate) fn has_manifest(&self) -> bool {
        self.manifest_file().is_file()
    }

    pub(crate) fn read_manifest(&self) -> Result<TraceManifest, ManifestError> {
        TraceManifest::load(&self.manifest_file())
    }

    pub(crate) fn write_manifest(&self, manifest: &TraceManifest) -> Result<(), ManifestError> {
        manifest.save(&self.manifest_file())
    }

    /// The folder of the variant's `repeat`-th traced sample (from 0): `traced/`, `traced-2/`, …
    pub(crate) fn traced_sample(&self, repeat: usize) -> PathBuf {
        self.dir.join(numbered(TRACED_DIR, repeat))
    }

    /// The first traced sample's folder, which `abprof timeline` draws for the capture.
    pub(crate) fn first_traced_sample(&self) -> PathBuf {
        self.traced_sample(0)
    }

    /// The tracer's output folder of the `repeat`-th traced sample: `tracer-out/`, `tracer-out-2/`, …
    pub(crate) fn tracer_out(&self, repeat: usize) -> PathBuf {
        self.dir.join(numbered(TRACER_OUT_DIR, repeat))
    }

    /// The first traced sample, with the manifest.
    pub(crate) fn input(&self) -> Result<TraceInput, TraceError> {
        self.check()?;
        folder_input(&self.dir, &self.manifest_file())
    }

    /// Every traced sample, each with the manifest as if it were the only one.
    pub(crate) fn inputs(&self) -> Result<Vec<TraceInput>, TraceError> {
        self.check()?;
        folder_inputs(&self.dir, &self.manifest_file())
    }

    fn check(&self) -> Result<(), TraceError> {
        if self.manifest_file().exists() {
            return Ok(());
        }
        Err(TraceError::NotTraceFolder { path: self.dir.clone(), detail: format!("a folder without {TRACE_MANIFEST}") })
    }
}

/// A trace file, or an `abprof trace` output folder's first traced sample (its manifest names
/// the file).
pub(crate) fn trace_input(path: &Path) -> Result<TraceInput, TraceError> {
    if is_folder(path)? {
        TraceFolder::at(path).input()
    } else {
        Ok(TraceInput::file(path))
    }
}

/// Every traced sample at `path`: a trace file is one; an `abprof trace` folder holds one per
/// traced sample (`--traced N`).
pub(crate) fn trace_inputs(path: &Path) -> Result<Vec<TraceInput>, TraceError> {
    if is_folder(path)? {
        TraceFolder::at(path).inputs()
    } else {
        Ok(vec![TraceInput::file(path)])
    }
}

fn is_folder(path: &Path) -> Result<bool, TraceError> {
    let meta = std::fs::metadata(path).map_err(|source| TraceError::Io { path: path.into(), source })?;
    Ok(meta.is_dir())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_capture_names_its_files_as_every_release_has() {
        let f = TraceFolder::at(Path::new("/t/a"));
        assert_eq!(f.manifest_file(), Path::new("/t/a/trace.json"));
        assert_eq!(f.traced_sample(0), Path::new("/t/a/traced"));
        assert_eq!(f.traced_sample(1), Path::new("/t/a/traced-2"));
        assert_eq!(f.tracer_out(2), Path::new("/t/a/tracer-out-3"));
    }

    #[test]
    fn a_folder_without_a_manifest_says_so_and_a_committed_capture_reads() {
        let d = tempfile::tempdir().unwrap();
        let e = trace_input(d.path()).unwrap_err().to_string();
        assert!(e.contains("a folder without trace.json"), "{e}");
        let committed = Path::new(env!("CARGO_MANIFEST_DIR")).join("traces/rocpd-kv-f16");
        let input = trace_input(&committed).unwrap();
        assert!(input.manifest.is_some() && input.trace_path.starts_with(&committed));
        assert!(matches!(trace_input(&d.path().join("none")), Err(TraceError::Io { .. })));
    }
}
