//! `abprof doctor`: the host's checkup printed, its exit status 0 ready or 3 when a finding warns
//! (src/doctor/).
use crate::doctor::{examine, DoctorPlan};
use crate::report::{emit, Format};
use anyhow::Result;

pub(crate) fn doctor(plan: &DoctorPlan, format: Format) -> Result<i32> {
    let checkup = examine(plan);
    emit(&checkup, format);
    Ok(checkup.exit_code())
}
