//! A sweep (docs/methodology.md §16): one whole interleaved study of every variant per point, each
//! run by the one study driver into its own folder under `points/`, recorded in `sweep.json` so
//! `abprof ab --resume` keeps the finished points, resumes the interrupted one and starts the rest.
use super::drive::Outcome;
use super::evidence::{read_json, write_json, Evidence};
use super::file::{AxisName, AxisValue, Point, StudyFile, SweepSection};
use super::judge::Judge;
use super::preflight::{check_servers, check_study, Probes};
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Where a point stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum PointState {
    /// Not started: a run creates its folder.
    Pending,
    /// Started and not finished (interrupted, or stopped by an error): a run resumes it.
    Started,
    /// Every planned sample taken: a run keeps it as it is.
    Done,
}

/// One point as `sweep.json` records it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct PointRecord {
    pub(crate) name: String,
    /// Its folder, relative to the sweep's.
    pub(crate) dir: String,
    pub(crate) values: Vec<AxisValue>,
    pub(crate) state: PointState,
}

/// `sweep.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct SweepRecord {
    pub(crate) axes: Vec<AxisName>,
    pub(crate) points: Vec<PointRecord>,
}

// Here rather than in evidence.rs, which sits below the record's type.
impl Evidence {
    /// `sweep.json`: a sweep's axes and points.
    pub(crate) fn read_sweep_record(&self) -> Result<SweepRecord, super::evidence::EvidenceError> {
        read_json(&self.sweep_record())
    }
}

impl SweepRecord {
    fn new(section: &SweepSection) -> SweepRecord {
        SweepRecord {
            axes: section.axes().into_iter().map(|(a, _)| a).collect(),
            points: section
                .points()
                .iter()
                .map(|p| PointRecord {
                    name: p.name(),
                    dir: Evidence::point_folder(&p.dir_name()),
                    values: p.values.clone(),
                    state: PointState::Pending,
                })
                .collect(),
        }
    }
}

pub(crate) struct SweepRun {
    pub(crate) outcome: Outcome,
    pub(crate) evidence: Evidence,
    /// Every point's restore and verify hooks succeeded.
    pub(crate) restored: bool,
    pub(crate) samples_taken: usize,
}

/// The study file of a point about to start. A point whose prompt length (and extra server
/// arguments, which may change the chat template) an earlier point shares reuses that point's
/// calibrated prompt instead of calibrating again.
fn point_study(ev: &Evidence, file: &StudyFile, record: &SweepRecord, point: &Point) -> StudyFile {
    let mut f = file.at_point(point);
    let same_prompt = |values: &[AxisValue]| {
        let keep = |v: &&AxisValue| matches!(v.axis(), AxisName::PromptTokens | AxisName::Extra);
        values.iter().filter(keep).eq(point.values.iter().filter(keep))
    };
    if f.prompt.is_none() {
        let earlier = record.points[..point.index]
            .iter()
            .filter(|r| same_prompt(&r.values))
            .map(|r| super::evidence::prompt_in(&ev.point(&r.dir)))
            .find(|p| p.is_file() && crate::client::calibrate::sidecar_path(p).is_file());
        f.prompt = earlier;
    }
    f
}

/// Runs (or resumes) the sweep `file` describes in `root`; `judge` is what every point's study
/// asks of each sample and after its planned samples (a retake, the `until_ci_pct` rule).
pub(crate) fn run_sweep(file: &StudyFile, root: &Path, resume: bool, judge: Option<Judge>) -> Result<SweepRun> {
    let section = file.sweep.as_ref().context("a sweep needs its [sweep] section")?;
    let points = section.points();
    // Every point is checked before anything is created: a bad value stops the sweep before its
    // first sample, not halfway.
    if !resume {
        Evidence::check_new(root).map_err(crate::refusal::Refusal::of)?;
    }
    let mut probes = Probes::default();
    for p in &points {
        let point = file.at_point(p);
        let (variants, common) = check_study(&point).with_context(|| format!("sweep point {}", p.name()))?;
        check_servers(&point, &variants, &common, &mut probes).with_context(|| format!("sweep point {}", p.name()))?;
    }
    let ev = if resume { Evidence::open_sweep(root)? } else { Evidence::create(root)? }.lock()?;
    let mut record: SweepRecord = if resume {
        let r: SweepRecord = read_json(&ev.sweep_record())?;
        // The same file gives the same points; anything else is not this sweep any more.
        let want = SweepRecord::new(section);
        if r.points.iter().map(|p| &p.name).ne(want.points.iter().map(|p| &p.name)) {
            anyhow::bail!(
                "{}: sweep.json lists other points than its study.toml (the folder was edited): start a new sweep",
                root.display()
            );
        }
        r
    } else {
        crate::atomic_file::write_atomic(&ev.study_toml(), file.to_toml().as_bytes())?;
        let r = SweepRecord::new(section);
        write_json(&ev.sweep_record(), &r)?;
        r
    };
    let (mut restored, mut taken) = (true, 0);
    for point in &points {
        let i = point.index;
        if record.points[i].state == PointState::Done {
            continue;
        }
        let dir = ev.point(&record.points[i].dir);
        let started = Evidence::started(&dir);
        let point_file = if started {
            StudyFile::load(&super::evidence::study_toml_in(&dir))?
        } else {
            point_study(&ev, file, &record, point)
        };
        record.points[i].state = PointState::Started;
        write_json(&ev.sweep_record(), &record)?;
        eprintln!("abprof: sweep point {}/{}: {}", i + 1, points.len(), point.name());
        // Each point a study of the sweep's kind: server samples, or llama-bench's (§4.4).
        let run = super::ab::run_ab(&point_file, &dir, started, judge.clone())
            .with_context(|| format!("sweep point {}", point.name()))?;
        restored &= run.restored;
        taken += run.samples_taken;
        if let Outcome::Interrupted(sig) = run.outcome {
            return Ok(SweepRun { outcome: Outcome::Interrupted(sig), evidence: ev, restored, samples_taken: taken });
        }
        record.points[i].state = PointState::Done;
        write_json(&ev.sweep_record(), &record)?;
    }
    Ok(SweepRun { outcome: Outcome::Completed, evidence: ev, restored, samples_taken: taken })
}
