//! K Pi samples of every variant, interleaved like `abprof ab` (balanced blocks, ABBA…), and
//! per-variant medians. Each sample runs under the same conditions as an A/B sample
//! (docs/methodology.md §11): the isolation hooks before it, the idle gate between health and pi,
//! telemetry over the run, and the restore hooks once on every exit path, SIGINT/SIGTERM included.
//! `ROOT/pi.json` is rewritten after every sample, so a study cut short keeps what it measured.
use super::error::PiError;
use super::sample::{run_pi_sample, sample_dir, PiSample, PiSettings, PiSlot};
use crate::measure::SamplePhase;
use crate::schedule::interleaved;
use crate::server::LaunchSpec;
use crate::study::file::{IdleGate, Isolation};
use crate::study::isolation::Hooks;
use crate::study::observer::{open_gpu_source, PhaseSink, StudyObserver, TelemetrySlot};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::Arc;

pub const PI_REPORT_FILE: &str = "pi.json";

/// One variant, ready to launch (port and log paths are set per sample).
#[derive(Debug, Clone)]
pub struct PiVariant {
    pub label: String,
    pub spec: String,
    pub launch: LaunchSpec,
}

/// Medians over a variant's valid samples (a failed sample's speed proves nothing).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PiVariantSummary {
    pub label: String,
    pub spec: String,
    pub samples: usize,
    pub valid: usize,
    pub median_pi_wall_ms: Option<f64>,
    pub median_prefill_ms: Option<f64>,
    pub median_prefill_tps: Option<f64>,
    pub median_decode_ms: Option<f64>,
    pub median_decode_tps: Option<f64>,
    pub median_output_tokens: Option<f64>,
    pub median_acceptance: Option<f64>,
    /// Server prompt token counts seen (one value when the Pi prompt was identical every time).
    pub prompt_tokens: Vec<u64>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PiReport {
    pub schema_version: u32,
    pub created: String,
    pub mode: String,
    pub prompt: String,
    pub pi_bin: PathBuf,
    pub pi_version: Option<String>,
    pub max_tokens: u32,
    pub context_window: u32,
    /// The run order, as labels.
    pub order: Vec<String>,
    pub samples: Vec<PiSample>,
    pub variants: Vec<PiVariantSummary>,
    /// Study-level problems (prompt token counts that differ across samples, …).
    pub warnings: Vec<String>,
    /// The telemetry source the idle gate and series used, and why it was chosen.
    #[serde(default)]
    pub telemetry: String,
    /// The restore and verify hooks ran and succeeded (true when none were declared); `None`
    /// while the study runs.
    #[serde(default)]
    pub restored: Option<bool>,
    /// The signal that stopped the study (2 SIGINT, 15 SIGTERM); its sample in flight was discarded.
    #[serde(default)]
    pub interrupted_by: Option<i32>,
}

fn summarize(v: &PiVariant, samples: &[PiSample]) -> PiVariantSummary {
    let mine: Vec<&PiSample> = samples.iter().filter(|s| s.label == v.label).collect();
    let valid: Vec<&PiSample> = mine.iter().copied().filter(|s| s.valid).collect();
    let of = |f: &dyn Fn(&PiSample) -> Option<f64>| {
        crate::stats::median(&valid.iter().filter_map(|s| f(s)).collect::<Vec<_>>())
    };
    let mut prompt_tokens: Vec<u64> = mine.iter().filter_map(|s| s.server.as_ref().map(|t| t.prompt_tokens)).collect();
    prompt_tokens.sort_unstable();
    prompt_tokens.dedup();
    PiVariantSummary {
        label: v.label.clone(),
        spec: v.spec.clone(),
        samples: mine.len(),
        valid: valid.len(),
        median_pi_wall_ms: of(&|s| Some(s.pi_wall_ms)),
        median_prefill_ms: of(&|s| s.server.as_ref().map(|t| t.prefill_ms)),
        median_prefill_tps: of(&|s| s.server.as_ref().map(|t| t.prefill_tps)),
        median_decode_ms: of(&|s| s.server.as_ref().map(|t| t.decode_ms)),
        median_decode_tps: of(&|s| s.server.as_ref().map(|t| t.decode_tps)),
        median_output_tokens: of(&|s| s.output_tokens().map(|n| n as f64)),
        median_acceptance: of(&|s| s.draft.as_ref().map(|d| d.rate)),
        prompt_tokens,
    }
}

fn warnings(summaries: &[PiVariantSummary]) -> Vec<String> {
    let mut all: Vec<u64> = summaries.iter().flat_map(|s| s.prompt_tokens.iter().copied()).collect();
    all.sort_unstable();
    all.dedup();
    let mut w = Vec::new();
    if all.len() > 1 {
        w.push(format!(
            "server prompt token counts differ across samples ({}): the Pi prompts were not identical, so prefill does not compare",
            all.iter().map(u64::to_string).collect::<Vec<_>>().join(", ")
        ));
    }
    for s in summaries.iter().filter(|s| s.valid == 0) {
        w.push(format!("variant {}: no valid sample, so no medians", s.label));
    }
    w
}

/// `pi --version`, recorded with the study (the Pi version must stay identical across variants).
pub fn pi_version(pi_bin: &Path) -> Result<String, PiError> {
    let out = Command::new(pi_bin).arg("--version").env("PI_OFFLINE", "1").output().map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => PiError::PiMissing(pi_bin.to_path_buf()),
        _ => PiError::PiSpawn { bin: pi_bin.to_path_buf(), source: e },
    })?;
    let text = String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    Ok(text.trim().to_string())
}

/// The conditions every sample runs under, as in `abprof ab`.
#[derive(Debug, Clone, Default)]
pub struct PiConditions {
    pub idle: IdleGate,
    pub isolation: Isolation,
    /// auto, rocm-smi, amdgpu-sysfs, nvml, none.
    pub telemetry: String,
    pub telemetry_hz: u32,
}

/// Everything a Pi study needs.
#[derive(Debug, Clone)]
pub struct PiStudy {
    pub variants: Vec<PiVariant>,
    pub samples: usize,
    pub mode: String,
    pub settings: PiSettings,
    pub conditions: PiConditions,
    pub root: PathBuf,
}

struct NoDisplay;
impl PhaseSink for NoDisplay {
    fn phase(&self, _label: &str, _phase: SamplePhase) {}
}

fn save(report: &PiReport, root: &Path) -> Result<(), PiError> {
    let path = root.join(PI_REPORT_FILE);
    crate::atomic_file::write_json(&path, report).map_err(|e| PiError::Evidence { path, source: e })
}

/// Runs the study; `progress` sees every sample as it finishes. A signal stops the sample in
/// flight (pi's process group, then the server), restores, and returns the report with
/// `interrupted_by` set.
pub async fn run_pi_study(study: &PiStudy, progress: &mut dyn FnMut(&PiSample)) -> Result<PiReport, PiError> {
    if study.samples == 0 {
        return Err(PiError::NoSamples);
    }
    study.conditions.isolation.check().map_err(|e| PiError::Isolation(e.to_string()))?;
    std::fs::create_dir_all(&study.root).map_err(|e| PiError::Evidence { path: study.root.clone(), source: e })?;
    let (gpu, telemetry) = open_gpu_source(&study.conditions.telemetry).map_err(PiError::Telemetry)?;
    let mut slot = TelemetrySlot { gpu, hz: f64::from(study.conditions.telemetry_hz.max(1)) };
    let hooks = Arc::new(Hooks::new(&study.root, &study.conditions.isolation));
    let restore = hooks.restore_guard();

    let signal = Arc::new(AtomicI32::new(0));
    let cancel = Arc::new(AtomicBool::new(false));
    let listener = {
        use tokio::signal::unix::{signal as on, SignalKind};
        let mut int =
            on(SignalKind::interrupt()).map_err(|e| PiError::Evidence { path: study.root.clone(), source: e })?;
        let mut term =
            on(SignalKind::terminate()).map_err(|e| PiError::Evidence { path: study.root.clone(), source: e })?;
        let (signal, cancel) = (signal.clone(), cancel.clone());
        tokio::spawn(async move {
            let n = tokio::select! { _ = int.recv() => 2, _ = term.recv() => 15 };
            signal.store(n, Ordering::SeqCst);
            cancel.store(true, Ordering::SeqCst);
        })
    };

    let order = interleaved(study.variants.len(), study.samples, None);
    let mut report = PiReport {
        schema_version: 1,
        created: chrono::Local::now().to_rfc3339(),
        mode: study.mode.clone(),
        prompt: study.settings.prompt.clone(),
        pi_bin: study.settings.pi_bin.clone(),
        pi_version: Some(pi_version(&study.settings.pi_bin)?),
        max_tokens: study.settings.model.max_tokens,
        context_window: study.settings.model.context_window,
        order: order.iter().map(|s| study.variants[s.variant].label.clone()).collect(),
        samples: Vec::new(),
        variants: Vec::new(),
        warnings: Vec::new(),
        telemetry,
        restored: None,
        interrupted_by: None,
    };
    let result = async {
        for o in &order {
            if cancel.load(Ordering::SeqCst) {
                return Err(PiError::Interrupted);
            }
            let v = &study.variants[o.variant];
            hooks.before().map_err(PiError::Isolation)?;
            let dir = sample_dir(&study.root, &v.label, o.repeat);
            let mut observer = StudyObserver::new(&v.label, &study.conditions.idle, &NoDisplay, &mut slot, dir);
            let pi_slot = PiSlot { index: o.index, label: &v.label, repeat: o.repeat };
            let sample =
                run_pi_sample(pi_slot, &v.launch, &study.settings, &study.root, &mut observer, &cancel).await?;
            progress(&sample);
            report.samples.push(sample);
            report.variants = study.variants.iter().map(|v| summarize(v, &report.samples)).collect();
            report.warnings = warnings(&report.variants);
            save(&report, &study.root)?;
        }
        Ok(())
    }
    .await;
    listener.abort();
    report.restored = Some(restore.finish());
    match result {
        Err(PiError::Interrupted) => report.interrupted_by = Some(signal.load(Ordering::SeqCst)),
        Err(e) => {
            save(&report, &study.root)?;
            return Err(e);
        }
        Ok(()) => {}
    }
    save(&report, &study.root)?;
    Ok(report)
}
