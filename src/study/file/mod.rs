//! The study file: everything that defines an A/B study, in TOML. `abprof ab` flags build one,
//! `abprof ab --study FILE` reads one, and every study writes the one it ran into its evidence
//! folder, so any study can be re-run exactly. The file owns every section type (`[pi]`,
//! `[trace]`, `[sweep]`, …) and the study's kind.
mod error;
mod kind;
/// Imports this file (the study file's limits read its keys), never the other way.
pub(crate) mod limits;
mod llama_bench;
mod pi;
mod sweep;
mod trace;

pub(crate) use error::StudyFileError;
pub(crate) use kind::AdaptiveRule;
pub use kind::{KindName, StudyKind};
pub use llama_bench::LlamaBenchSection;
pub use pi::PiSection;
pub use sweep::SweepSection;
pub(crate) use sweep::{AxisName, AxisValue, Point, SweepAxis};
pub use trace::TraceSection;
pub(crate) use trace::TracerCommand;

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

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
    /// The MTP pull requests' yardstick: nine fixed prompts, 192 tokens each, one cold server per
    /// sample answering all nine; aggregate acceptance beside the verdict (§4.1).
    MtpYardstick,
    /// The study's request `soak_requests` times back to back to one cold server per sample, to
    /// the thermal steady state; the rate per request beside the verdict (§4.2).
    Soak,
    /// The shape of llama.cpp's SPEED-Bench client: one prompt per category of the dataset's
    /// qualitative config (eleven), 256 tokens each, one cold server per sample answering all
    /// eleven; throughput, latency and acceptance per category, and the client's speedups beside
    /// the study's intervals (§4.3).
    SpeedBench,
}

/// An output length with a name (§4): what `screening`, `sustained` and `trace-matched` are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LengthPreset {
    Screening,
    Sustained,
    TraceMatched,
}

impl LengthPreset {
    pub(crate) fn tokens(self) -> u32 {
        match self {
            LengthPreset::Screening => 128,
            LengthPreset::Sustained => 1024,
            LengthPreset::TraceMatched => 512,
        }
    }
}

/// What each sample sends to its cold server: one request (every study without a workload, and
/// the length presets), or a sequence — the MTP yardstick's nine prompts (§4.1), a soak's
/// back-to-back requests (§4.2), SPEED-Bench's eleven categories (§4.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LoadShape {
    OneRequest,
    MtpYardstick,
    Soak,
    SpeedBench,
}

impl Workload {
    /// The `workload` key's two meanings apart: a length preset, or a load shape with its own
    /// default length. One key in the file and on the command line, two types here.
    pub(crate) fn split(self) -> (Option<LengthPreset>, LoadShape) {
        match self {
            Workload::Screening => (Some(LengthPreset::Screening), LoadShape::OneRequest),
            Workload::Sustained => (Some(LengthPreset::Sustained), LoadShape::OneRequest),
            Workload::TraceMatched => (Some(LengthPreset::TraceMatched), LoadShape::OneRequest),
            Workload::MtpYardstick => (None, LoadShape::MtpYardstick),
            Workload::Soak => (None, LoadShape::Soak),
            Workload::SpeedBench => (None, LoadShape::SpeedBench),
        }
    }

    /// Output tokens per request: the preset's, else the shape's default that `tokens` may
    /// replace.
    pub(crate) fn tokens(self) -> u32 {
        match self.split() {
            (Some(preset), _) => preset.tokens(),
            (None, LoadShape::MtpYardstick) => crate::measure::mtp_yardstick::TOKENS,
            (None, LoadShape::SpeedBench) => crate::measure::speed_bench::TOKENS,
            (None, _) => 512,
        }
    }

    /// The workload sends its own fixed prompts (the MTP yardstick's, SPEED-Bench's), none of the
    /// study's: how many.
    pub(crate) fn own_prompts(self) -> Option<usize> {
        match self {
            Workload::MtpYardstick => Some(crate::measure::mtp_yardstick::PROMPTS.len()),
            Workload::SpeedBench => Some(crate::measure::speed_bench::PROMPTS.len()),
            _ => None,
        }
    }

    /// The workload's name in the file and on the command line.
    pub(crate) fn name(self) -> String {
        clap::ValueEnum::to_possible_value(&self).map_or_else(String::new, |v| v.get_name().to_string())
    }

    /// The workload is a length preset, so `tokens` may not say otherwise.
    pub(crate) fn fixes_tokens(self) -> bool {
        self.split().0.is_some()
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
    /// Each wait of the gate gives up after this many seconds: the server or GPU still busy fails
    /// the sample and ends the study; other processes still busy let the request go ahead, and
    /// the third such timeout in a row ends the study (docs/methodology.md §9.1).
    #[serde(default = "default_gate_timeout")]
    pub(crate) timeout_s: u64,
    /// The thermal gate after the idle gate (docs/methodology.md §9.9); absent: not gated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) thermal: Option<ThermalGate>,
}

/// The thermal gate: before each request, after the idle gate, wait until the device's hottest
/// temperature is within `band_c` of the study's first idle reading, or at most `ceiling_c`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ThermalGate {
    #[serde(default = "default_thermal_band")]
    pub(crate) band_c: f64,
    #[serde(default)]
    pub(crate) ceiling_c: Option<f64>,
    /// Fail the sample, and the study, after this many seconds of waiting.
    #[serde(default = "default_thermal_timeout")]
    pub(crate) timeout_s: u64,
}

pub(crate) fn default_thermal_band() -> f64 {
    3.0
}
pub(crate) fn default_thermal_timeout() -> u64 {
    300
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
pub(crate) fn default_gate_timeout() -> u64 {
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
            thermal: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StudyFile {
    /// What the study measures, with its section: the file's `kind` key and its `[trace]` or
    /// `[pi]` table, read and written by [`StudyFile::parse`] and [`StudyFile::to_toml`].
    #[serde(skip)]
    pub kind: StudyKind,
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
    /// Requests per sample of the soak workload (default [`crate::measure::soak::DEFAULT_REQUESTS`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub soak_requests: Option<u32>,
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
    /// The comparisons of the sweep this study is a point of (its points × candidates), written
    /// by the sweep: an adaptive point's difference stop waits for the level Holm's first step
    /// needs over that family (docs/methodology.md §16).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sweep_family: Option<u32>,
    /// Blocks a study may add to retake blocks a rule about the host spoiled (default
    /// [`default_retakes`] of its planned blocks; 0: none; docs/methodology.md §7.19).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retakes: Option<u32>,
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
    /// The CPUs every server is placed on, as the user wrote them (`0-7,16`, `node:N`); abprof's
    /// own threads then run on the others (docs/methodology.md §2.1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_cpus: Option<String>,
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
    /// `auto`, `amd-smi`, `rocm-smi`, `amdgpu-sysfs`, `nvml`, `none`.
    #[serde(default = "default_telemetry")]
    pub telemetry: crate::telemetry::SourceKind,
    /// Telemetry sampling rate during each request.
    #[serde(default = "default_hz")]
    pub telemetry_hz: u32,
    #[serde(default)]
    pub idle: IdleGate,
    #[serde(default)]
    pub isolation: Isolation,
    /// A sweep: one whole study per combination of these values (docs/methodology.md §16).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sweep: Option<SweepSection>,
    /// Every sample one cold llama-bench run of the variant's build, with these arguments
    /// (docs/methodology.md §4.4); absent: every sample a llama-server's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub llama_bench: Option<LlamaBenchSection>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// The sample count an adaptive study stops at when its study gives none.
pub(crate) const DEFAULT_MAX_SAMPLES: u32 = 20;

/// The margin of an `until_decided` study without `mei_pct` (docs/methodology.md §17), chosen by
/// simulation with [`DEFAULT_MAX_SAMPLES`] (`sim_the_operating_table_at_the_defaults`): at 1.6%
/// block noise a study where nothing changed ends decided in 8.6 blocks on average, and a real
/// change of 1.5% is reported by its sign in at least 80% of studies (±2.5% called 64% of them
/// "the same", a real 1.7% regression among them).
pub(crate) const DEFAULT_MARGIN_PCT: f64 = 2.0;

/// Retake blocks a study adds when none is given, for `planned` blocks (a fixed study's
/// `samples`, an adaptive study's cap; docs/methodology.md §7.19): 5, plus one for every two
/// planned blocks. A host that spoils 1 sample in 5 spoils about 36% of the blocks, retakes
/// included, so about 0.56 retakes a planned block restore the blocks on average and the 5 cover
/// the spread of small studies: at that rate an `until_decided` study still calls a +2% change
/// at 1.6% block noise within 2 points as often as with no rejection, at caps of 6 to 20 blocks
/// (the simulation `sim_retakes_keep_an_adaptive_studys_power…`, src/summary/simulate.rs). A host
/// busy throughout no longer spends them: its study ends at the idle gate (§9.1).
pub(crate) fn default_retakes(planned: u32) -> u32 {
    5 + planned.div_ceil(2)
}

pub(crate) fn default_health_timeout() -> u64 {
    600
}
pub(crate) fn default_stall_timeout() -> u64 {
    crate::client::DEFAULT_STALL_TIMEOUT_S
}
pub(crate) fn default_stop_timeout() -> u64 {
    crate::measure::DEFAULT_STOP_TIMEOUT_S
}
pub(crate) fn default_telemetry() -> crate::telemetry::SourceKind {
    crate::telemetry::SourceKind::Auto
}
pub(crate) fn default_hz() -> u32 {
    100
}

impl StudyFile {
    /// An A/B study of `variants` on `model`: `tokens` out, `samples` a variant, every other key
    /// at the default a study file that leaves it out gets (one set of defaults: serde's above).
    pub(crate) fn new(model: PathBuf, tokens: u32, samples: u32, variants: Vec<String>) -> StudyFile {
        StudyFile {
            kind: StudyKind::Ab,
            name: None,
            model,
            server_args: String::new(),
            tokens,
            workload: None,
            soak_requests: None,
            samples,
            until_ci_pct: None,
            max_samples: None,
            until_decided: false,
            mei_pct: None,
            sweep_family: None,
            retakes: None,
            variants,
            prompt: None,
            prompt_tokens: None,
            ignore_eos: false,
            pure_decode: false,
            port: None,
            server_cpus: None,
            order_seed: None,
            health_timeout_s: default_health_timeout(),
            stall_timeout_s: default_stall_timeout(),
            stop_timeout_s: default_stop_timeout(),
            telemetry: default_telemetry(),
            telemetry_hz: default_hz(),
            idle: IdleGate::default(),
            isolation: Isolation::default(),
            sweep: None,
            llama_bench: None,
        }
    }

    /// What each sample sends (one request unless the workload is a sequence).
    pub(crate) fn load_shape(&self) -> LoadShape {
        self.workload.map_or(LoadShape::OneRequest, |w| w.split().1)
    }

    /// The CPUs `server_cpus` names on this host (checked by [`StudyFile::check`]).
    pub(crate) fn server_cpus(&self) -> Option<crate::server::placement::CpuList> {
        self.server_cpus.as_deref().and_then(|c| crate::server::placement::CpuList::parse(c).ok())
    }

    pub(crate) fn load(path: &Path) -> Result<StudyFile, StudyFileError> {
        let text = std::fs::read_to_string(path).map_err(|e| StudyFileError::Read { path: path.into(), source: e })?;
        let f = StudyFile::parse(&text).map_err(|message| StudyFileError::Parse { path: path.into(), message })?;
        f.check()?;
        Ok(f)
    }

    /// The study file `text` holds, unchecked but for its kind; the error is one line. The kind
    /// and its section are taken out first ([`StudyKind::from_keys`]), the rest read as the
    /// struct's keys.
    pub(crate) fn parse(text: &str) -> Result<StudyFile, String> {
        use serde::de::DeserializeOwned;
        // Every error names its line and column in `text`, the struct's keys' too: the document is
        // parsed once with its spans, and each part read from those spans.
        let one_line = |mut e: toml::de::Error| {
            e.set_input(Some(text));
            e.to_string().lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join(" ")
        };
        let mut document = toml::de::DeTable::parse(text).map_err(one_line)?;
        let table = document.get_mut();
        fn read<T: DeserializeOwned>(v: toml::Spanned<toml::de::DeValue<'_>>) -> Result<T, toml::de::Error> {
            T::deserialize(toml::de::ValueDeserializer::from(v))
        }
        // Read apart from the struct's keys, so each error names where it is.
        let in_key = |key: &'static str| move |e: toml::de::Error| format!("{key}: {}", one_line(e));
        let name: Option<KindName> = table.remove("kind").map(read).transpose().map_err(in_key("kind"))?;
        let pi: Option<PiSection> = table.remove("pi").map(read).transpose().map_err(in_key("[pi]"))?;
        let trace: Option<TraceSection> = table.remove("trace").map(read).transpose().map_err(in_key("[trace]"))?;
        let kind = StudyKind::from_keys(name, pi, trace)?;
        let f = StudyFile::deserialize(toml::de::Deserializer::from(document)).map_err(one_line)?;
        // `tokens` or `workload` (docs/commands.md): a workload without `tokens` gives its own
        // length, as `--workload` does, unless a sweep's `tokens` axis gives them.
        let swept = f.sweep.as_ref().is_some_and(|s| !s.tokens.is_empty());
        let tokens = match f.workload {
            Some(w) if f.tokens == 0 && (w.fixes_tokens() || !swept) => w.tokens(),
            _ => f.tokens,
        };
        Ok(StudyFile { kind, tokens, ..f })
    }

    /// The adaptive rule of an A/B study that adds blocks by one (docs/methodology.md §17).
    pub(crate) fn adaptive_rule(&self) -> Option<AdaptiveRule> {
        (self.kind == StudyKind::Ab && self.is_adaptive()).then(|| AdaptiveRule {
            until_ci_pct: self.until_ci_pct,
            until_decided: self.until_decided,
            mei_pct: self.margin_pct(),
            max_samples: self.max_samples(),
            family: self.sweep_family.unwrap_or(1).max(1),
        })
    }

    /// The study this point of the sweep runs: this study with the point's values, and no sweep.
    pub(crate) fn at_point(&self, point: &Point) -> StudyFile {
        let points = self.sweep.as_ref().map_or(1, |s| s.points().len());
        let candidates = self.variants.len().saturating_sub(1).max(1);
        let family = u32::try_from(points * candidates).unwrap_or(u32::MAX);
        let mut f = StudyFile { sweep: None, sweep_family: Some(family), ..self.clone() };
        for v in &point.values {
            match v {
                AxisValue::PromptTokens(n) => {
                    f.prompt = None;
                    f.prompt_tokens = Some(*n);
                }
                AxisValue::Tokens(n) => {
                    f.tokens = *n;
                    // The MTP yardstick and SPEED-Bench keep their prompts at any length.
                    f.workload = f.workload.filter(|w| !w.fixes_tokens());
                }
                AxisValue::Kv(kv) => f.variants = f.variants.iter().map(|s| format!("{s}|kv={kv}")).collect(),
                AxisValue::Env { name, value } => {
                    f.variants = f.variants.iter().map(|s| format!("{s}|env={name}={value}")).collect();
                }
                AxisValue::Extra(e) if e.trim().is_empty() => {}
                AxisValue::Extra(e) if f.server_args.trim().is_empty() => f.server_args = e.clone(),
                AxisValue::Extra(e) => f.server_args = format!("{} {e}", f.server_args),
            }
        }
        f.name = Some(match &self.name {
            Some(n) => format!("{n} · {}", point.name()),
            None => point.name(),
        });
        f
    }

    /// A llama-bench study holds none of a server study's request keys, and its arguments ask for
    /// tests llama-bench can run as one configuration.
    fn check_llama_bench(&self, section: &LlamaBenchSection) -> Result<(), StudyFileError> {
        let bad = |m: String| Err(StudyFileError::Contradiction(m));
        if self.kind != StudyKind::Ab {
            return bad(format!(
                "[llama_bench] makes an A/B study of llama-bench samples: {} cannot hold it",
                self.kind.name().a_study()
            ));
        }
        let request_keys = [
            // The workload first: a workload gives `tokens` its length when the file has none.
            ("workload", self.workload.is_some()),
            ("tokens", self.tokens != 0),
            ("prompt", self.prompt.is_some()),
            ("prompt_tokens", self.prompt_tokens.is_some()),
            ("pure_decode", self.pure_decode),
            ("ignore_eos", self.ignore_eos),
            ("soak_requests", self.soak_requests.is_some()),
        ];
        if let Some((key, _)) = request_keys.iter().find(|(_, set)| *set) {
            return bad(format!(
                "{key} shapes a request to llama-server, and a llama-bench study sends none: its tests are llama-bench's (-p, -n, -pg, -d in [llama_bench] args, --llama-bench); drop {key}"
            ));
        }
        if let Some(s) = self.sweep.as_ref().filter(|s| !s.tokens.is_empty() || !s.prompt_tokens.is_empty()) {
            let axis = if s.tokens.is_empty() { "prompt-tokens" } else { "tokens" };
            return bad(format!("a llama-bench study's lengths are its tests (-p, -n, -d): drop the {axis} axis and give the lengths in its arguments"));
        }
        section.tests().map(|_| ()).map_err(StudyFileError::Refused)
    }

    /// The `[sweep]` section is whole and agrees with the rest of the file.
    fn check_sweep(&self, sweep: &SweepSection) -> Result<(), StudyFileError> {
        let bad = |m: String| Err(StudyFileError::Contradiction(m));
        sweep.check_axes()?;
        if self.kind != StudyKind::Ab {
            return bad(format!("a sweep runs A/B studies: {} cannot be swept", self.kind.name().a_study()));
        }
        if !sweep.tokens.is_empty() && (self.tokens != 0 || self.workload.is_some_and(|w| w.fixes_tokens())) {
            return bad("tokens are swept in [sweep]: drop the top-level tokens and workload".into());
        }
        if !sweep.prompt_tokens.is_empty() && (self.prompt.is_some() || self.prompt_tokens.is_some()) {
            return bad("prompt_tokens are swept in [sweep]: drop the top-level prompt and prompt_tokens".into());
        }
        for name in sweep.env.keys() {
            if let Some(spec) = self.variants.iter().find(|s| crate::variant::spec_sets_env(s, name)) {
                return bad(format!(
                    "the env axis {name} gives every variant its value, but variant {spec:?} sets env={name}= itself: drop one"
                ));
            }
        }
        if !sweep.kv.is_empty() {
            if let Some(spec) = self.variants.iter().find(|s| crate::variant::spec_has_key(s, "kv")) {
                return bad(format!(
                    "the kv axis gives every variant its KV type, but variant {spec:?} sets kv= itself: drop one"
                ));
            }
        }
        Ok(())
    }

    /// Relative paths taken from `base` made absolute, so the copy in the evidence folder re-runs
    /// from anywhere.
    pub(crate) fn with_paths_from(mut self, base: &Path) -> StudyFile {
        let absolute = |p: &Path| if p.is_absolute() { p.to_path_buf() } else { base.join(p) };
        self.prompt = self.prompt.as_deref().map(absolute);
        self.model = absolute(&self.model);
        self
    }

    /// The file's text: `kind` first, the struct's keys, then the kind's section.
    pub(crate) fn to_toml(&self) -> String {
        #[derive(Serialize)]
        struct Section<'a> {
            #[serde(skip_serializing_if = "Option::is_none")]
            pi: Option<&'a PiSection>,
            #[serde(skip_serializing_if = "Option::is_none")]
            trace: Option<&'a TraceSection>,
        }
        let written = |text: Result<String, toml::ser::Error>| text.expect("a study file always serializes");
        // The kind's name is one of three plain words, a TOML string as it is.
        let kind = format!("kind = \"{}\"\n", self.kind.name().command());
        let keys = written(toml::to_string_pretty(self));
        let section = written(toml::to_string_pretty(&Section { pi: self.kind.pi(), trace: self.kind.trace() }));
        if section.is_empty() {
            format!("{kind}{keys}")
        } else {
            format!("{kind}{keys}\n{section}")
        }
    }

    /// The sample count an adaptive study stops at.
    /// The margin of the verdict "same": `mei_pct`, else [`DEFAULT_MARGIN_PCT`] in a study that
    /// stops on decisions (`until_decided`), else none (docs/methodology.md §8, §17).
    pub(crate) fn margin_pct(&self) -> Option<f64> {
        self.mei_pct.or(self.until_decided.then_some(DEFAULT_MARGIN_PCT))
    }

    /// Retake blocks this study may add (docs/methodology.md §7.19): `retakes` as given, else
    /// [`default_retakes`] of its planned blocks.
    pub(crate) fn retakes(&self) -> u32 {
        self.retakes.unwrap_or_else(|| default_retakes(self.planned_blocks()))
    }

    /// The interleaved blocks the study plans at most, retakes aside: an adaptive study's cap,
    /// else its `samples`.
    pub(crate) fn planned_blocks(&self) -> u32 {
        if self.is_adaptive() {
            self.max_samples().max(self.samples)
        } else {
            self.samples
        }
    }

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
        if self.kind != StudyKind::Ab {
            return Err(StudyFileError::Contradiction(
                "until_ci_pct judges decode TPS of an A/B study: a Pi or trace study takes a fixed sample count".into(),
            ));
        }
        if self.samples < 2 {
            return Err(StudyFileError::Missing("samples >= 2 with until_ci_pct or until_decided (its first look needs 3 a side: a study of 2 first adds a block)"));
        }
        if self.max_samples() > crate::bounds::MAX_ADAPTIVE_SAMPLES {
            return Err(StudyFileError::OutOfBounds(format!(
                "max_samples = {} is above {}, the cap of an adaptive study (docs/methodology.md §20): its looks' levels are calibrated on paths that long",
                self.max_samples(),
                crate::bounds::MAX_ADAPTIVE_SAMPLES
            )));
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

    /// The MTP yardstick (§4.1) and SPEED-Bench (§4.3) are A/B studies of their own `count`
    /// prompts, each on a cold KV.
    fn check_own_prompts(&self, w: Workload, count: usize) -> Result<(), StudyFileError> {
        let name = w.name();
        let count = match count {
            9 => "nine".to_string(),
            11 => "eleven".to_string(),
            n => n.to_string(),
        };
        let problem = if self.kind != StudyKind::Ab {
            format!("workload {name} is an A/B workload: {} cannot run it", self.kind.name().a_study())
        } else if self.prompt.is_some() || self.prompt_tokens.is_some() {
            format!("workload {name} sends its own {count} prompts: drop prompt and prompt_tokens (--prompt, --prompt-tokens)")
        } else if self.sweep.as_ref().is_some_and(|s| !s.prompt_tokens.is_empty()) {
            format!("workload {name} sends its own {count} prompts: drop the prompt_tokens axis")
        } else if self.pure_decode {
            format!("workload {name} times {count} prompts with their prefills: drop pure_decode (--pure-decode)")
        } else {
            return Ok(());
        };
        Err(StudyFileError::Contradiction(problem))
    }

    fn check_soak(&self) -> Result<(), StudyFileError> {
        let soak = self.workload == Some(Workload::Soak);
        let problem = if !soak && self.soak_requests.is_some() {
            "soak_requests (--soak-requests) is the soak workload's: add workload = \"soak\" (--workload soak) or drop it".into()
        } else if !soak {
            return Ok(());
        } else if self.kind != StudyKind::Ab {
            format!("workload soak is an A/B workload: {} cannot run it", self.kind.name().a_study())
        } else if self.pure_decode {
            "workload soak times every request with its prefill (the load that heats the device): drop pure_decode (--pure-decode)".into()
        } else {
            return Ok(());
        };
        Err(StudyFileError::Contradiction(problem))
    }

    /// Requests each sample sends: the yardstick's nine, SPEED-Bench's eleven, the soak's N, else
    /// one (two timing blocks under pure decode: the warm-up and the timed request).
    pub(crate) fn timing_blocks(&self) -> usize {
        if let Some(count) = self.workload.and_then(Workload::own_prompts) {
            return count;
        }
        match self.workload {
            Some(Workload::Soak) => self.soak_requests.unwrap_or(crate::measure::soak::DEFAULT_REQUESTS) as usize,
            _ if self.pure_decode => 2,
            _ => 1,
        }
    }

    /// The flags' bounds (docs/methodology.md §20), for the values a study file gives.
    fn check_bounds(&self) -> Result<(), String> {
        use crate::bounds::*;
        // A timeout of 0 would fail every wait at once, after the folder exists: from 1 s.
        let timeout = |v: u64, what: &str| within(v, 1, MAX_TIMEOUT_S, what).map(drop);
        within(self.samples, 1, MAX_SAMPLES, "samples")?;
        if let Some(m) = self.max_samples {
            within(m, 1, MAX_SAMPLES, "max_samples")?;
        }
        if let Some(r) = self.retakes {
            within(r, 0, MAX_SAMPLES, "retakes")?;
        }
        for (what, pct) in [("until_ci_pct", self.until_ci_pct), ("mei_pct", self.mei_pct)] {
            if let Some(p) = pct {
                if !(p > 0.0 && p <= MAX_MARGIN_PCT) {
                    return Err(format!("{what} = {p} is outside 0 < {what} ≤ {MAX_MARGIN_PCT}, abprof's bound (docs/methodology.md §20)"));
                }
            }
        }
        within(self.tokens, 0, MAX_TOKENS, "tokens")?;
        if let Some(n) = self.soak_requests {
            within(n, 2, MAX_SOAK_REQUESTS, "soak_requests")?;
        }
        if let Some(p) = self.prompt_tokens {
            within(p, 1, MAX_TOKENS as u64, "prompt_tokens")?;
        }
        within(self.telemetry_hz, 1, MAX_TELEMETRY_HZ, "telemetry_hz")?;
        timeout(self.health_timeout_s, "health_timeout_s")?;
        if let Some(cpus) = &self.server_cpus {
            crate::server::placement::CpuList::parse(cpus)?;
        }
        timeout(self.stall_timeout_s, "stall_timeout_s")?;
        timeout(self.stop_timeout_s, "stop_timeout_s")?;
        timeout(self.isolation.timeout_s, "isolation.timeout_s")?;
        within(self.idle.consecutive, 0, MAX_IDLE_SAMPLES, "idle.consecutive")?;
        within(self.idle.interval_ms, 0, MAX_INTERVAL_MS, "idle.interval_ms")?;
        timeout(self.idle.timeout_s, "idle.timeout_s")?;
        if let Some(pi) = self.kind.pi() {
            timeout(pi.timeout_s, "pi.timeout_s")?;
            timeout(pi.code_timeout_s, "pi.code_timeout_s")?;
            within(pi.max_tokens, 0, MAX_TOKENS, "pi.max_tokens")?;
            within(pi.context_window, 0, MAX_TOKENS, "pi.context_window")?;
        }
        if let Some(t) = self.kind.trace() {
            timeout(t.finalize_timeout_s, "trace.finalize_timeout_s")?;
            within(t.traced, 0, MAX_SAMPLES, "trace.traced")?;
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
            self.check_sweep(sweep)?;
        }
        if let Some(section) = &self.llama_bench {
            self.check_llama_bench(section)?;
        }
        let requests = self.llama_bench.is_none();
        if requests && self.tokens < 2 && sweep.is_none_or(|s| s.tokens.is_empty()) {
            return Err(StudyFileError::Missing("tokens >= 2 (decode TPS needs two output tokens)"));
        }
        if let Some((w, count)) = self.workload.and_then(|w| w.own_prompts().map(|c| (w, c))) {
            self.check_own_prompts(w, count)?;
        }
        self.check_soak()?;
        // A Pi agent writes its own prompt, and the MTP yardstick and SPEED-Bench send their own.
        if requests
            && !matches!(self.kind, StudyKind::Pi(_))
            && self.workload.and_then(Workload::own_prompts).is_none()
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
        self.check_bounds().map_err(StudyFileError::OutOfBounds)?;
        // Category verdicts (from 3 traced samples) scale each share by the untraced samples'
        // ms/token: one untraced sample gives that scale no spread, and a verdict that took it as
        // exact called some category of an A/A comparison changed in 32% (docs/methodology.md
        // §10.1).
        if let Some(t) = self.kind.trace().filter(|t| t.traced as usize >= crate::stats::MIN_VALUES) {
            if self.samples < 2 {
                return Err(StudyFileError::Refused(format!(
                    "{} traced samples a variant get category verdicts, and one untraced sample gives their ms/token scale no spread to carry: give --untraced 2 or more (samples = 2 in a study file)",
                    t.traced
                )));
            }
        }
        // The thermal gate reads a device temperature, which the CPU-only sources have none of
        // (docs/methodology.md §9.9); `auto` is checked once the source is open.
        if self.idle.thermal.is_some()
            && matches!(self.telemetry, crate::telemetry::SourceKind::None | crate::telemetry::SourceKind::Cpu)
        {
            return Err(StudyFileError::Contradiction(format!(
                "the thermal gate needs a device temperature and telemetry = {} reads none: pass --telemetry nvml, amd-smi, amdgpu-sysfs or rocm-smi, or leave out --thermal-gate",
                self.telemetry
            )));
        }
        if let Some(w) = self.workload.filter(|w| w.fixes_tokens() && w.tokens() != self.tokens) {
            return Err(StudyFileError::Contradiction(format!(
                "workload {} means {} output tokens, but tokens = {}: drop one of them",
                w.name(),
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
        assert_eq!(f.telemetry, crate::telemetry::SourceKind::Auto);
        let again = StudyFile::parse(&f.to_toml()).unwrap();
        assert_eq!(again, f);
    }

    /// A llama-bench study (docs/methodology.md §4.4) round-trips with its section and holds none
    /// of a request's keys.
    #[test]
    fn a_llama_bench_study_keeps_its_arguments_and_refuses_a_requests_keys() {
        let base = "model = '/m.gguf'\nsamples = 3\nvariants = ['a=/bin/a', 'b=/bin/b|kv=q8_0']\n";
        let f = StudyFile::parse(&format!("{base}[llama_bench]\nargs = '-p 512 -n 128 -d 0,4096'\n")).unwrap();
        f.check().unwrap();
        assert_eq!(f.llama_bench.as_ref().unwrap().tests().unwrap().len(), 4);
        assert_eq!(StudyFile::parse(&f.to_toml()).unwrap(), f);
        for (extra, says) in [
            ("tokens = 128\n", "drop tokens"),
            ("prompt_tokens = 2000\n", "drop prompt_tokens"),
            ("workload = 'sustained'\n", "drop workload"),
            ("pure_decode = true\n", "drop pure_decode"),
        ] {
            let text = format!("{base}{extra}[llama_bench]\nargs = '-p 512'\n");
            let e = StudyFile::parse(&text).unwrap().check().unwrap_err().to_string();
            assert!(e.contains(says) && !e.contains('\n'), "{extra}: {e}");
        }
        let e = StudyFile::parse(&format!("{base}[llama_bench]\nargs = '-fa 0,1'\n")).unwrap().check().unwrap_err();
        assert!(e.to_string().contains("a variant is one configuration"), "{e}");
        let swept = format!("{base}[llama_bench]\nargs = '-p 512'\n[sweep]\ntokens = [128, 512]\n");
        let e = StudyFile::parse(&swept).unwrap().check().unwrap_err().to_string();
        assert!(e.contains("drop the tokens axis"), "{e}");
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

    /// Category verdicts need the ms/token scale's spread: three traced samples with one
    /// untraced sample are refused before anything runs; two untraced samples carry a spread.
    #[test]
    fn category_verdicts_with_one_untraced_sample_are_refused() {
        let file = |samples: u32, traced: u32| {
            let text = format!(
                "model='m'\ntokens=8\nsamples={samples}\nvariants=['a=b','c=d']\nprompt_tokens=50\n[trace]\nfinalize_timeout_s=5\ntraced={traced}\n[trace.tracer]\nkind='nsys'\nprogram='/bin/nsys'\n"
            );
            StudyFile::parse(&text).unwrap()
        };
        let e = file(1, 3).check().unwrap_err().to_string();
        assert!(e.contains("give --untraced 2 or more") && !e.contains('\n'), "{e}");
        assert!(file(2, 3).check().is_ok());
        assert!(file(1, 2).check().is_ok(), "two traced samples get no category verdicts");
    }

    #[test]
    fn a_file_without_kind_has_the_kind_its_sections_imply() {
        let base = "model='m'\ntokens=8\nsamples=1\nvariants=['a=b']\nprompt_tokens=50\n";
        let trace = "[trace]\nfinalize_timeout_s=5\n[trace.tracer]\nkind='nsys'\nprogram='/bin/nsys'\n";
        let pi = "[pi]\npi_bin='/p'\nmode='decode'\nprompt='x'\ntimeout_s=1\nmax_tokens=8\ncontext_window=64\npython='/py'\ncode_timeout_s=1\n";
        assert_eq!(StudyFile::parse(base).unwrap().kind, StudyKind::Ab);
        assert_eq!(StudyFile::parse(&format!("{base}{trace}")).unwrap().kind.name(), KindName::Trace);
        let p = StudyFile::parse(&format!("{base}{pi}")).unwrap();
        assert_eq!(p.kind.name(), KindName::Pi);
        assert_eq!(p.kind.pi().map(|p| p.mode.as_str()), Some("decode"), "the kind carries its section");
        // Written back, the kind is recorded and reads as itself.
        let t = StudyFile::parse(&format!("{base}{trace}")).unwrap();
        assert!(t.to_toml().starts_with("kind = \"trace\"\n"), "{}", t.to_toml());
        assert_eq!(StudyFile::parse(&t.to_toml()).unwrap(), t);
        // A recorded kind must agree with the sections: such a file does not read as a study.
        let e = StudyFile::parse(&format!("kind='ab'\n{base}{trace}")).unwrap_err();
        assert!(e.contains("kind = \"ab\" has no [pi] or [trace] section"), "{e}");
        let e = StudyFile::parse(&format!("kind='pi'\n{base}")).unwrap_err();
        assert!(e.contains("needs its [pi] section"), "{e}");
        let e = StudyFile::parse(&format!("kind='trace'\n{base}{trace}{pi}")).unwrap_err();
        assert!(e.contains("kind = \"trace\" has no [pi] section"), "{e}");
        let e = StudyFile::parse(&format!("{base}{trace}{pi}")).unwrap_err();
        assert!(e.contains("not both"), "no kind, two sections: {e}");
        let e = StudyFile::parse(&format!("{base}{}", pi.replace("mode='decode'\n", ""))).unwrap_err();
        assert!(e.starts_with("[pi]: ") && e.contains("mode"), "an error in a section names it: {e}");
        assert!(e.contains("line 6"), "and its line: {e}");
        assert!(StudyFile::parse(&format!("kind='sweep'\n{base}")).is_err(), "a sweep is a shape, not a kind");
        // A Pi study needs no prompt; an A/B study's adaptive rule comes with its kind.
        let pi_only = "model='m'\ntokens=8\nsamples=1\nvariants=['a=b']\n";
        StudyFile::parse(&format!("{pi_only}{pi}")).unwrap().check().unwrap();
        let adaptive =
            StudyFile::parse(&format!("{base}samples=2\nuntil_ci_pct=1.5\n").replace("samples=1\n", "")).unwrap();
        adaptive.check().unwrap();
        let Some(rule) = adaptive.adaptive_rule() else { panic!("an adaptive A/B study") };
        assert_eq!((rule.until_ci_pct, rule.max_samples), (Some(1.5), DEFAULT_MAX_SAMPLES));
    }

    #[test]
    fn unknown_keys_and_missing_prompt_are_errors() {
        assert!(toml::from_str::<StudyFile>("model='m'\ntokens=8\nsamples=1\nvariants=['a=b']\nbogus=1").is_err());
        let e = StudyFile::parse("model='m'\ntokens=8\nsamples=1\nvariants=['a=b']\nbogus=1").unwrap_err();
        assert!(e.contains("bogus") && e.contains("line 5"), "the unknown key is named, with its line: {e}");
        let e = StudyFile::parse("model='m'\ntokens=8\nsamples='three'\nvariants=['a=b']\n").unwrap_err();
        assert!(e.contains("line 3"), "a value of the wrong type, with its line: {e}");
        let f: StudyFile = toml::from_str("model='m'\ntokens=8\nsamples=1\nvariants=['a=b']").unwrap();
        assert!(matches!(f.check(), Err(StudyFileError::Missing(_))));
        let base = "model='m'\ntokens=8\nsamples=1\nvariants=['a=b']\nprompt_tokens=50\n";
        let zero_hz: StudyFile = toml::from_str(&format!("{base}telemetry_hz=0")).unwrap();
        assert!(matches!(zero_hz.check(), Err(StudyFileError::Missing("telemetry_hz >= 1"))));
        let huge: StudyFile = toml::from_str(&base.replace("samples=1", "samples=4294967295")).unwrap();
        let e = huge.check().unwrap_err().to_string();
        assert!(e.contains("samples = 4294967295 is above 10000"), "{e}");
        let long = |max: u32| {
            let text = base.replace("samples=1", &format!("samples=3\nuntil_decided=true\nmax_samples={max}"));
            StudyFile::parse(&text).unwrap().check()
        };
        long(200).unwrap();
        let e = long(201).unwrap_err().to_string();
        assert!(e.contains("max_samples = 201 is above 200, the cap of an adaptive study"), "{e}");
        let slow: StudyFile = toml::from_str(&format!("{base}health_timeout_s=99999999999")).unwrap();
        assert!(slow.check().unwrap_err().to_string().contains("health_timeout_s"));
        let both: StudyFile = toml::from_str(&format!("{base}workload='screening'")).unwrap();
        assert!(both.check().unwrap_err().to_string().contains("128 output tokens, but tokens = 8"));
    }
}

#[cfg(test)]
mod mtp_yardstick_tests {
    use super::*;

    #[test]
    fn the_mtp_yardstick_sends_its_own_prompts_at_any_length() {
        let base = "model='m'\nsamples=1\nvariants=['a=b']\nworkload='mtp-yardstick'\n";
        let f = StudyFile::parse(&format!("{base}tokens=192\n")).unwrap();
        f.check().unwrap();
        assert_eq!(f.workload, Some(Workload::MtpYardstick));
        assert_eq!(StudyFile::parse(&f.to_toml()).unwrap(), f, "the workload round-trips for --resume");
        StudyFile::parse(&format!("{base}tokens=32\n")).unwrap().check().unwrap();
        let e = |extra: &str| {
            StudyFile::parse(&format!("{base}tokens=32\n{extra}")).unwrap().check().unwrap_err().to_string()
        };
        assert!(e("prompt_tokens=300\n").contains("sends its own nine prompts"));
        assert!(e("pure_decode=true\n").contains("drop pure_decode"));
        let fixed = "model='m'\nsamples=1\nvariants=['a=b']\nworkload='screening'\ntokens=32\nprompt_tokens=5\n";
        assert!(StudyFile::parse(fixed).unwrap().check().unwrap_err().to_string().contains("128 output tokens"));
    }

    /// `tokens` or `workload`: a workload alone gives the study its length, as `--workload` does.
    #[test]
    fn a_workload_without_tokens_gives_its_own_length() {
        let base = "model='m'\nsamples=3\nvariants=['a=b']\nprompt_tokens=300\n";
        for (workload, tokens) in [("screening", 128), ("trace-matched", 512)] {
            let f = StudyFile::parse(&format!("{base}workload='{workload}'\n")).unwrap();
            assert_eq!(f.tokens, tokens, "{workload}");
            f.check().unwrap();
            assert_eq!(StudyFile::parse(&f.to_toml()).unwrap(), f, "{workload}: it round-trips for --resume");
        }
        let own = StudyFile::parse("model='m'\nsamples=3\nvariants=['a=b']\nworkload='mtp-yardstick'\n").unwrap();
        assert_eq!(own.tokens, crate::measure::mtp_yardstick::TOKENS);
        own.check().unwrap();
    }

    #[test]
    fn speed_bench_sends_its_own_eleven_prompts_at_any_length() {
        let base = "model='m'\nsamples=1\nvariants=['a=b']\nworkload='speed-bench'\n";
        let f = StudyFile::parse(&format!("{base}tokens=256\n")).unwrap();
        f.check().unwrap();
        assert_eq!(
            (f.workload, f.load_shape(), f.timing_blocks()),
            (Some(Workload::SpeedBench), LoadShape::SpeedBench, 11)
        );
        assert_eq!(StudyFile::parse(&f.to_toml()).unwrap(), f, "the workload round-trips for --resume");
        let e = |extra: &str| {
            StudyFile::parse(&format!("{base}tokens=32\n{extra}")).unwrap().check().unwrap_err().to_string()
        };
        assert!(
            e("prompt_tokens=300\n").contains("workload speed-bench sends its own eleven prompts"),
            "{}",
            e("prompt_tokens=300\n")
        );
        assert!(e("pure_decode=true\n").contains("drop pure_decode"));
    }
}

#[cfg(test)]
mod new_tests {
    use super::*;

    #[test]
    fn a_workload_is_a_length_preset_or_a_load_shape_and_only_a_preset_fixes_the_tokens() {
        let all = [
            Workload::Screening,
            Workload::Sustained,
            Workload::TraceMatched,
            Workload::MtpYardstick,
            Workload::Soak,
            Workload::SpeedBench,
        ];
        let tokens: Vec<u32> = all.iter().map(|w| w.tokens()).collect();
        let (yardstick, speed_bench) = (crate::measure::mtp_yardstick::TOKENS, crate::measure::speed_bench::TOKENS);
        assert_eq!(tokens, [128, 1024, 512, yardstick, 512, speed_bench]);
        let fixed: Vec<bool> = all.iter().map(|w| w.fixes_tokens()).collect();
        assert_eq!(fixed, [true, true, true, false, false, false]);
        let shapes: Vec<LoadShape> = all.iter().map(|w| w.split().1).collect();
        use LoadShape::*;
        assert_eq!(shapes, [OneRequest, OneRequest, OneRequest, MtpYardstick, Soak, SpeedBench]);
        let names: Vec<String> = all.iter().map(|w| w.name()).collect();
        assert_eq!(names, ["screening", "sustained", "trace-matched", "mtp-yardstick", "soak", "speed-bench"]);
        let file = StudyFile::new("/m.gguf".into(), 64, 3, vec!["a=/b".into()]);
        assert_eq!(file.load_shape(), OneRequest);
        assert_eq!(StudyFile { workload: Some(Workload::Soak), ..file }.load_shape(), Soak);
    }

    #[test]
    fn a_new_study_file_has_the_defaults_of_a_file_that_leaves_every_key_out() {
        let read =
            StudyFile::parse("kind='ab'\nmodel='/m.gguf'\ntokens=64\nsamples=3\nvariants=['a=/b','b=/b|kv=q8_0']\n")
                .unwrap();
        let made = StudyFile::new("/m.gguf".into(), 64, 3, vec!["a=/b".into(), "b=/b|kv=q8_0".into()]);
        assert_eq!(made, read);
    }
}

#[cfg(test)]
mod sweep_tests {
    use super::*;

    fn base() -> StudyFile {
        toml::from_str(
            "model='/m.gguf'\nserver_args='-c 4096'\nsamples=2\nvariants=['f16=/b|kv=f16','q8_0=/b|kv=q8_0']\n[sweep]\nprompt_tokens=[500,2000]\ntokens=[8,16]\n",
        )
        .unwrap()
    }

    #[test]
    fn points_are_every_combination_first_axis_outermost() {
        let f = base();
        f.check().unwrap();
        let points = f.sweep.as_ref().unwrap().points();
        let names: Vec<String> = points.iter().map(Point::name).collect();
        assert_eq!(
            names,
            [
                "prompt-tokens=500,tokens=8",
                "prompt-tokens=500,tokens=16",
                "prompt-tokens=2000,tokens=8",
                "prompt-tokens=2000,tokens=16"
            ]
        );
        assert_eq!(points[3].dir_name(), "04-prompt-tokens=2000,tokens=16");
        let p = f.at_point(&points[2]);
        p.check().unwrap();
        assert_eq!((p.prompt_tokens, p.tokens, p.sweep.is_none()), (Some(2000), 8, true));
        assert_eq!(p.name.as_deref(), Some("prompt-tokens=2000,tokens=8"));
        // The point's study file stands alone: it round-trips and re-runs without the sweep.
        let again = StudyFile::parse(&p.to_toml()).unwrap();
        assert_eq!(again, p);
        let whole = StudyFile::parse(&f.to_toml()).unwrap();
        assert_eq!(whole, f, "the sweep's own file round-trips, its tokens absent");
        assert!(!f.to_toml().contains("\ntokens = 0"));
    }

    #[test]
    fn kv_and_extra_reach_every_variant() {
        let mut f = base();
        f.sweep = Some(SweepSection::from_axes(&["extra=,-fa on".parse().unwrap()]).unwrap());
        f.prompt_tokens = Some(300);
        f.tokens = 8;
        let points = f.sweep.as_ref().unwrap().points();
        assert_eq!(f.at_point(&points[0]).server_args, "-c 4096");
        assert_eq!(f.at_point(&points[1]).server_args, "-c 4096 -fa on");
        assert_eq!(points[1].dir_name(), "02-extra=-fa_on");
        f.sweep = Some(SweepSection::from_axes(&["kv=q8_0,q4_0".parse().unwrap()]).unwrap());
        let e = f.check().unwrap_err().to_string();
        assert!(e.contains("sets kv= itself"), "{e}");
        f.variants = vec!["a=/b".into(), "b=/c|extra=-t 1".into()];
        f.check().unwrap();
        let p = f.at_point(&f.sweep.as_ref().unwrap().points()[1]);
        assert_eq!(p.variants, ["a=/b|kv=q4_0", "b=/c|extra=-t 1|kv=q4_0"]);
    }

    /// Each environment variable is an axis of its own, crossed with the others (the toolboxes'
    /// matrices), given to every variant as env=; the file round-trips for --resume.
    #[test]
    fn env_axes_cross_with_kv_and_reach_every_variant() {
        let mut f = base();
        f.variants = vec!["a=/b".into(), "b=/c|env=OTHER=1".into()];
        f.prompt_tokens = Some(300);
        f.tokens = 8;
        let axes: Vec<SweepAxis> = ["kv=f16,q8_0", "env=GGML_CUDA_DISABLE_GRAPHS=0,1", "env=ROCBLAS_USE_HIPBLASLT=1"]
            .iter()
            .map(|a| a.parse().unwrap())
            .collect();
        f.sweep = Some(SweepSection::from_axes(&axes).unwrap());
        f.check().unwrap();
        let points = f.sweep.as_ref().unwrap().points();
        let names: Vec<String> = points.iter().map(Point::name).collect();
        assert_eq!(
            names,
            [
                "kv=f16,env.GGML_CUDA_DISABLE_GRAPHS=0,env.ROCBLAS_USE_HIPBLASLT=1",
                "kv=f16,env.GGML_CUDA_DISABLE_GRAPHS=1,env.ROCBLAS_USE_HIPBLASLT=1",
                "kv=q8_0,env.GGML_CUDA_DISABLE_GRAPHS=0,env.ROCBLAS_USE_HIPBLASLT=1",
                "kv=q8_0,env.GGML_CUDA_DISABLE_GRAPHS=1,env.ROCBLAS_USE_HIPBLASLT=1",
            ]
        );
        let p = f.at_point(&points[3]);
        p.check().unwrap();
        assert_eq!(
            p.variants,
            [
                "a=/b|kv=q8_0|env=GGML_CUDA_DISABLE_GRAPHS=1|env=ROCBLAS_USE_HIPBLASLT=1",
                "b=/c|env=OTHER=1|kv=q8_0|env=GGML_CUDA_DISABLE_GRAPHS=1|env=ROCBLAS_USE_HIPBLASLT=1",
            ]
        );
        assert_eq!(p.sweep_family, Some(4), "4 points × 1 candidate");
        let whole = StudyFile::parse(&f.to_toml()).unwrap();
        assert_eq!(whole, f, "[sweep.env] round-trips");
        assert!(f.to_toml().contains("[sweep.env]"), "{}", f.to_toml());
        // As sweep.json keeps them (docs/formats.md).
        let (axis, value) = (AxisName::Env("X".into()), AxisValue::Env { name: "X".into(), value: "1".into() });
        assert_eq!(serde_json::to_string(&axis).unwrap(), r#"{"env":"X"}"#);
        assert_eq!(serde_json::to_string(&AxisName::Kv).unwrap(), r#""kv""#);
        assert_eq!(serde_json::to_string(&value).unwrap(), r#"{"axis":"env","value":{"name":"X","value":"1"}}"#);
        // A variant that sets the swept variable itself contradicts the axis.
        f.variants[1] = "b=/c|env=GGML_CUDA_DISABLE_GRAPHS=1".into();
        let e = f.check().unwrap_err().to_string();
        assert!(e.contains("sets env=GGML_CUDA_DISABLE_GRAPHS= itself"), "{e}");
        let err = |s: &str| s.parse::<SweepAxis>().unwrap_err();
        assert!(err("env=0,1").contains("env=NAME=V1,V2"), "{}", err("env=0,1"));
        assert!(err("env=1BAD=0,1").contains("not an environment variable's name"));
        let twice = ["env=A=0".parse().unwrap(), "env=A=1".parse().unwrap()];
        assert!(SweepSection::from_axes(&twice).unwrap_err().contains("--sweep env=A=… is given twice"));
    }

    #[test]
    fn bad_axes_and_contradictions_are_named() {
        let err = |s: &str| s.parse::<SweepAxis>().unwrap_err();
        assert!(err("depth=1,2").contains("unknown sweep axis \"depth\""));
        assert!(err("tokens=1").contains("whole number >= 2"));
        assert!(err("kv=f17").contains("not one of"));
        assert!(err("prompt-tokens").contains("AXIS=V1,V2"));
        let twice = ["tokens=8".parse().unwrap(), "tokens=16".parse().unwrap()];
        assert!(SweepSection::from_axes(&twice).unwrap_err().contains("given twice"));
        let mut f = base();
        f.tokens = 128;
        assert!(f.check().unwrap_err().to_string().contains("drop the top-level tokens"));
        let mut f = base();
        f.prompt_tokens = Some(300);
        assert!(f.check().unwrap_err().to_string().contains("drop the top-level prompt"));
        let mut f = base();
        f.sweep.as_mut().unwrap().tokens = vec![8, 8];
        assert!(f.check().unwrap_err().to_string().contains("lists \"8\" twice"));
        assert!(toml::from_str::<StudyFile>(
            "model='m'\nsamples=1\nvariants=['a=b']\nprompt_tokens=5\n[sweep]\ntokens=[8]\ndepth=[1]"
        )
        .is_err());
    }
}

#[cfg(test)]
mod soak_tests {
    use super::*;

    #[test]
    fn the_soak_counts_its_requests_keeps_them_for_resume_and_refuses_what_contradicts_it() {
        let base = "model='m'\nsamples=3\nvariants=['a=b']\nprompt_tokens=50\nworkload='soak'\n";
        let f = StudyFile::parse(&format!("{base}tokens=512\n")).unwrap();
        f.check().unwrap();
        assert_eq!((f.workload, f.timing_blocks()), (Some(Workload::Soak), 20), "20 requests unless it says");
        assert_eq!(Workload::Soak.tokens(), 512, "--workload soak alone: the trace-matched length");
        let ten = StudyFile::parse(&format!("{base}soak_requests=10\ntokens=64\n")).unwrap();
        ten.check().unwrap();
        assert_eq!((ten.tokens, ten.timing_blocks()), (64, 10), "the soak is not its output length");
        assert_eq!(StudyFile::parse(&ten.to_toml()).unwrap(), ten, "the count round-trips for --resume");
        let e = |extra: &str| {
            StudyFile::parse(&format!("{base}tokens=64\n{extra}")).unwrap().check().unwrap_err().to_string()
        };
        assert!(e("pure_decode=true\n").contains("drop pure_decode"));
        assert!(e("soak_requests=1\n").contains("soak_requests = 1 is below 2"));
        assert!(e("soak_requests=5000\n").contains("abprof's bound"));
        let without = "model='m'\nsamples=3\nvariants=['a=b']\nprompt_tokens=50\ntokens=8\nsoak_requests=5\n";
        let e = StudyFile::parse(without).unwrap().check().unwrap_err().to_string();
        assert!(e.contains("add workload = \"soak\""), "{e}");
        let plain = StudyFile::parse("model='m'\nsamples=3\nvariants=['a=b']\nprompt_tokens=50\ntokens=8\n").unwrap();
        assert_eq!(plain.timing_blocks(), 1);
        assert_eq!(StudyFile { pure_decode: true, ..plain }.timing_blocks(), 2);
    }
}
