//! Which sample a timeline is drawn from: a sample folder, a study folder and a sample number,
//! or an `abprof trace` folder (its traced sample, with its trace).
use crate::measure::Sample;
use crate::study::evidence::{Evidence, EvidenceError, Plan};
use crate::study::sample_folder::SampleFolder;
use crate::study::trace_folder::TraceFolder;
use crate::trace::{TraceError, TraceInput};
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub(crate) enum InputError {
    #[error("{0} is a study folder: pass --sample N (1–{1}, the NNN of samples/NNN-LABEL) to pick one of its samples")]
    StudyWithoutSample(PathBuf, usize),
    #[error("{path} has no sample {n}: its plan has samples 1–{count}")]
    NoSuchSample { path: PathBuf, n: usize, count: usize },
    #[error(
        "--sample picks a sample of a study folder, and {0} is not one (no plan.json): pass the sample's folder alone"
    )]
    SampleOfNonStudy(PathBuf),
    #[error("{0} is not a sample folder (no sample.json), an `abprof trace` folder (no trace.json) or a study folder (no plan.json): pass DIR/samples/NNN-LABEL, or a study folder with --sample N")]
    Unknown(PathBuf),
    #[error("{path}: that sample was never recorded (no sample.json{why}); pick another one")]
    NotRecorded { path: PathBuf, why: String },
    #[error("cannot read the sample record {path}: {detail}; the folder's other evidence is untouched")]
    Record { path: PathBuf, detail: String },
    #[error(transparent)]
    Evidence(#[from] EvidenceError),
    #[error(transparent)]
    Open(#[from] crate::study::OpenError),
    #[error(transparent)]
    Trace(#[from] TraceError),
}

/// A sample to draw, and its trace when it ran under a tracer.
#[derive(Debug)]
pub(crate) struct TimelineInput {
    pub(crate) dir: PathBuf,
    pub(crate) sample: Sample,
    pub(crate) trace: Option<TraceInput>,
}

/// `path` as the brief of `abprof timeline` reads it (see the module docs).
pub(crate) fn resolve(path: &Path, sample: Option<usize>) -> Result<TimelineInput, InputError> {
    let study = Evidence::started(path);
    let dir = match sample {
        Some(n) if study => study_sample(path, n)?,
        Some(_) => return Err(InputError::SampleOfNonStudy(path.into())),
        None if SampleFolder::at(path).record().is_file() => path.to_path_buf(),
        None if TraceFolder::at(path).has_manifest() => TraceFolder::at(path).first_traced_sample(),
        None if study => {
            let plan: Plan = crate::study::open(path)?.evidence.read_plan()?;
            return Err(InputError::StudyWithoutSample(path.into(), plan.slots.len()));
        }
        None => return Err(InputError::Unknown(path.into())),
    };
    let record = SampleFolder::at(&dir).record();
    let capture = TraceFolder::of_traced_sample(&dir);
    if !record.is_file() {
        let why =
            if capture.is_some() { ": the traced run failed, or ran before traced samples were kept" } else { "" };
        return Err(InputError::NotRecorded { path: dir, why: why.into() });
    }
    let text = std::fs::read_to_string(&record)
        .map_err(|e| InputError::Record { path: record.clone(), detail: e.to_string() })?;
    let sample: Sample =
        serde_json::from_str(&text).map_err(|e| InputError::Record { path: record.clone(), detail: e.to_string() })?;
    // A traced sample lives in LABEL/traced/, beside the manifest naming its trace.
    let trace = match capture.filter(TraceFolder::has_manifest) {
        Some(folder) => Some(folder.input()?),
        None => None,
    };
    Ok(TimelineInput { dir, sample, trace })
}

/// Sample `n` (from 1, as in `samples/NNN-LABEL`) of the study at `root`.
fn study_sample(root: &Path, n: usize) -> Result<PathBuf, InputError> {
    let ev = crate::study::open(root)?.evidence;
    let plan: Plan = ev.read_plan()?;
    let slot = plan.slots.iter().find(|s| s.index + 1 == n);
    match slot {
        Some(slot) => Ok(ev.sample_dir(&plan, slot)),
        None => Err(InputError::NoSuchSample { path: root.into(), n, count: plan.slots.len() }),
    }
}
