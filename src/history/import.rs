//! `abprof history import DIR...`: the records an evidence folder holds, built through the
//! summary layer the way the command that measured them builds them at its end.
use super::backend::History;
use super::record::{RecordedStudy, StudyRecord};
use crate::exactness::ExactnessReport;
use crate::study::evidence::Evidence;
use crate::study::file::KindName;
use crate::study::run_folders::{BenchFolder, ExactnessFolder};
use crate::study::Shape;
use crate::summary::bench::load_bench;
use crate::summary::fingerprint::ExactnessFacts;
use crate::summary::pi::PiReport;
use crate::summary::{judge_with, TraceReading};
use anyhow::{bail, Result};
use std::path::{Path, PathBuf};

/// What importing one folder did.
#[derive(Debug, Clone, serde::Serialize)]
pub(crate) struct Imported {
    pub(crate) folder: PathBuf,
    pub(crate) studies: Vec<RecordedStudy>,
}

/// The finished studies in `dir`: an `ab`, `trace` or `pi` study folder (and the exactness
/// check run into it), an `abprof exactness --root` folder, or an `abprof bench` folder.
pub(crate) fn records_in(dir: &Path) -> Result<Vec<StudyRecord>> {
    let mut out = Vec::new();
    if Evidence::holds_study(dir) {
        let folder = crate::study::open(dir)?;
        if folder.shape == Shape::Sweep {
            bail!(
                "{} is a sweep: each point is a study of its own; import them with `abprof history import {}/points/*`",
                dir.display(),
                dir.display()
            );
        }
        let facts = folder.facts()?;
        let ev = folder.evidence;
        if folder.file.kind.name() == KindName::Pi {
            let report: PiReport = match ev.read_pi_report() {
                Ok(r) => r,
                Err(_) => bail!(
                    "{} is a Pi study that never finished (no {}): `abprof pi --resume {}` completes it",
                    dir.display(),
                    ev.pi_report_file().display(),
                    dir.display()
                ),
            };
            if let Some(sig) = report.interrupted_by {
                bail!(
                    "{} is a Pi study stopped by signal {sig}: `abprof pi --resume {}` completes it",
                    dir.display(),
                    dir.display()
                );
            }
            out.push(StudyRecord::of_pi(dir, &report, &facts));
        } else {
            let judged = judge_with(&ev, facts, TraceReading::Builtin)?;
            if judged.summary.missing > 0 {
                let how = judged.facts.file.kind.name().command();
                bail!(
                    "{} is an unfinished study ({} planned samples missing): `abprof {how} --resume {}` completes it",
                    dir.display(),
                    judged.summary.missing,
                    dir.display()
                );
            }
            out.push(StudyRecord::of_study(dir, &judged));
        }
    }
    let exactness = ExactnessFolder::at(dir);
    if exactness.has_report() {
        let report = ExactnessReport::read(&exactness)?;
        let facts = ExactnessFacts::read(&exactness).ok();
        out.push(StudyRecord::of_exactness(dir, &report, facts.as_ref()));
    }
    let bench = BenchFolder::at(dir);
    if bench.has_facts() {
        out.push(StudyRecord::of_bench(dir, &load_bench(&bench)?));
    }
    if out.is_empty() {
        bail!(
            "{} holds no abprof evidence (no study.toml, exactness.json or bench.json): pass the --root of an `abprof ab`, `trace`, `pi` or `exactness` run, or the --evidence of `abprof bench`",
            dir.display()
        );
    }
    Ok(out)
}

/// Writes the studies [`records_in`] found in `dir`; one already in the history is recognized,
/// not written again.
pub(crate) fn import_folder(history: &mut History, dir: &Path, records: &[StudyRecord]) -> Result<Imported> {
    let mut studies = Vec::new();
    for r in records {
        studies.push(history.record(r)?);
    }
    Ok(Imported { folder: dir.to_path_buf(), studies })
}
