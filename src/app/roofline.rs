//! `abprof roofline`: the decode floor — bytes one decode step reads over the measured memory
//! bandwidth (docs/methodology.md §18).
use crate::report::{emit, Format};
use crate::roofline::estimate::{estimate, EstimatePlan};
use anyhow::Result;

pub(crate) fn roofline(plan: &EstimatePlan, format: Format) -> Result<i32> {
    let r = estimate(plan)?;
    emit(&r, format);
    // A bandwidth that could not be measured is a failed run, whatever else printed.
    Ok(if r.bandwidth.is_some() { 0 } else { 1 })
}
