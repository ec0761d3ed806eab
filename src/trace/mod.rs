//! Kernel traces: read rocprofv3 (rocpd SQLite, kernel_trace CSV) and Nsight Systems (SQLite
//! export) traces of a llama-server request, keep the decode kernels, sort them into
//! categories and put them in ms/token, alone (`abprof attribute`) or against other variants
//! (`abprof compare-traces`).
//!
//! Floors, each using only those below it: [`phase`] (request phases and their windows) →
//! [`kernels`] (per-kernel totals) → [`sweep`] (exclusive time) → [`source`] (the reader trait) → the readers (rocpd, nsys,
//! CSV; SQLite helpers in `sqlite_scan`) → [`detect`] (picks a reader) → [`window`], [`overlap`],
//! [`lanes`] → [`attribute`] → [`compare`]. Rendering lives in `crate::report::trace`.
//!
//! Flow: a [`TraceInput`] (a file, or an `abprof trace` folder's with its [`TraceManifest`], which
//! src/study/trace_folder.rs finds) →
//! [`detect::open_trace`] (format from the content) → [`window::best_window`]
//! (streaming per-kernel totals by phase) → [`attribute::attribute`] (categories from
//! [`Rules`]) → [`compare::compare`].
pub(crate) mod attribute;
pub(crate) mod categories;
pub(crate) mod compare;
pub(crate) mod complete;
pub(crate) mod detect;
mod error;
pub(crate) mod exclusive_sweep;
pub(crate) mod kernels;
pub(crate) mod lanes;
pub(crate) mod manifest;
pub mod names;
mod nsys;
pub(crate) mod overlap;
pub(crate) mod phase;
mod rocpd;
mod rocprof_csv;
pub(crate) mod source;
mod sqlite_raw;
mod sqlite_scan;
pub(crate) mod window;

use std::path::{Path, PathBuf};

pub(crate) use attribute::Attribution;
pub(crate) use categories::Rules;
pub(crate) use error::TraceError;
pub(crate) use manifest::TraceManifest;

/// A trace to read, and its manifest when it came from an `abprof trace` folder.
#[derive(Debug, Clone)]
pub(crate) struct TraceInput {
    pub(crate) trace_path: PathBuf,
    pub(crate) manifest: Option<TraceManifest>,
}

impl TraceInput {
    /// A trace file on its own, with no manifest.
    pub(crate) fn file(path: &Path) -> TraceInput {
        TraceInput { trace_path: path.into(), manifest: None }
    }
}

/// The first traced sample of the `abprof trace` output folder `dir`, whose manifest is
/// `manifest_file` (where the study's layout puts it, src/study/trace_folder.rs): the manifest
/// names the trace file.
pub(crate) fn folder_input(dir: &Path, manifest_file: &Path) -> Result<TraceInput, TraceError> {
    let manifest = TraceManifest::load(manifest_file)?;
    let trace_path = manifest.trace_path(dir);
    if !trace_path.exists() {
        return Err(missing_trace(dir, manifest_file, &manifest.trace_file));
    }
    Ok(TraceInput { trace_path, manifest: Some(manifest) })
}

/// Every traced sample of the `abprof trace` output folder `dir` (one per traced sample, `--traced
/// N`), each with the manifest as if it were the only one.
pub(crate) fn folder_inputs(dir: &Path, manifest_file: &Path) -> Result<Vec<TraceInput>, TraceError> {
    let first = folder_input(dir, manifest_file)?;
    let Some(manifest) = first.manifest.clone().filter(|m| !m.more_traces.is_empty()) else {
        return Ok(vec![first]);
    };
    let mut inputs = Vec::new();
    for run in manifest.runs() {
        let trace_path = dir.join(&run.trace_file);
        if !trace_path.exists() {
            return Err(missing_trace(dir, manifest_file, &run.trace_file));
        }
        inputs.push(TraceInput { trace_path, manifest: Some(manifest.for_run(&run)) });
    }
    Ok(inputs)
}

fn missing_trace(dir: &Path, manifest_file: &Path, trace_file: &Path) -> TraceError {
    let manifest = manifest_file.file_name().unwrap_or_default().to_string_lossy();
    TraceError::NotTraceFolder {
        path: dir.into(),
        detail: format!("{manifest} names {} which does not exist", trace_file.display()),
    }
}

/// Reads a trace and attributes its decode kernels; `tokens` (the request's output token count)
/// overrides the manifest's. With `busy` also the decode window's GPU busy time (the union of kernel
/// intervals) and each kernel's exclusive part of it ([`overlap`]), which needs one more pass
/// over the trace in start order. Summed kernel time exceeds wall time when kernels overlap
/// (programmatic dependent launch on Hopper, several streams); "measured − busy" is the honest
/// unattributed remainder.
pub(crate) fn analyze_with(
    input: &TraceInput,
    rules: &Rules,
    tokens: Option<u32>,
    busy: bool,
) -> Result<Attribution, TraceError> {
    let source = detect::open_trace(&input.trace_path)?;
    let output_tokens = tokens.or(input.manifest.as_ref().map(|m| m.output_tokens));
    let requested = input
        .manifest
        .as_ref()
        .filter(|m| m.tracer.stamps_in_boottime())
        .and_then(|m| m.decode_window.map(|d| phase::PhaseWindows::from_manifest(d, m.prefill_window)));
    let decode_steps = output_tokens.map(|n| n.saturating_sub(1));
    let (agg, choice, overlap) = window::best_window(source.as_ref(), requested, decode_steps, busy)?;
    if agg.total().calls == 0 {
        return Err(TraceError::NoKernels { path: input.trace_path.clone() });
    }
    let (agg, speculation_lanes) = match input.manifest.as_ref().and_then(|m| m.speculation.clone()) {
        Some(asked) => lanes::split(source.as_ref(), agg, choice.windows(requested).as_ref(), asked)?,
        None => (agg, None),
    };
    let facts = attribute::TraceFacts {
        trace: input.trace_path.display().to_string(),
        format: source.describe(),
        output_tokens,
        speculation_lanes,
    };
    let attribution = attribute::attribute(&agg, rules, choice, facts, overlap.as_ref());
    if let Some(m) = &input.manifest {
        complete::check(&attribution, m, &input.trace_path)?;
    }
    Ok(attribution)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The committed rocpd trace of a 9-token decode, its manifest as `abprof trace` writes it now.
    fn input(layers: Option<u32>, speculation: Option<&str>) -> crate::trace::TraceInput {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("traces/rocpd-kv-f16");
        let mut input = folder_input(&dir, &dir.join("trace.json")).unwrap();
        let m = input.manifest.as_mut().unwrap();
        m.model_layers = layers;
        m.speculation = speculation.map(String::from);
        m.runtime = Some("ROCm 7.2.0-43 (HIP 7.2.25342)".into());
        input
    }

    /// The committed trace against a reference of its own count passes; a copy that lost every
    /// other decode dispatch (half its decode kernels, as a tracer dropping graph-replayed
    /// kernels would) is refused naming the ratio, the reference and the runtime, though it
    /// still holds more dispatches a token than the model has layers.
    #[test]
    fn a_trace_cut_to_half_its_decode_kernels_is_refused_against_its_reference() {
        let rules = Rules::builtin();
        let whole = analyze_with(&input(Some(4), None), &rules, None, false).unwrap();
        let per_token = complete::dispatches_per_token(&whole).unwrap();
        let reference = manifest::DispatchReference {
            per_token,
            from: "the traced samples of off (env GGML_CUDA_DISABLE_GRAPHS=1)".into(),
        };
        let mut full = input(Some(4), None);
        full.manifest.as_mut().unwrap().dispatch_reference = Some(reference.clone());
        assert!(analyze_with(&full, &rules, None, false).is_ok(), "a trace at its reference's count");

        let dir = tempfile::tempdir().unwrap();
        let cut = dir.path().join("trace.db");
        std::fs::copy(&full.trace_path, &cut).unwrap();
        let window = full.manifest.as_ref().unwrap().decode_window.unwrap();
        let conn = rusqlite::Connection::open(&cut).unwrap();
        let table: String = conn
            .query_row(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'rocpd_kernel_dispatch_%'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        let gone = conn
            .execute(
                &format!("DELETE FROM \"{table}\" WHERE id % 2 = 0 AND start BETWEEN ?1 AND ?2"),
                rusqlite::params![window.start_ns as i64, window.end_ns as i64],
            )
            .unwrap();
        drop(conn);
        assert!(gone > 0);
        let mut half = full.clone();
        half.trace_path = cut;
        let e = analyze_with(&half, &rules, None, false).unwrap_err();
        let line = e.to_string();
        assert!(matches!(&e, TraceError::PartialLoss(p) if (0.4..0.6).contains(&p.ratio)), "{line}");
        for part in [
            "kernel dispatches per generated token in the decode",
            "of the traced samples of off (env GGML_CUDA_DISABLE_GRAPHS=1)",
            "at least 90%",
            "ROCm 7.2.0-43",
        ] {
            assert!(line.contains(part), "{part}: {line}");
        }
        assert!(!line.contains('\n'), "one line: {line}");
        // The layer floor alone would have let it through: 4 layers, many more dispatches a token.
        let mut floor_only = half.clone();
        floor_only.manifest.as_mut().unwrap().dispatch_reference = None;
        assert!(analyze_with(&floor_only, &rules, None, false).is_ok());
    }

    #[test]
    fn a_decode_with_fewer_dispatches_per_token_than_layers_is_refused_naming_the_runtime() {
        let rules = Rules::builtin();
        let whole = analyze_with(&input(None, None), &rules, None, false).unwrap();
        let per_token = whole.decode.calls as f64 / f64::from(whole.per_token_divisor.unwrap());
        assert!(per_token > 10.0, "the committed decode: {per_token} dispatches a token");
        // A model with as many layers as the trace has dispatches a token, and one more.
        let layers = per_token.floor() as u32;
        assert!(analyze_with(&input(Some(layers), None), &rules, None, false).is_ok());
        let e = analyze_with(&input(Some(layers + 1), None), &rules, None, false).unwrap_err();
        let line = e.to_string();
        assert!(matches!(e, TraceError::Incomplete { .. }), "{line}");
        for part in ["kernel dispatches per generated token", "rocm-systems#8735", "ROCm 7.2.0-43", "trace.db"] {
            assert!(line.contains(part), "{part}: {line}");
        }
        assert!(!line.contains('\n'), "one line: {line}");
        // Under speculation a step yields several tokens: the same trace is complete.
        assert!(analyze_with(&input(Some(layers + 1), Some("draft-mtp")), &rules, None, false).is_ok());
        // A manifest of an earlier release knows no layers: not checked.
        assert!(analyze_with(&input(None, None), &rules, None, false).is_ok());
    }
}
