//! One way into an existing study folder: `--resume`, `summarize`, `report`, `history import` and
//! `timeline` all open a folder here, which reads its study file once and says which kind of study
//! (and which shape: one study, or a sweep of them) it holds, so no caller guesses from the files.
use super::evidence::{is_sweep, Evidence, EvidenceError, Plan};
use super::facts::{HostFacts, VariantFacts};
use super::file::{KindName, StudyFile, StudyFileError};
use crate::refusal::Refusal;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// What a study ran on, read once and typed: the study file, the plan, the host's facts and each
/// variant's facts (binary, `--version`, commit, model, argv, env). The summary and the results
/// history (src/history/) both read a study's fingerprint from here.
#[derive(Debug, Clone)]
pub(crate) struct StudyFacts {
    pub(crate) file: StudyFile,
    pub(crate) plan: Plan,
    /// `host.json`; absent only in a folder whose start was cut short.
    pub(crate) host: Option<HostFacts>,
    /// `variants.json`, one per planned label; empty when it could not be read.
    pub(crate) variants: Vec<VariantFacts>,
    /// Why `host.json` or `variants.json` is missing from the facts although the folder holds it.
    pub(crate) unreadable: Vec<String>,
}

impl StudyFacts {
    /// The facts of the study in `ev`, its study file read here.
    pub(crate) fn load(ev: &Evidence) -> anyhow::Result<StudyFacts> {
        Self::with_file(ev, StudyFile::load(&ev.study_toml())?)
    }

    /// The facts of the study in `ev` whose study file is `file` (already read).
    fn with_file(ev: &Evidence, file: StudyFile) -> anyhow::Result<StudyFacts> {
        let mut unreadable = Vec::new();
        let mut kept = |present: bool, e: EvidenceError| {
            if present {
                unreadable.push(e.to_string());
            }
        };
        let host = ev.read_host().map_err(|e| kept(ev.has_host(), e)).ok();
        let variants = ev.read_variants().map_err(|e| kept(ev.has_variants(), e)).unwrap_or_default();
        Ok(StudyFacts { file, plan: ev.read_plan()?, host, variants, unreadable })
    }

    /// An A/A study (`abprof ab --aa`): one variant run against itself as `LABEL-again`.
    pub(crate) fn is_aa(&self) -> bool {
        match self.file.variants.as_slice() {
            [a, b] => crate::variant::aa_copy(a).is_some_and(|copy| *b == copy),
            _ => false,
        }
    }
}

/// One study, or a sweep: one whole study per point (docs/methodology.md §16).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    Study,
    Sweep,
}

/// An opened study folder.
#[derive(Debug, Clone)]
pub(crate) struct StudyFolder {
    pub(crate) evidence: Evidence,
    /// Its `study.toml`, read and checked.
    pub(crate) file: StudyFile,
    pub(crate) shape: Shape,
}

#[derive(Debug, Error)]
pub(crate) enum OpenError {
    #[error(transparent)]
    Evidence(#[from] EvidenceError),
    #[error(transparent)]
    File(#[from] StudyFileError),
}

/// A folder or study file of another kind than the command handles: refused (exit 2) before
/// anything is written.
#[derive(Debug, Error)]
pub(crate) enum WrongKind {
    #[error("{dir} is {a_study}{shape}, which `abprof {asked} --resume` cannot continue: `abprof {right} --resume {dir}` does", a_study = kind.a_study(), shape = if *sweep { " sweep" } else { "" }, right = kind.command(), dir = dir.display())]
    Folder { dir: PathBuf, kind: KindName, sweep: bool, asked: &'static str },
    #[error("study file {path} defines {a_study}, which `abprof {asked} --study` does not run: `abprof {right}` runs it (give its flags){hint}", a_study = kind.a_study(), right = kind.command(), path = path.display(), hint = if *kind == KindName::Trace { ", or drop its kind line and its [trace] section to run it as an A/B study" } else { "" })]
    File { path: PathBuf, kind: KindName, asked: &'static str },
}

/// Opens the study (or sweep) folder `dir`.
pub(crate) fn open(dir: &Path) -> Result<StudyFolder, OpenError> {
    let (evidence, shape) =
        if is_sweep(dir) { (Evidence::open_sweep(dir)?, Shape::Sweep) } else { (Evidence::open(dir)?, Shape::Study) };
    let file = StudyFile::load(&evidence.study_toml())?;
    Ok(StudyFolder { evidence, file, shape })
}

impl StudyFolder {
    pub(crate) fn kind(&self) -> KindName {
        self.file.kind.name()
    }

    /// What the study here ran on (its study file as already read, the plan, host and variant
    /// facts); an error for a sweep, whose points are the studies.
    pub(crate) fn facts(&self) -> anyhow::Result<StudyFacts> {
        StudyFacts::with_file(&self.evidence, self.file.clone())
    }

    /// The folder, when `abprof <kind> --resume` may continue it.
    pub(crate) fn resumed_by(self, kind: KindName) -> Result<StudyFolder, Refusal> {
        if self.kind() == kind {
            return Ok(self);
        }
        Err(Refusal::of(WrongKind::Folder {
            dir: self.evidence.root.clone(),
            kind: self.kind(),
            sweep: self.shape == Shape::Sweep,
            asked: kind.command(),
        }))
    }
}

/// The study file at `path` for `abprof <asked> --study`, which runs studies of `kind`: read,
/// checked to be of that kind, its relative paths taken from the file's folder. Every way it
/// cannot run is a refusal (exit 2), before anything is created.
pub(crate) fn load_study_file(path: &Path, kind: KindName, asked: &'static str) -> Result<StudyFile, Refusal> {
    let file = StudyFile::load(path).map_err(Refusal::of)?;
    if file.kind.name() != kind {
        return Err(Refusal::of(WrongKind::File { path: path.into(), kind: file.kind.name(), asked }));
    }
    Ok(file.with_paths_from(path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."))))
}
