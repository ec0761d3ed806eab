//! The manifest (`trace.json`, named by src/study/layout.rs, which places it in an `abprof trace`
//! output folder): what the folder holds besides the trace itself — which
//! variant was traced, the request's token counts, its prefill and decode windows in
//! CLOCK_BOOTTIME (the clock rocprofv3 stamps kernels with) and the untraced samples whose
//! median ms/token scales the trace.
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::phase::BootWindow;

#[derive(Debug, thiserror::Error)]
pub(crate) enum ManifestError {
    #[error("{p}: {source}: is this an `abprof trace` output folder?", p = .path.display())]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{p}: {source}: the manifest is damaged; re-run `abprof trace`", p = .path.display())]
    Parse { path: PathBuf, source: serde_json::Error },
    #[error("{p}: {source}: check the folder is writable", p = .path.display())]
    Write { path: PathBuf, source: std::io::Error },
    #[error(
        "variant {label}: traced sample {} arrived with {recorded} recorded: the capture's plan.json was edited; \
         start the capture again in a new folder",
        repeat + 1
    )]
    OutOfOrder { label: String, repeat: usize, recorded: usize },
}

/// Which tracer wrote the trace file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "String", into = "String")]
pub(crate) enum Tracer {
    Rocprofv3,
    Nsys,
    Other(String),
}

impl Tracer {
    /// Whether the trace's timestamps are CLOCK_BOOTTIME, the clock the manifest's windows are
    /// recorded in. nsys exports count from the session's start, so those windows cannot match.
    pub(crate) fn stamps_in_boottime(&self) -> bool {
        !matches!(self, Tracer::Nsys)
    }
}

impl From<String> for Tracer {
    fn from(s: String) -> Tracer {
        match s.as_str() {
            "rocprofv3" => Tracer::Rocprofv3,
            "nsys" => Tracer::Nsys,
            _ => Tracer::Other(s),
        }
    }
}

impl From<Tracer> for String {
    fn from(t: Tracer) -> String {
        match t {
            Tracer::Rocprofv3 => "rocprofv3".into(),
            Tracer::Nsys => "nsys".into(),
            Tracer::Other(s) => s,
        }
    }
}

/// Untraced runs of the same variant at the same output length: a tracer slows decode, so the
/// trace gives shares and these give the ms/token the shares are scaled by.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct UntracedSamples {
    /// Output length of these runs; must equal the trace's for the scaling to mean anything.
    pub(crate) output_tokens: u32,
    pub(crate) ms_per_token: Vec<f64>,
    pub(crate) median_ms_per_token: f64,
}

impl UntracedSamples {
    /// Fills in the median (the mean of the middle two for an even count).
    pub(crate) fn from_samples(output_tokens: u32, ms_per_token: Vec<f64>) -> Option<UntracedSamples> {
        let median_ms_per_token = crate::stats::median(&ms_per_token)?;
        Some(UntracedSamples { output_tokens, ms_per_token, median_ms_per_token })
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct TraceManifest {
    pub(crate) label: String,
    /// The variant spec as given on the command line (`label=binary|kv=TYPE|env=…`).
    pub(crate) variant: String,
    pub(crate) tracer: Tracer,
    /// The trace file, relative to the folder holding this manifest.
    pub(crate) trace_file: PathBuf,
    pub(crate) prompt_tokens: u32,
    pub(crate) output_tokens: u32,
    /// First → last streamed token, CLOCK_BOOTTIME ns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) decode_window: Option<BootWindow>,
    /// Request sent → first streamed token, CLOCK_BOOTTIME ns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) prefill_window: Option<BootWindow>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) untraced: Option<UntracedSamples>,
    pub(crate) created_at: DateTime<Utc>,
    /// The traced sample's own decode ms/token (its server log): against the untraced samples',
    /// the tracer's overhead. Absent in manifests of earlier releases.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) traced_ms_per_token: Option<f64>,
    /// The traced samples after the first (`abprof trace --traced N`), in the order they ran;
    /// the fields above describe the first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) more_traces: Vec<TracedRun>,
    /// The speculative decoding the traced server's command line asked for (`--spec-type
    /// draft-mtp`, `-md FILE`): its draft context's lanes are told apart (docs/methodology.md
    /// §10.2). Absent without speculation and in manifests of earlier releases.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) speculation: Option<String>,
    /// The model's layer count, as the traced server's log printed it (`n_layer`): every decode
    /// step runs at least one kernel a layer, so a decode with fewer dispatches per generated
    /// token lost kernels in the tracer (docs/methodology.md §10 "complete traces"). Absent in
    /// manifests of earlier releases, which are then not checked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) model_layers: Option<u32>,
    /// The GPU runtime the trace was taken under (the CUDA driver's version, ROCm's and HIP's),
    /// as the study's power state (host.json) read it: what a refused trace names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) runtime: Option<String>,
    /// The runtime libraries the traced server mapped (docs/methodology.md §2.2). Absent in
    /// manifests of earlier releases and where the server mapped none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) runtime_libraries: Option<crate::runtime_libraries::LoadedRuntime>,
    /// The decode dispatches per generated token of a complete trace of the same model (the
    /// reference variant's, traced with the graphs off: `abprof trace --dispatch-reference`):
    /// a trace below [`super::complete::REFERENCE_RATIO`] of it lost kernels (docs/methodology.md
    /// §10 "complete traces"). Absent without a reference.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) dispatch_reference: Option<DispatchReference>,
}

/// A reference count of decode dispatches per generated token, and where it came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct DispatchReference {
    pub(crate) per_token: f64,
    /// What it was counted in, e.g. "the traced samples of off (env GGML_CUDA_DISABLE_GRAPHS=1)".
    pub(crate) from: String,
}

/// One more traced sample of the same variant: its trace and windows, as for the first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct TracedRun {
    /// Relative to the folder holding the manifest.
    pub(crate) trace_file: PathBuf,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) decode_window: Option<BootWindow>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) prefill_window: Option<BootWindow>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) traced_ms_per_token: Option<f64>,
}

impl TraceManifest {
    /// Reads the manifest at `path` (an `abprof trace` folder's, which the study's layout finds).
    pub(crate) fn load(path: &Path) -> Result<TraceManifest, ManifestError> {
        let path = path.to_path_buf();
        let text =
            std::fs::read_to_string(&path).map_err(|source| ManifestError::Read { path: path.clone(), source })?;
        serde_json::from_str(&text).map_err(|source| ManifestError::Parse { path, source })
    }

    /// Writes the manifest to `path` through a temporary file, so a reader never sees half of it.
    pub(crate) fn save(&self, path: &Path) -> Result<(), ManifestError> {
        let path = path.to_path_buf();
        crate::atomic_file::write_json(&path, self).map_err(|source| ManifestError::Write { path, source })
    }

    pub(crate) fn trace_path(&self, dir: &Path) -> PathBuf {
        dir.join(&self.trace_file)
    }

    /// Every traced sample, the first included, in the order they ran.
    pub(crate) fn runs(&self) -> Vec<TracedRun> {
        let first = TracedRun {
            trace_file: self.trace_file.clone(),
            decode_window: self.decode_window,
            prefill_window: self.prefill_window,
            traced_ms_per_token: self.traced_ms_per_token,
        };
        std::iter::once(first).chain(self.more_traces.iter().cloned()).collect()
    }

    /// The manifest as if `run` were its only traced sample: what one attribution reads.
    pub(crate) fn for_run(&self, run: &TracedRun) -> TraceManifest {
        TraceManifest {
            trace_file: run.trace_file.clone(),
            decode_window: run.decode_window,
            prefill_window: run.prefill_window,
            traced_ms_per_token: run.traced_ms_per_token,
            more_traces: Vec::new(),
            ..self.clone()
        }
    }

    /// Records traced sample `repeat` (0 = the first, whose fields are the manifest's own).
    pub(crate) fn set_run(&mut self, repeat: usize, run: TracedRun) -> Result<(), ManifestError> {
        if repeat == 0 {
            (self.trace_file, self.decode_window, self.prefill_window, self.traced_ms_per_token) =
                (run.trace_file, run.decode_window, run.prefill_window, run.traced_ms_per_token);
            return Ok(());
        }
        // The driver takes traced samples in order, so the one before is always recorded.
        if self.more_traces.len() < repeat - 1 {
            return Err(ManifestError::OutOfOrder {
                label: self.label.clone(),
                repeat,
                recorded: self.more_traces.len() + 1,
            });
        }
        self.more_traces.truncate(repeat - 1);
        self.more_traces.push(run);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> TraceManifest {
        TraceManifest {
            label: "q8".into(),
            variant: "q8=/opt/llama/bin/llama-server|kv=q8_0".into(),
            tracer: Tracer::Rocprofv3,
            trace_file: "run_results.db".into(),
            prompt_tokens: 808,
            output_tokens: 512,
            decode_window: Some(BootWindow { start_ns: 10, end_ns: 20 }),
            prefill_window: None,
            untraced: UntracedSamples::from_samples(512, vec![16.9, 17.02, 16.945]),
            created_at: "2026-08-02T10:00:00Z".parse().unwrap(),
            traced_ms_per_token: None,
            more_traces: Vec::new(),
            speculation: None,
            model_layers: None,
            runtime: None,
            runtime_libraries: None,
            dispatch_reference: None,
        }
    }

    #[test]
    fn more_traced_samples_are_recorded_in_order_and_read_back_one_by_one() {
        let mut m = sample();
        let run = |n: u64| TracedRun {
            trace_file: format!("tracer-out-{n}/run_results.db").into(),
            decode_window: Some(BootWindow { start_ns: n, end_ns: n + 10 }),
            prefill_window: None,
            traced_ms_per_token: Some(17.0 + n as f64),
        };
        assert!(matches!(m.set_run(2, run(3)), Err(ManifestError::OutOfOrder { repeat: 2, recorded: 1, .. })));
        m.set_run(1, run(2)).unwrap();
        m.set_run(2, run(3)).unwrap();
        // A traced sample taken again (resume) replaces its record.
        m.set_run(2, run(3)).unwrap();
        let runs = m.runs();
        assert_eq!(runs.len(), 3);
        assert_eq!(runs[0].trace_file, PathBuf::from("run_results.db"));
        assert_eq!(runs[2], run(3));
        let one = m.for_run(&runs[1]);
        assert_eq!(
            (one.trace_file.clone(), one.decode_window, one.more_traces.len()),
            (runs[1].trace_file.clone(), run(2).decode_window, 0)
        );
        assert_eq!(one.untraced, m.untraced);
        let dir = tempfile::tempdir().unwrap();
        m.save(&dir.path().join("trace.json")).unwrap();
        assert_eq!(TraceManifest::load(&dir.path().join("trace.json")).unwrap(), m);
    }

    /// A trace.json written before `--traced N`: one traced sample, no traced ms/token.
    #[test]
    fn a_manifest_of_an_earlier_release_is_one_traced_sample() {
        let m =
            TraceManifest::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("traces/rocpd-kv-f16/trace.json")).unwrap();
        assert_eq!(m.runs().len(), 1);
        assert_eq!(m.traced_ms_per_token, None);
    }

    #[test]
    fn round_trips_through_the_folder() {
        let dir = tempfile::tempdir().unwrap();
        let m = sample();
        m.save(&dir.path().join("trace.json")).unwrap();
        assert_eq!(TraceManifest::load(&dir.path().join("trace.json")).unwrap(), m);
        assert_eq!(m.trace_path(dir.path()), dir.path().join("run_results.db"));
        assert_eq!(m.untraced.as_ref().unwrap().median_ms_per_token, 16.945);
        let text = std::fs::read_to_string(dir.path().join("trace.json")).unwrap();
        assert!(text.contains("\"tracer\": \"rocprofv3\"") && !text.contains("prefill_window"), "{text}");
    }

    #[test]
    fn unknown_tracers_are_kept_and_medians_of_even_counts_average() {
        assert_eq!(Tracer::from("omnitrace".to_string()), Tracer::Other("omnitrace".into()));
        assert_eq!(UntracedSamples::from_samples(8, vec![1.0, 4.0, 2.0, 3.0]).unwrap().median_ms_per_token, 2.5);
        assert!(UntracedSamples::from_samples(8, vec![]).is_none());
    }

    #[test]
    fn a_missing_manifest_says_what_folder_was_expected() {
        let dir = tempfile::tempdir().unwrap();
        let e = TraceManifest::load(&dir.path().join("trace.json")).unwrap_err();
        assert!(e.to_string().contains("abprof trace"), "{e}");
    }
}
