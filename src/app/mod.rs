//! The application layer: one function per command that runs something, from its typed request
//! to its exit status. `cli/` parses flags into that request and makes one call. A study
//! ([`study`]) is run, judged, summarized, printed, recorded in the history and reported, with a
//! warning for a host left isolated and the status from one table (`Ending::status`); each
//! study kind's steps are in its own file, the shared ones in `epilogue.rs`. `bench`,
//! `exactness`, `calibrate`, `build` and `bisect` have a file each, and so does every command
//! that reads what was measured (`summarize`, `report`, `history`, `compare-traces`, `roofline`,
//! `doctor`): each decides its exit status here.
mod ab;
mod bench;
mod bisect;
mod build;
mod calibrate;
mod compare_traces;
mod doctor;
mod ending;
mod epilogue;
mod exactness;
mod history;
mod pi;
mod report;
mod roofline;
mod summarize;
mod sweep;
mod trace;

pub(crate) use bench::{bench, BenchRequest};
pub(crate) use bisect::bisect;
pub(crate) use build::build;
pub(crate) use calibrate::{calibrate, CalibrateRequest, CalibrationServer};
pub(crate) use compare_traces::{compare_traces, CompareRequest, TraceSource};
pub(crate) use doctor::doctor;
pub(crate) use epilogue::{announce, Finishing};
pub(crate) use exactness::{exactness, ExactnessRequest};
pub(crate) use history::{history, HistoryRequest};
pub(crate) use report::{report, ReportRequest};
pub(crate) use roofline::roofline;
pub(crate) use summarize::{summarize, SummarizeRequest};

use crate::study::file::{StudyFile, StudyKind};
use anyhow::Result;
use std::path::Path;

/// Runs the study `file` describes in `root` (a new one, or `resume`d) to its exit status.
pub(crate) fn study(file: &StudyFile, root: &Path, resume: bool, how: Finishing) -> Result<i32> {
    if file.sweep.is_some() {
        return sweep::finish(file, root, resume, how);
    }
    match &file.kind {
        StudyKind::Ab => ab::finish(file, root, resume, how),
        StudyKind::Trace(_) => trace::finish(file, root, resume, how),
        StudyKind::Pi(section) => pi::finish(file, section, root, resume, how),
    }
}
