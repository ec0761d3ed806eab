//! `abprof ab`: the A/B study.
use super::common::split_server_args;
use crate::study::evidence::{write_json, Evidence};
use crate::study::file::{StudyFile, Workload};
use crate::study::{run_study, Outcome};
use crate::summary::summarize;
use anyhow::{bail, Context, Result};
use clap::Args;
use std::path::{Path, PathBuf};

#[derive(Args, Debug)]
pub struct AbArgs {
    /// Evidence folder of a new study (must not exist, or be empty).
    #[arg(long, value_name = "DIR", required_unless_present = "resume")]
    pub root: Option<PathBuf>,
    /// Run the study defined in this TOML file (written into every evidence folder as study.toml).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["variant", "resume"])]
    pub study: Option<PathBuf>,
    /// Continue an interrupted study in DIR.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["root", "variant"])]
    pub resume: Option<PathBuf>,
    /// A variant: label=binary[|kv=TYPE][|env=VAR=VAL]...[|extra=ARGS][|model=PATH][|expect=REGEX]. First = baseline.
    #[arg(long, value_name = "SPEC")]
    pub variant: Vec<String>,
    /// Output tokens per request.
    #[arg(long, value_name = "N", conflicts_with = "workload")]
    pub tokens: Option<u32>,
    /// The workloads of docs/methodology.md §4: screening (128 tokens), sustained (1024),
    /// trace-matched (512).
    #[arg(long, value_enum)]
    pub workload: Option<Workload>,
    /// Cold samples per variant.
    #[arg(long, default_value_t = 3)]
    pub samples: u32,
    /// Model every variant runs unless its spec says model=.
    #[arg(long, value_name = "GGUF")]
    pub model: Option<PathBuf>,
    /// Server arguments common to every variant (split like a shell would; no shell runs them).
    #[arg(long, value_name = "ARGS", default_value = "", allow_hyphen_values = true)]
    pub server_args: String,
    /// A calibrated prompt file.
    #[arg(long, value_name = "FILE")]
    pub prompt: Option<PathBuf>,
    /// Exact prompt tokens: calibrated once on the baseline (or the count of --prompt).
    #[arg(long, value_name = "N")]
    pub prompt_tokens: Option<u64>,
    /// Fixed loopback port for every sample (default: one free port for the whole study).
    #[arg(long)]
    pub port: Option<u16>,
    /// Send llama-server's ignore_eos so every request decodes exactly N tokens.
    #[arg(long)]
    pub ignore_eos: bool,
    /// Warm the prompt cache, then time decode with the full-length KV in place.
    #[arg(long)]
    pub pure_decode: bool,
    /// Run the (single) variant against itself to measure the noise floor.
    #[arg(long)]
    pub aa: bool,
    /// Shuffle within each balanced block with this seed (recorded in plan.json).
    #[arg(long, value_name = "SEED")]
    pub order_seed: Option<u64>,
    #[command(flatten)]
    pub conditions: super::conditions::ConditionArgs,
    /// Seconds to wait for each server's /health.
    #[arg(long, default_value_t = crate::study::file::default_health_timeout(), value_name = "SECS")]
    pub health_timeout: u64,
    /// Print the summary as JSON.
    #[arg(long)]
    pub json: bool,
}

fn absolute(p: &Path, base: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        base.join(p)
    }
}

/// A study file whose relative paths are taken from `base` made absolute, so the copy in the
/// evidence folder re-runs from anywhere.
fn absolutize(mut f: StudyFile, base: &Path) -> StudyFile {
    f.model = absolute(&f.model, base);
    f.prompt = f.prompt.map(|p| absolute(&p, base));
    f
}

fn study_from_flags(a: &AbArgs) -> Result<StudyFile> {
    let Some(model) = &a.model else { bail!("--model is required (or pass --study FILE)") };
    let tokens = match (a.tokens, a.workload) {
        (Some(t), _) => t,
        (None, Some(w)) => w.tokens(),
        (None, None) => bail!("give --tokens N or --workload screening|sustained|trace-matched"),
    };
    split_server_args(&a.server_args)?;
    let mut variants = a.variant.clone();
    if a.aa {
        if variants.len() != 1 {
            bail!("--aa runs one variant against itself: give exactly one --variant");
        }
        let (label, rest) = variants[0].split_once('=').context("variant spec has no '='")?;
        variants.push(format!("{label}-again={rest}"));
    }
    if a.prompt.is_none() && a.prompt_tokens.is_none() {
        bail!("give --prompt FILE (from `abprof calibrate`) or --prompt-tokens N (calibrated once on the baseline)");
    }
    let cwd = std::env::current_dir()?;
    Ok(absolutize(
        StudyFile {
            name: None,
            model: model.clone(),
            server_args: a.server_args.clone(),
            tokens,
            workload: a.workload,
            samples: a.samples,
            variants,
            prompt: a.prompt.clone(),
            prompt_tokens: a.prompt_tokens,
            ignore_eos: a.ignore_eos,
            pure_decode: a.pure_decode,
            port: a.port,
            order_seed: a.order_seed,
            health_timeout_s: a.health_timeout,
            telemetry: a.conditions.telemetry.clone(),
            telemetry_hz: a.conditions.telemetry_hz,
            idle: a.conditions.idle(),
            isolation: a.conditions.isolation(),
            pi: None,
            trace: None,
        },
        &cwd,
    ))
}

pub fn run(a: AbArgs) -> Result<i32> {
    let (file, root, resume) = if let Some(dir) = &a.resume {
        (StudyFile::load(&Evidence::open(dir)?.study_toml())?, dir.clone(), true)
    } else {
        let root = a.root.clone().expect("clap requires --root");
        let file = match &a.study {
            Some(path) => {
                let f = StudyFile::load(path)?;
                absolutize(f, path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new(".")))
            }
            None => study_from_flags(&a)?,
        };
        (file, root, false)
    };
    let run = run_study(&file, &root, resume)?;
    let summary = summarize(&run.evidence)?;
    write_json(&run.evidence.path("summary.json"), &summary)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&summary)?);
    } else {
        print!("{}", crate::report::summary::render_text(&summary));
    }
    if !run.restored {
        eprintln!("abprof: warning: the restore/verify hooks failed: see {}/isolation.json", root.display());
    }
    Ok(match run.outcome {
        Outcome::Completed => 0,
        Outcome::Interrupted(sig) => {
            eprintln!(
                "abprof: interrupted by signal {sig} after {} new samples; restore hooks ran; `abprof ab --resume {}` completes the study",
                run.samples_taken,
                root.display()
            );
            128 + sig
        }
    })
}
