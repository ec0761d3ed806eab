//! K Pi samples of every variant, interleaved like `abprof ab` (balanced blocks, ABBA…), and
//! per-variant medians. `ROOT/pi.json` is rewritten after every sample, so a study cut short
//! keeps what it measured.
use super::error::PiError;
use super::sample::{run_pi_sample, PiSample, PiSettings};
use crate::server::LaunchSpec;
use crate::schedule::interleaved;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::process::Command;

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
}

fn summarize(v: &PiVariant, samples: &[PiSample]) -> PiVariantSummary {
    let mine: Vec<&PiSample> = samples.iter().filter(|s| s.label == v.label).collect();
    let valid: Vec<&PiSample> = mine.iter().copied().filter(|s| s.valid).collect();
    let of = |f: &dyn Fn(&PiSample) -> Option<f64>| crate::stats::median(&valid.iter().filter_map(|s| f(s)).collect::<Vec<_>>());
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
    let out = Command::new(pi_bin)
        .arg("--version")
        .env("PI_OFFLINE", "1")
        .output()
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => PiError::PiMissing(pi_bin.to_path_buf()),
            _ => PiError::PiSpawn { bin: pi_bin.to_path_buf(), source: e },
        })?;
    let text = String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    Ok(text.trim().to_string())
}

/// Everything a Pi study needs.
#[derive(Debug, Clone)]
pub struct PiStudy {
    pub variants: Vec<PiVariant>,
    pub samples: usize,
    pub mode: String,
    pub settings: PiSettings,
    pub root: PathBuf,
}

fn save(report: &PiReport, root: &Path) -> Result<(), PiError> {
    let path = root.join(PI_REPORT_FILE);
    let tmp = root.join(".pi.json.tmp");
    let err = |e| PiError::Evidence { path: path.clone(), source: e };
    std::fs::write(&tmp, serde_json::to_string_pretty(report).expect("serializable") + "\n").map_err(err)?;
    std::fs::rename(&tmp, &path).map_err(|e| PiError::Evidence { path: path.clone(), source: e })
}

/// Runs the study; `progress` sees every sample as it finishes.
pub async fn run_pi_study(study: &PiStudy, progress: &mut dyn FnMut(&PiSample)) -> Result<PiReport, PiError> {
    if study.samples == 0 {
        return Err(PiError::NoSamples);
    }
    std::fs::create_dir_all(&study.root).map_err(|e| PiError::Evidence { path: study.root.clone(), source: e })?;
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
    };
    for slot in &order {
        let v = &study.variants[slot.variant];
        let sample = run_pi_sample(slot.index, &v.label, slot.repeat, &v.launch, &study.settings, &study.root).await?;
        progress(&sample);
        report.samples.push(sample);
        report.variants = study.variants.iter().map(|v| summarize(v, &report.samples)).collect();
        report.warnings = warnings(&report.variants);
        save(&report, &study.root)?;
    }
    Ok(report)
}
