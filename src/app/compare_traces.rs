//! `abprof compare-traces`: which kernel categories moved between variants' traces, in measured
//! ms/token (docs/methodology.md §10), from trace files or a study folder's traces.
use crate::report::{emit, Format};
use crate::study::trace_folder::trace_inputs;
use crate::summary::folder_traces::compare_study_folder;
use crate::summary::traces::compared;
use crate::trace::categories::Rules;
use crate::trace::compare::{self, VariantSpec};
use anyhow::Result;
use std::path::PathBuf;

/// What to compare: an `abprof ab` folder's traces/LABEL/ folders, or traces named one by one.
pub(crate) enum TraceSource {
    Study(PathBuf),
    Traces { specs: Vec<VariantSpec>, tokens: Option<u32> },
}

pub(crate) struct CompareRequest {
    pub(crate) source: TraceSource,
    pub(crate) rules: Rules,
    /// How many moved kernels to list.
    pub(crate) top: usize,
    pub(crate) format: Format,
}

pub(crate) fn compare_traces(r: CompareRequest) -> Result<i32> {
    match r.source {
        TraceSource::Study(dir) => emit(&compare_study_folder(&dir, &r.rules, r.top)?, r.format),
        TraceSource::Traces { specs, tokens } => {
            let comparison = compare::compare_specs(&specs, &trace_inputs, &r.rules, tokens, r.top)?;
            // Folders with several traced samples (`abprof trace --traced N`) get intervals; the
            // rest print as they always did.
            if comparison.variants.iter().any(|v| v.traced_samples > 1) {
                emit(&compared(comparison, None), r.format);
            } else {
                emit(&comparison, r.format);
            }
        }
    }
    Ok(0)
}
