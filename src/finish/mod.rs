//! One step from a parsed study command to its end: run the study, judge it, write its summary,
//! print it, record it in the history, write the report, warn of a host left isolated, and the
//! exit status from one table (`Ending::status`). `cli/` builds the study file from its flags
//! and calls [`study`]; each kind's steps are in its own file, the shared ones in `epilogue.rs`.
mod ab;
mod bench;
mod ending;
mod epilogue;
mod exactness;
mod pi;
mod sweep;
mod trace;

pub(crate) use bench::{bench, BenchRequest};
pub(crate) use epilogue::{announce, Finishing};
pub(crate) use exactness::{exactness, ExactnessRequest};

use crate::study::file::{KindSection, StudyFile};
use anyhow::Result;
use std::path::Path;

/// Runs the study `file` describes in `root` (a new one, or `resume`d) to its exit status.
pub(crate) fn study(file: &StudyFile, root: &Path, resume: bool, how: Finishing) -> Result<i32> {
    if file.sweep.is_some() {
        return sweep::finish(file, root, resume, how);
    }
    match file.kind_section() {
        KindSection::Ab(_) => ab::finish(file, root, resume, how),
        KindSection::Trace(_) => trace::finish(file, root, resume, how),
        KindSection::Pi(section) => pi::finish(file, section, root, resume, how),
    }
}
