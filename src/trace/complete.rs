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

/// `Ok` when the manifest does not know the model's layers (a manifest of an earlier release) or
/// the decode holds at least the floor of dispatches per generated token.
pub(crate) fn check(a: &Attribution, m: &TraceManifest, path: &Path) -> Result<(), TraceError> {
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
