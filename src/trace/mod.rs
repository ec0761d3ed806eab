//! Kernel traces: read rocprofv3 (rocpd SQLite, kernel_trace CSV) and Nsight Systems (SQLite
//! export) traces of a llama-server request, keep the decode kernels, sort them into
//! categories and put them in ms/token, alone (`abprof attribute`) or against other variants
//! (`abprof compare-traces`).
//!
//! Floors, each using only those below it: [`phase`] (request phases and their windows) →
//! [`kernels`] (per-kernel totals) → [`source`] (the reader trait) → the readers (rocpd, nsys,
//! CSV; SQLite helpers in `sqlite_scan`) → [`detect`] (picks a reader) → [`window`], [`overlap`]
//! → [`attribute`] → [`compare`]. Rendering lives in `crate::report::trace`.
//!
//! Flow: [`resolve_input`] (a file, or an `abprof trace` folder with its [`TraceManifest`]) →
//! [`detect::open_trace`] (format from the content) → [`window::aggregate_with_best_window`]
//! (streaming per-kernel totals by phase) → [`attribute::attribute`] (categories from
//! [`Rules`]) → [`compare::compare`].
pub mod attribute;
pub mod capture;
pub mod categories;
pub mod compare;
pub mod detect;
mod error;
pub mod kernels;
pub mod manifest;
pub mod names;
mod nsys;
pub mod overlap;
pub mod phase;
mod rocpd;
mod rocprof_csv;
pub mod source;
mod sqlite_scan;
pub mod window;

use std::path::{Path, PathBuf};

pub use attribute::Attribution;
pub use categories::Rules;
pub use error::TraceError;
pub use manifest::TraceManifest;

/// A trace to read, and its manifest when it came from an `abprof trace` folder.
#[derive(Debug, Clone)]
pub struct TraceInput {
    pub trace_path: PathBuf,
    pub manifest: Option<TraceManifest>,
}

/// Accepts a trace file, or an `abprof trace` output folder (its `trace.json` names the file).
pub fn resolve_input(path: &Path) -> Result<TraceInput, TraceError> {
    let meta = std::fs::metadata(path).map_err(|source| TraceError::Io { path: path.into(), source })?;
    if !meta.is_dir() {
        return Ok(TraceInput { trace_path: path.into(), manifest: None });
    }
    if !TraceManifest::path_in(path).exists() {
        return Err(TraceError::NotTraceFolder { path: path.into(), detail: "a folder without trace.json".into() });
    }
    let manifest = TraceManifest::load(path)?;
    let trace_path = manifest.trace_path(path);
    if !trace_path.exists() {
        return Err(TraceError::NotTraceFolder {
            path: path.into(),
            detail: format!("trace.json names {} which does not exist", manifest.trace_file.display()),
        });
    }
    Ok(TraceInput { trace_path, manifest: Some(manifest) })
}

/// Reads a trace and attributes its decode kernels; `tokens` (the request's output token count)
/// overrides the manifest's. With `busy` also the decode window's GPU busy time (the union of kernel
/// intervals) and each kernel's exclusive part of it ([`overlap`]), which needs one more pass
/// over the trace in start order. Summed kernel time exceeds wall time when kernels overlap
/// (programmatic dependent launch on Hopper, several streams); "measured − busy" is the honest
/// unattributed remainder.
pub fn analyze_with(
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
    let (agg, choice) = window::aggregate_with_best_window(source.as_ref(), requested, decode_steps)?;
    if agg.total().calls == 0 {
        return Err(TraceError::NoKernels { path: input.trace_path.clone() });
    }
    let facts = attribute::TraceFacts {
        trace: input.trace_path.display().to_string(),
        format: source.describe(),
        output_tokens,
    };
    let overlap =
        if busy { Some(overlap::split(source.as_ref(), choice.decode_start_ns, choice.decode_end_ns)?) } else { None };
    Ok(attribute::attribute(&agg, rules, choice, facts, overlap.as_ref()))
}

#[cfg(test)]
mod tests {
    const DRIVER_LAYERS: [&str; 7] = ["measure", "server", "study", "summary", "cli", "report", "client"];

    /// The top-level modules a source text reaches through `crate::` (`crate::x::...`, `use
    /// crate::{x, y::z}` also across lines), comments left out.
    fn crate_modules(text: &str) -> Vec<String> {
        let code: String = text.lines().map(|l| l.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n");
        let mut found = Vec::new();
        for (at, _) in code.match_indices("crate::") {
            let rest = &code[at + "crate::".len()..];
            let heads: Vec<&str> = match rest.strip_prefix('{') {
                // Only the group's top level names a module of the crate.
                Some(group) => {
                    let mut depth = 0;
                    let end = group
                        .char_indices()
                        .find(|&(_, c)| {
                            match c {
                                '{' => depth += 1,
                                '}' if depth == 0 => return true,
                                '}' => depth -= 1,
                                _ => {}
                            }
                            false
                        })
                        .map_or(group.len(), |(i, _)| i);
                    let mut depth = 0;
                    let mut items = vec![String::new()];
                    for c in group[..end].chars() {
                        match c {
                            '{' => depth += 1,
                            '}' => depth -= 1,
                            ',' if depth == 0 => items.push(String::new()),
                            _ if depth == 0 => items.last_mut().unwrap().push(c),
                            _ => {}
                        }
                    }
                    found.extend(items.iter().map(|i| i.trim().split("::").next().unwrap_or("").to_string()));
                    continue;
                }
                None => vec![rest],
            };
            for h in heads {
                found.push(h.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect());
            }
        }
        found
    }

    #[test]
    fn crate_modules_sees_paths_and_groups() {
        let text = "use crate::stats::median;\nuse crate::{\n    clock::{Stamp, mono},\n    measure,\n};\n// crate::cli in a comment\nlet x = crate::summary::f();";
        assert_eq!(crate_modules(text), ["stats", "clock", "measure", "", "summary"]);
    }

    /// Trace readers and analysis sit below every driver layer (see the floors in lib.rs), so
    /// they can be read, tested and benchmarked without a server. `capture.rs` drives samples and
    /// is the one exception, on its way out of trace/.
    #[test]
    fn readers_and_analysis_import_no_driver_layer() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/trace");
        let mut found = Vec::new();
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|e| e != "rs") || path.file_name().is_some_and(|n| n == "capture.rs") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            for m in crate_modules(&text) {
                if DRIVER_LAYERS.contains(&m.as_str()) {
                    found.push(format!("{}: crate::{m}", path.display()));
                }
            }
        }
        assert!(found.is_empty(), "trace/ imports a driver layer:\n{}", found.join("\n"));
    }
}
