//! `abprof exactness`: is the candidate computing the same thing as the baseline?
use super::common::{check_model, default_evidence, read_prompt, runtime, split_server_args};
use crate::client::calibrate::{self, DEFAULT_SOURCE};
use crate::exactness::{render_text, run_exactness, ExactnessPlan, ExactnessSide, Gate};
use crate::measure::calibrate::calibrate_on_fresh_server;
use crate::server::{free_port, LaunchSpec};
use crate::variant::{parse_variants, Variant};
use anyhow::{bail, Context, Result};
use clap::Args;
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(Args, Debug)]
#[command(
    after_help = "Exit status: 0 exact; 3 not exact but the cosine ≥ 0.99 fallback passes; 4 the gate fails; 1 error."
)]
pub struct ExactnessArgs {
    /// Baseline then candidate: label=/path/to/llama-server[|kv=TYPE][|env=VAR=VAL][|extra=ARGS][|model=PATH].
    #[arg(long = "variant", value_name = "SPEC", required = true)]
    pub variants: Vec<String>,
    /// The GGUF model both run (unless a variant names its own with model=).
    #[arg(long, value_name = "GGUF")]
    pub model: Option<PathBuf>,
    /// Server arguments both variants get, split like a shell splits words, e.g. "-c 4096 -t 2 -np 1".
    #[arg(long, value_name = "ARGS", default_value = "", allow_hyphen_values = true)]
    pub server_args: String,
    /// Calibrated prompt text (see `abprof calibrate`); use the study's own prompt.
    #[arg(long, value_name = "FILE", conflicts_with = "prompt_tokens")]
    pub prompt: Option<PathBuf>,
    /// Without --prompt: calibrate a prompt of exactly N tokens on the baseline first.
    #[arg(long, value_name = "N", default_value_t = 1000)]
    pub prompt_tokens: u64,
    /// Output tokens to generate and compare (max_tokens).
    #[arg(long, value_name = "N", default_value_t = 128)]
    pub tokens: u32,
    /// Send llama-server's `ignore_eos`, so both generate exactly N tokens even past end-of-text.
    #[arg(long)]
    pub ignore_eos: bool,
    /// Evidence folder: `exactness.json` goes here (pass the A/B study's folder to have
    /// `abprof summarize` show it); default a new folder under the temp dir.
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
    /// Seconds to wait for each server's /health.
    #[arg(long, default_value_t = 600, value_name = "SECS")]
    pub health_timeout: u64,
}

fn model_of<'a>(v: &'a Variant, default: Option<&'a Path>) -> Result<&'a Path> {
    let model =
        v.model.as_deref().or(default).with_context(|| {
            format!("variant {} has no model: pass --model GGUF, or model=PATH in its spec", v.label)
        })?;
    check_model(model)?;
    Ok(model)
}

fn launch(v: &Variant, model: &Path, common: &[String], dir: &Path) -> Result<LaunchSpec> {
    // A port of its own per server: the previous one's socket may linger.
    let port = free_port("127.0.0.1").context("no free loopback port")?;
    Ok(LaunchSpec::for_variant(v, model, common, port, dir))
}

pub fn run(a: ExactnessArgs) -> Result<i32> {
    let variants = parse_variants(&a.variants)?;
    if variants.len() != 2 {
        bail!(crate::exactness::ExactnessError::VariantCount(variants.len()));
    }
    if a.tokens == 0 {
        bail!("--tokens must be at least 1");
    }
    let common = split_server_args(&a.server_args)?;
    let root = a.root.clone().unwrap_or_else(|| default_evidence("exactness"));
    let mut sides = Vec::new();
    for v in &variants {
        let model = model_of(v, a.model.as_deref())?;
        let dir = root.join("exactness").join(&v.label);
        sides.push(ExactnessSide {
            label: v.label.clone(),
            spec: v.spec.clone(),
            launch: launch(v, model, &common, &dir)?,
        });
    }
    let rt = runtime();
    let (prompt, prompt_file, expected) = match &a.prompt {
        Some(p) => (read_prompt(p)?, Some(p.clone()), calibrate::recorded_prompt_tokens(p)),
        None => {
            if a.prompt_tokens == 0 {
                bail!("--prompt-tokens must be at least 1");
            }
            let file = root.join("exactness").join("prompt.txt");
            let mut cal_launch = sides[0].launch.clone();
            cal_launch.log_file = root.join("exactness").join("calibration.server.log");
            cal_launch.console_file = root.join("exactness").join("calibration.console.log");
            let cal = rt
                .block_on(calibrate_on_fresh_server(
                    &cal_launch,
                    Duration::from_secs(a.health_timeout),
                    DEFAULT_SOURCE,
                    a.prompt_tokens,
                ))
                .with_context(|| format!("calibrating a {}-token prompt on {}", a.prompt_tokens, sides[0].label))?;
            calibrate::save(&cal, &file).with_context(|| format!("cannot write {}", file.display()))?;
            (cal.text.clone(), Some(file), Some(cal.prompt_tokens))
        }
    };
    let plan = ExactnessPlan {
        prompt,
        prompt_file,
        expected_prompt_tokens: expected,
        max_tokens: a.tokens,
        ignore_eos: a.ignore_eos,
        health_timeout: Duration::from_secs(a.health_timeout),
        root: root.clone(),
    };
    let report = rt.block_on(run_exactness(&sides[0], &sides[1], &plan))?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", render_text(&report));
        println!("report             {}", crate::exactness::ExactnessReport::path_in(&root).display());
    }
    Ok(match report.gate {
        Gate::Exact => 0,
        Gate::CosinePass => 3,
        Gate::Fail => 4,
    })
}
