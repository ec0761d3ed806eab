//! Whether a trace holds its decode's kernels (docs/methodology.md §10 "complete traces"). Every
//! decode step of the model runs at least one kernel for each of its layers, so a decode window
//! with fewer dispatches per generated token than the model has layers lost kernels in the
//! tracer: rocprofv3 before ROCm 7.14 records HIP-graph kernels without timestamps
//! (ROCm/rocm-systems#8735), and nsys records a CUDA graph as one launch unless told
//! `--cuda-graph-trace=node`. Such a trace would attribute a decode it never saw, so it is
//! refused, naming the runtime it was taken under.
use super::attribute::Attribution;
use super::manifest::{TraceManifest, Tracer};
use super::TraceError;
use std::path::Path;

/// Tokens one speculative decode step may yield at most (the target's token and its accepted
/// drafts): under speculation the floor is the layers over this.
const SPECULATIVE_TOKENS_PER_STEP: u32 = 4;

/// The least share of a reference's decode dispatches per token a complete trace holds: the
/// same model and build dispatch the same kernels a step whether the graphs are on or off, and a
/// speculative decode's steps per token move with its acceptance by a few percent. Partial loss
/// in the wild falls well below it (448 of 512 graph-replay kernels, 0.875, sglang#35390; 513 of
/// 3,924, 0.13, under HIP graphs before ROCm 7.2.2, ROCm/ROCm#6102).
pub(crate) const REFERENCE_RATIO: f64 = 0.9;

/// A trace's decode dispatches per generated token.
pub(crate) fn dispatches_per_token(a: &Attribution) -> Option<f64> {
    a.per_token_divisor.filter(|t| *t > 0).map(|t| a.decode.calls as f64 / f64::from(t))
}

/// `Ok` when the decode holds at least the floor of dispatches per generated token (where the
/// manifest knows the model's layers; a manifest of an earlier release does not) and at least
/// [`REFERENCE_RATIO`] of its reference's (where it has one).
pub(crate) fn check(a: &Attribution, m: &TraceManifest, path: &Path) -> Result<(), TraceError> {
    check_floor(a, m, path)?;
    let (Some(reference), Some(per_token)) = (&m.dispatch_reference, dispatches_per_token(a)) else { return Ok(()) };
    let ratio = per_token / reference.per_token;
    if ratio >= REFERENCE_RATIO {
        return Ok(());
    }
    Err(TraceError::PartialLoss(Box::new(super::error::PartialLoss {
        path: path.into(),
        per_token,
        reference: reference.per_token,
        from: reference.from.clone(),
        ratio,
        least: REFERENCE_RATIO,
        cause: cause(&m.tracer),
        runtime: m.runtime.clone().unwrap_or_else(|| "not recorded".into()),
    })))
}

fn check_floor(a: &Attribution, m: &TraceManifest, path: &Path) -> Result<(), TraceError> {
    let (Some(layers), Some(tokens)) = (m.model_layers, a.per_token_divisor) else { return Ok(()) };
    let floor = if m.speculation.is_some() { layers.div_ceil(SPECULATIVE_TOKENS_PER_STEP) } else { layers };
    let per_token = a.decode.calls as f64 / f64::from(tokens);
    if per_token >= f64::from(floor) {
        return Ok(());
    }
    Err(TraceError::Incomplete {
        path: path.into(),
        per_token,
        floor,
        layers,
        cause: cause(&m.tracer),
        runtime: m.runtime.clone().unwrap_or_else(|| "not recorded".into()),
    })
}

/// What loses kernels with each tracer, and what to do.
fn cause(t: &Tracer) -> &'static str {
    match t {
        Tracer::Rocprofv3 => {
            "rocprofv3 before ROCm 7.14 records HIP-graph kernels without timestamps (ROCm/rocm-systems#8735): \
             trace under ROCm 7.14 or later, or with the graphs off (GGML_CUDA_DISABLE_GRAPHS=1 in the variant's env=)"
        }
        Tracer::Nsys => {
            "nsys records a CUDA graph as one launch unless run with --cuda-graph-trace=node (abprof trace passes \
             it; a trace taken by hand needs it)"
        }
        Tracer::Other(_) => "the tracer did not record every kernel dispatch",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn each_tracer_names_what_loses_kernels() {
        assert!(cause(&Tracer::Nsys).contains("--cuda-graph-trace=node"));
        assert!(cause(&Tracer::Rocprofv3).contains("ROCm 7.14"));
    }
}
