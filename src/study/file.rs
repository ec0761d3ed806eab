//! The study file: everything that defines an A/B study, in TOML. `abprof ab` flags build one,
//! `abprof ab --study FILE` reads one, and every study writes the one it ran into its evidence
//! folder, so any study can be re-run exactly.
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use thiserror::Error;

/// Output lengths of the workloads (docs/methodology.md §4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Workload {
    /// 128 tokens: a fast go/no-go; a loser here is dead, a winner not yet proven.
    Screening,
    /// 1024 tokens: the acceptance gate.
    Sustained,
    /// 512 tokens: pairs with a kernel trace of the same length.
    TraceMatched,
}

impl Workload {
    pub(crate) fn tokens(self) -> u32 {
        match self {
            Workload::Screening => 128,
            Workload::Sustained => 1024,
            Workload::TraceMatched => 512,
        }
    }
}

/// A command abprof runs without a shell: an argv array, or a string split like a shell splits
/// words (`"systemctl stop qwen-mtp.service"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub(crate) enum HookCommand {
    Argv(Vec<String>),
    Line(String),
}

impl HookCommand {
    pub(crate) fn argv(&self) -> Option<Vec<String>> {
        match self {
            HookCommand::Argv(v) => (!v.is_empty()).then(|| v.clone()),
            HookCommand::Line(s) => shlex::split(s).filter(|v| !v.is_empty()),
        }
    }
}

/// Isolation: what to run before every sample (stop other GPU services, set a power profile),
/// after the study on every exit path (restore), and to verify the restore.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Isolation {
    #[serde(default)]
    pub(crate) before: Vec<HookCommand>,
    #[serde(default)]
    pub(crate) after: Vec<HookCommand>,
    #[serde(default)]
    pub(crate) verify: Vec<HookCommand>,
    /// Seconds one hook may run before abprof kills it (its own child).
    #[serde(default = "default_hook_timeout")]
    pub(crate) timeout_s: u64,
}

fn default_hook_timeout() -> u64 {
    120
}

impl Isolation {
    /// Every hook splits into a program and its arguments (they run without a shell).
    pub(crate) fn check(&self) -> Result<(), StudyFileError> {
        for h in self.before.iter().chain(&self.after).chain(&self.verify) {
            if h.argv().is_none() {
                return Err(StudyFileError::BadHook(format!("{h:?}")));
            }
        }
        Ok(())
    }
}

/// No hooks; the file format's hook timeout (a derived default would be 0 s).
impl Default for Isolation {
    fn default() -> Self {
        Isolation { before: Vec::new(), after: Vec::new(), verify: Vec::new(), timeout_s: default_hook_timeout() }
    }
}

/// The idle gate: N consecutive idle telemetry samples before each request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IdleGate {
    #[serde(default = "default_consecutive")]
    pub(crate) consecutive: u32,
    /// GPU busy % at or below which a sample counts as idle.
    #[serde(default = "default_busy")]
    pub(crate) busy_max_pct: f64,
    /// GPU power at or below which a sample counts as idle (unset: power is not gated).
    #[serde(default)]
    pub(crate) power_max_w: Option<f64>,
    /// On GPU-less hosts: the server's CPU use at or below which a sample counts as idle.
    #[serde(default = "default_cpu")]
    pub(crate) cpu_max_pct: f64,
    /// A sample is rejected when processes other than the server and abprof used more than this
    /// (% of one core) during its request: "nothing else was running" must hold.
    #[serde(default = "default_foreign")]
    pub(crate) foreign_cpu_max_pct: f64,
    /// Milliseconds between gate samples on GPU-less hosts (the server's CPU window). GPU readings
    /// are taken at least 100 ms apart, the rate NVML and the SMU refresh at.
    #[serde(default = "default_interval")]
    pub(crate) interval_ms: u64,
    /// Give up (and reject the sample) after this many seconds.
    #[serde(default = "default_gate_timeout")]
    pub(crate) timeout_s: u64,
}

pub(crate) fn default_consecutive() -> u32 {
    10
}
fn default_busy() -> f64 {
    5.0
}
fn default_cpu() -> f64 {
    5.0
}
/// Calibrated on the 2-core test bed (docs/methodology.md §7.7): a quiet host measured 0–12%.
fn default_foreign() -> f64 {
    50.0
}
fn default_interval() -> u64 {
    2
}
fn default_gate_timeout() -> u64 {
    120
}

impl Default for IdleGate {
    fn default() -> Self {
        IdleGate {
            consecutive: default_consecutive(),
            busy_max_pct: default_busy(),
            power_max_w: None,
            cpu_max_pct: default_cpu(),
            foreign_cpu_max_pct: default_foreign(),
            interval_ms: default_interval(),
            timeout_s: default_gate_timeout(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StudyFile {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The model every variant runs unless its spec says `model=`.
    pub model: PathBuf,
    /// Server arguments common to every variant, split like a shell would.
    #[serde(default)]
    pub server_args: String,
    /// Output tokens per request (`max_tokens`); absent only where `[sweep] tokens` gives them.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub tokens: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workload: Option<Workload>,
    /// Cold samples per variant (with `until_ci_pct`: the first blocks, before precision is judged).
    pub samples: u32,
    /// Adaptive sample counts: add interleaved blocks until every candidate's decode interval is
    /// narrower than ± this many % (docs/methodology.md §17)…
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until_ci_pct: Option<f64>,
    /// …or each variant has this many samples (default [`DEFAULT_MAX_SAMPLES`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_samples: Option<u32>,
    /// Sequential verdicts (`--until-decided`, docs/methodology.md §17): add blocks until every
    /// candidate's decode interval excludes 0 or lies inside ± `mei_pct`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub until_decided: bool,
    /// The minimum effect of interest, %: an interval inside ± it is the verdict "same" (§8).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mei_pct: Option<f64>,
    /// Variant specs; the first is the baseline.
    pub variants: Vec<String>,
    /// A calibrated prompt file…
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<PathBuf>,
    /// …and/or its exact token count (with no prompt file: calibrate once on the baseline).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_tokens: Option<u64>,
    /// Send llama-server's `ignore_eos` so every request decodes exactly `tokens`.
    #[serde(default)]
    pub ignore_eos: bool,
    /// Warm the prompt cache first, then time decode with the full-length KV in place.
    #[serde(default)]
    pub pure_decode: bool,
    /// Fixed loopback port (default: a free one picked once for the whole study).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<u16>,
    /// Shuffle within each balanced block with this seed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order_seed: Option<u64>,
    #[serde(default = "default_health_timeout")]
    pub health_timeout_s: u64,
    /// Seconds without a byte from the server that end a streamed request as stalled
    /// (docs/methodology.md §2); absent in study files written before it existed.
    #[serde(default = "default_stall_timeout")]
    pub stall_timeout_s: u64,
    /// Seconds a server may take to exit after its SIGTERM before its process group gets SIGKILL
    /// (docs/methodology.md §2 step 7).
    #[serde(default = "default_stop_timeout")]
    pub stop_timeout_s: u64,
    /// `auto`, `rocm-smi`, `amdgpu-sysfs`, `nvml`, `none`.
    #[serde(default = "default_telemetry")]
    pub telemetry: String,
    /// Telemetry sampling rate during each request.
    #[serde(default = "default_hz")]
    pub telemetry_hz: u32,
    #[serde(default)]
    pub idle: IdleGate,
    #[serde(default)]
    pub isolation: Isolation,
    /// The load is the real Pi agent instead of one chat request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pi: Option<PiSection>,
    /// One sample of every variant runs under this kernel tracer first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<TraceSection>,
    /// A sweep: one whole study per combination of these values (docs/methodology.md §16).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sweep: Option<super::sweep::SweepSection>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// The sample count an adaptive study stops at when its study gives none.
pub(crate) const DEFAULT_MAX_SAMPLES: u32 = 20;

/// A Pi study: what every Pi sample runs (docs/methodology.md §11).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PiSection {
    pub(crate) pi_bin: PathBuf,
    /// The workload's name (`decode`, …) as recorded in the report.
    pub(crate) mode: String,
    pub(crate) prompt: String,
    /// Bound on one whole pi process.
    pub(crate) timeout_s: u64,
    /// Pi's maxTokens and contextWindow for the model.
    pub(crate) max_tokens: u32,
    pub(crate) context_window: u32,
    pub(crate) python: PathBuf,
    pub(crate) code_timeout_s: u64,
}

/// A trace study: the tracer wrapping each variant's traced sample.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceSection {
    pub(crate) tracer: super::trace_capture::TracerCommand,
    /// Seconds to wait for the tracer to write its output after the one SIGTERM (never killed).
    pub(crate) finalize_timeout_s: u64,
    /// Traced samples per variant (`--traced N`), interleaved with the untraced ones; absent in
    /// study files of earlier releases, which took one.
    #[serde(default = "one_traced", skip_serializing_if = "is_one_traced")]
    pub(crate) traced: u32,
}

fn one_traced() -> u32 {
    1
}

fn is_one_traced(n: &u32) -> bool {
    *n == 1
}

pub(crate) fn default_health_timeout() -> u64 {
    600
}
pub(crate) fn default_stall_timeout() -> u64 {
    crate::client::DEFAULT_STALL_TIMEOUT_S
}
pub(crate) fn default_stop_timeout() -> u64 {
    60
}
pub(crate) fn default_telemetry() -> String {
    "auto".into()
}
pub(crate) fn default_hz() -> u32 {
    100
}

#[derive(Debug, Error)]
pub(crate) enum StudyFileError {
    #[error("cannot read study file {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("study file {path} is not valid: {message}")]
    Parse { path: PathBuf, message: String },
    #[error("study needs {0}")]
    Missing(&'static str),
    #[error("study file contradicts itself: {0}")]
    Contradiction(String),
    #[error("hook {0:?} cannot be split like a shell would (unbalanced quotes?) or is empty")]
    BadHook(String),
}

impl StudyFile {
    pub(crate) fn load(path: &Path) -> Result<StudyFile, StudyFileError> {
        let text = std::fs::read_to_string(path).map_err(|e| StudyFileError::Read { path: path.into(), source: e })?;
        let f: StudyFile = toml::from_str(&text).map_err(|e| StudyFileError::Parse {
            path: path.into(),
            message: e.to_string().lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join(" "),
        })?;
        f.check()?;
        Ok(f)
    }

    /// Relative paths taken from `base` made absolute, so the copy in the evidence folder re-runs
    /// from anywhere.
    pub(crate) fn with_paths_from(mut self, base: &Path) -> StudyFile {
        let absolute = |p: &Path| if p.is_absolute() { p.to_path_buf() } else { base.join(p) };
        self.prompt = self.prompt.as_deref().map(absolute);
        self.model = absolute(&self.model);
        self
    }

    pub(crate) fn to_toml(&self) -> String {
        toml::to_string_pretty(self).expect("a study file always serializes")
    }

    /// The sample count an adaptive study stops at.
    pub(crate) fn max_samples(&self) -> u32 {
        self.max_samples.unwrap_or(DEFAULT_MAX_SAMPLES)
    }

    /// A study that adds blocks by a rule: `until_ci_pct` or `until_decided`.
    pub(crate) fn is_adaptive(&self) -> bool {
        self.until_ci_pct.is_some() || self.until_decided
    }

    fn check_adaptive(&self) -> Result<(), StudyFileError> {
        if let Some(m) = self.mei_pct {
            if !(m.is_finite() && m > 0.0) {
                return Err(StudyFileError::Missing("mei_pct > 0 (the minimum effect of interest, in %)"));
            }
        }
        let pct = match (self.until_ci_pct, self.until_decided) {
            (Some(p), _) => p,
            (None, true) => 1.0,
            (None, false) => {
                return match self.max_samples {
                    Some(_) => Err(StudyFileError::Contradiction(
                        "max_samples bounds an adaptive study: give until_ci_pct too (or until_decided), or drop max_samples".into(),
                    )),
                    None => Ok(()),
                }
            }
        };
        if !(pct.is_finite() && pct > 0.0) {
            return Err(StudyFileError::Missing("until_ci_pct > 0 (the half width, in %, of the interval wanted)"));
        }
        if self.pi.is_some() || self.trace.is_some() {
            return Err(StudyFileError::Contradiction(
                "until_ci_pct judges decode TPS of an A/B study: a Pi or trace study takes a fixed sample count".into(),
            ));
        }
        if self.samples < 2 {
            return Err(StudyFileError::Missing("samples >= 2 with until_ci_pct (an interval needs 2 a side)"));
        }
        if self.max_samples() < self.samples {
            return Err(StudyFileError::Contradiction(format!(
                "max_samples = {} is below samples = {}: the first blocks already take more",
                self.max_samples(),
                self.samples
            )));
        }
        Ok(())
    }

    pub(crate) fn check(&self) -> Result<(), StudyFileError> {
        if self.variants.is_empty() {
            return Err(StudyFileError::Missing("at least one variant"));
        }
        if self.samples == 0 {
            return Err(StudyFileError::Missing("samples >= 1"));
        }
        let sweep = self.sweep.as_ref();
        if let Some(sweep) = sweep {
            sweep.check(self)?;
        }
        if self.tokens < 2 && sweep.is_none_or(|s| s.tokens.is_empty()) {
            return Err(StudyFileError::Missing("tokens >= 2 (decode TPS needs two output tokens)"));
        }
        if self.pi.is_none()
            && self.prompt.is_none()
            && self.prompt_tokens.is_none()
            && sweep.is_none_or(|s| s.prompt_tokens.is_empty())
        {
            return Err(StudyFileError::Missing("a prompt file or prompt_tokens"));
        }
        self.check_adaptive()?;
        // The flag has clap's range; a study file is checked here, so the driver never clamps.
        if self.telemetry_hz == 0 {
            return Err(StudyFileError::Missing("telemetry_hz >= 1"));
        }
        if let Some(w) = self.workload.filter(|w| w.tokens() != self.tokens) {
            return Err(StudyFileError::Contradiction(format!(
                "workload {w:?} means {} output tokens, but tokens = {}: drop one of them",
                w.tokens(),
                self.tokens
            )));
        }
        self.isolation.check()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_reads_hooks_both_ways() {
        let text = r#"
model = "/m.gguf"
server_args = "-c 4096 -t 2"
tokens = 128
samples = 3
variants = ["A=/bin/a", "B=/bin/b|kv=q8_0"]
prompt_tokens = 2000
[isolation]
before = [["systemctl", "stop", "gemma.service"], "powerprofilesctl set performance"]
after = ["systemctl start gemma.service"]
verify = [["curl", "-sf", "http://127.0.0.1:8002/health"]]
[idle]
consecutive = 10
busy_max_pct = 0
power_max_w = 15.0
"#;
        let f: StudyFile = toml::from_str(text).unwrap();
        f.check().unwrap();
        assert_eq!(f.isolation.before[1].argv().unwrap(), vec!["powerprofilesctl", "set", "performance"]);
        assert_eq!(f.idle.power_max_w, Some(15.0));
        assert_eq!(f.telemetry, "auto");
        let again: StudyFile = toml::from_str(&f.to_toml()).unwrap();
        assert_eq!(again, f);
    }

    #[test]
    fn the_shipped_example_study_parses() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/examples/qwen-mtp-strix-halo.toml");
        let f = StudyFile::load(&path).unwrap();
        assert_eq!((f.tokens, f.samples, f.workload), (1024, 3, Some(Workload::Sustained)));
        assert_eq!(f.isolation.before.len(), 2);
        assert_eq!(f.isolation.verify[2].argv().unwrap()[0], "sh");
        assert!(f.variants[1].contains("kv=q4_0"));
    }

    #[test]
    fn unknown_keys_and_missing_prompt_are_errors() {
        assert!(toml::from_str::<StudyFile>("model='m'\ntokens=8\nsamples=1\nvariants=['a=b']\nbogus=1").is_err());
        let f: StudyFile = toml::from_str("model='m'\ntokens=8\nsamples=1\nvariants=['a=b']").unwrap();
        assert!(matches!(f.check(), Err(StudyFileError::Missing(_))));
        let base = "model='m'\ntokens=8\nsamples=1\nvariants=['a=b']\nprompt_tokens=50\n";
        let zero_hz: StudyFile = toml::from_str(&format!("{base}telemetry_hz=0")).unwrap();
        assert!(matches!(zero_hz.check(), Err(StudyFileError::Missing("telemetry_hz >= 1"))));
        let both: StudyFile = toml::from_str(&format!("{base}workload='screening'")).unwrap();
        assert!(both.check().unwrap_err().to_string().contains("128 output tokens, but tokens = 8"));
    }
}
