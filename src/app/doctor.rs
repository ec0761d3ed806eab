//! `abprof doctor`: the host's checkup printed, its exit status 0 ready or 3 when a finding warns
//! (src/doctor/).
use crate::doctor::{examine, Checkup, DoctorPlan};
use crate::report::{emit, Format};
use anyhow::Result;

pub(crate) fn doctor(plan: &DoctorPlan, format: Format, verbose: bool) -> Result<i32> {
    let checkup = Checkup { verbose, ..examine(plan) };
    emit(&checkup, format);
    Ok(checkup.exit_code())
}
