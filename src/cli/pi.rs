//! `abprof pi`: the real Pi coding agent against each variant, cold, interleaved.
use super::common::{check_model, default_evidence, runtime, split_server_args};
use crate::pi::{
    render_text, run_pi_study, sample_line, AgentModel, PiConditions, PiError, PiMode, PiSettings, PiStudy, PiVariant,
};
use crate::server::LaunchSpec;
use crate::variant::parse_variants;
use anyhow::{bail, Context, Result};
use clap::Args;
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(Args, Debug)]
#[command(after_help = "Exit status: 0 every sample valid; 3 some sample failed (reasons listed); 1 error.")]
pub struct PiArgs {
    /// label=/path/to/llama-server[|kv=TYPE][|env=VAR=VAL][|extra=ARGS][|model=PATH]; the first is the baseline.
    #[arg(long = "variant", value_name = "SPEC", required = true)]
    pub variants: Vec<String>,
    /// Samples per variant (at least 3: docs/methodology.md §8).
    #[arg(long, value_name = "K", default_value_t = 3)]
    pub samples: usize,
    /// The controlled workload.
    #[arg(long, value_enum, default_value_t = PiMode::Decode)]
    pub mode: PiMode,
    /// Replace the mode's prompt (its Python is still extracted and run).
    #[arg(long, value_name = "TEXT")]
    pub prompt: Option<String>,
    /// The GGUF model every variant runs (unless a variant names its own with model=).
    #[arg(long, value_name = "GGUF")]
    pub model: Option<PathBuf>,
    /// Server arguments every variant gets, e.g. "-c 32768 -np 1". Pi's prompt (system prompt and
    /// tools included) must fit the context.
    #[arg(long, value_name = "ARGS", default_value = "", allow_hyphen_values = true)]
    pub server_args: String,
    /// Evidence folder (pi.json, and pi/LABEL-N/ per sample); default a new folder under the temp dir.
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// The pi executable.
    #[arg(long, value_name = "PATH", default_value = "pi")]
    pub pi_bin: PathBuf,
    /// Seconds one whole pi process may take.
    #[arg(long, value_name = "S", default_value_t = 900)]
    pub timeout: u64,
    /// The model's maxTokens in Pi's models.json (Pi sends it as max_tokens).
    #[arg(long, value_name = "N", default_value_t = 4096)]
    pub max_tokens: u32,
    /// The model's contextWindow in Pi's models.json.
    #[arg(long, value_name = "N", default_value_t = 32768)]
    pub context_window: u32,
    /// Python interpreter for the answer's code.
    #[arg(long, value_name = "PATH", default_value = "python3")]
    pub python: PathBuf,
    /// Seconds the answer's code may run.
    #[arg(long, value_name = "S", default_value_t = 60)]
    pub code_timeout: u64,
    /// Seconds to wait for each server's /health.
    #[arg(long, default_value_t = crate::study::file::default_health_timeout(), value_name = "SECS")]
    pub health_timeout: u64,
    #[command(flatten)]
    pub conditions: super::conditions::ConditionArgs,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

/// `pi` alone means the one on PATH; a path is taken as given.
fn resolve_program(p: &Path) -> Option<PathBuf> {
    if p.components().count() > 1 {
        return p.is_file().then(|| p.to_path_buf());
    }
    std::env::split_paths(&std::env::var_os("PATH")?).map(|d| d.join(p)).find(|c| c.is_file())
}

pub fn run(a: PiArgs) -> Result<i32> {
    let variants = parse_variants(&a.variants)?;
    if a.samples == 0 {
        bail!(PiError::NoSamples);
    }
    let pi_bin = resolve_program(&a.pi_bin).ok_or_else(|| PiError::PiMissing(a.pi_bin.clone()))?;
    let python = resolve_program(&a.python).with_context(|| {
        format!("python interpreter {} not found: install python3 or pass --python", a.python.display())
    })?;
    let common = split_server_args(&a.server_args)?;
    let root = a.root.clone().unwrap_or_else(|| default_evidence("pi"));
    let mut pi_variants = Vec::new();
    for v in &variants {
        let model = v.model.as_deref().or(a.model.as_deref()).with_context(|| {
            format!("variant {} has no model: pass --model GGUF, or model=PATH in its spec", v.label)
        })?;
        check_model(model)?;
        pi_variants.push(PiVariant {
            label: v.label.clone(),
            spec: v.spec.clone(),
            // Each sample picks its own free port and log paths.
            launch: LaunchSpec::for_variant(v, model, &common, 0, &root),
        });
    }
    let study = PiStudy {
        variants: pi_variants,
        samples: a.samples,
        mode: a.mode.name().into(),
        settings: PiSettings {
            pi_bin,
            prompt: a.prompt.clone().unwrap_or_else(|| a.mode.prompt().to_string()),
            model: AgentModel { context_window: a.context_window, max_tokens: a.max_tokens },
            timeout: Duration::from_secs(a.timeout),
            python,
            code_timeout: Duration::from_secs(a.code_timeout),
            health_timeout: Duration::from_secs(a.health_timeout),
            stop_timeout: Duration::from_secs(60),
            check_code: true,
        },
        conditions: PiConditions {
            idle: a.conditions.idle(),
            isolation: a.conditions.isolation(),
            telemetry: a.conditions.telemetry.clone(),
            telemetry_hz: a.conditions.telemetry_hz,
        },
        root: root.clone(),
    };
    let quiet = a.json;
    let report = runtime().block_on(run_pi_study(&study, &mut |s| {
        if !quiet {
            eprintln!("{}", sample_line(s));
        }
    }))?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", render_text(&report));
        println!("evidence: {}", root.display());
    }
    if report.restored == Some(false) {
        eprintln!("abprof: warning: the restore/verify hooks failed: see {}/isolation.json", root.display());
    }
    if let Some(sig) = report.interrupted_by {
        eprintln!(
            "abprof: interrupted by signal {sig} after {} samples; the sample in flight was discarded; restore hooks ran",
            report.samples.len()
        );
        return Ok(128 + sig);
    }
    Ok(if report.samples.iter().all(|s| s.valid) { 0 } else { 3 })
}
