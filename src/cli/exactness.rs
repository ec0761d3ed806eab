//! `abprof exactness`: is the candidate computing the same thing as the baseline?
use super::args::{HistoryArgs, LaunchArgs, OutputArgs, PromptArgs};
use super::common::{block_on_until_signal, check_model, default_evidence, runtime};
use crate::exactness::{run_exactness, ExactnessPlan, ExactnessReport, ExactnessSide, Gate, VariantClass};
use crate::measure::calibrate::{prompt_or_calibrate, PromptSource};
use crate::report::emit;
use crate::report::exactness::SavedExactness;
use crate::server::{free_port, LaunchSpec};
use crate::summary::fingerprint::ExactnessFacts;
use crate::variant::{parse_variants, Variant};
use anyhow::{bail, Context, Result};
use clap::Args;
use std::path::{Path, PathBuf};

#[derive(Args, Debug)]
#[command(
    after_help = "Exit status: 0 exact; 3 not exact but the cosine ≥ 0.99 fallback passes; 4 the gate fails; 1 error; 128+N stopped by signal N (its servers stopped).",
    mut_arg("prompt", |a| a.conflicts_with("prompt_tokens").help("Calibrated prompt text (see `abprof calibrate`); use the study's own prompt")),
    mut_arg("prompt_tokens", |a| a.default_value("1000").help("Without --prompt: calibrate a prompt of exactly N tokens on the baseline first"))
)]
pub(crate) struct ExactnessArgs {
    /// Baseline then candidate: label=/path/to/llama-server[|kv=TYPE][|env=VAR=VAL][|extra=ARGS][|model=PATH].
    #[arg(long = "variant", value_name = "SPEC", required = true)]
    pub(crate) variants: Vec<String>,
    /// The GGUF model both run (unless a variant names its own with model=).
    #[arg(long, value_name = "GGUF")]
    pub(crate) model: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) launch: LaunchArgs,
    #[command(flatten)]
    pub(crate) prompt: PromptArgs,
    /// Output tokens to generate and compare (max_tokens).
    #[arg(long, value_name = "N", default_value_t = 128, value_parser = crate::bounds::u32_flag(1, crate::bounds::MAX_TOKENS))]
    pub(crate) tokens: u32,
    /// Send llama-server's `ignore_eos`, so both generate exactly N tokens even past end-of-text.
    #[arg(long)]
    pub(crate) ignore_eos: bool,
    /// Evidence folder: `exactness.json` goes here (pass the A/B study's folder to have
    /// `abprof summarize` show it); default a new folder under the temp dir.
    #[arg(long, value_name = "DIR")]
    pub(crate) root: Option<PathBuf>,
    /// What the candidate changes, which sets the same-top-1 and KL thresholds (default: from
    /// the variants' model= and kv=; name it when a change hides in extra= or the binary).
    #[arg(long, value_enum, value_name = "CLASS")]
    pub(crate) class: Option<VariantClass>,
    #[command(flatten)]
    pub(crate) output: OutputArgs,
    #[command(flatten)]
    pub(crate) history: HistoryArgs,
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

/// What the two sides ran on (binary and model hashed, `--version`), for the evidence and the
/// results history.
fn exactness_facts(variants: &[Variant], model: Option<&Path>, common: &[String]) -> Result<ExactnessFacts> {
    let mut facts = Vec::new();
    for v in variants {
        let m = model_of(v, model)?;
        facts.push(
            crate::study::facts::variant_facts(v, m, common)
                .with_context(|| format!("variant {}: hashing its files", v.label))?,
        );
    }
    Ok(ExactnessFacts { variants: facts, host: crate::study::facts::host_facts(None) })
}

pub(crate) fn run(a: ExactnessArgs) -> Result<i32> {
    let variants = parse_variants(&a.variants)?;
    if variants.len() != 2 {
        bail!(crate::exactness::ExactnessError::VariantCount(variants.len()));
    }
    let common = a.launch.common_args()?;
    let mut history = a.history.open()?;
    let root = a.root.clone().unwrap_or_else(|| default_evidence("exactness"));
    let models = [model_of(&variants[0], a.model.as_deref())?, model_of(&variants[1], a.model.as_deref())?];
    let class = a.class.unwrap_or_else(|| {
        VariantClass::of(models[0], variants[0].kv.as_deref(), models[1], variants[1].kv.as_deref())
    });
    let mut sides = Vec::new();
    for v in &variants {
        let model = model_of(v, a.model.as_deref())?;
        let dir = root.join("exactness").join(&v.label);
        sides.push(ExactnessSide {
            label: v.label.clone(),
            spec: v.spec.clone(),
            launch: launch(v, model, &common, &dir)?,
            expect: v.expect_regex(),
        });
    }
    let rt = runtime();
    let calibrated = crate::study::evidence::exactness_prompt_in(&root);
    let source = match &a.prompt.prompt {
        Some(p) => PromptSource::File(p),
        None => {
            let mut launch = sides[0].launch.clone();
            launch.log_file = root.join("exactness").join("calibration.server.log");
            launch.console_file = root.join("exactness").join("calibration.console.log");
            PromptSource::Calibrate {
                tokens: a.prompt.prompt_tokens.expect("clap gives --prompt-tokens a default"),
                launch,
                health_timeout: a.launch.health_timeout(),
                stall: a.launch.stall_timeout(),
            }
        }
    };
    let prompt_file = Some(a.prompt.prompt.clone().unwrap_or_else(|| calibrated.clone()));
    let who = sides[0].label.clone();
    let prompt = block_on_until_signal(&rt, prompt_or_calibrate(source, &calibrated, &who))?;
    let plan = ExactnessPlan {
        prompt: prompt.text,
        prompt_file,
        expected_prompt_tokens: prompt.tokens,
        max_tokens: a.tokens,
        ignore_eos: a.ignore_eos,
        health_timeout: a.launch.health_timeout(),
        stall_timeout: a.launch.stall_timeout(),
        root: root.clone(),
        class,
    };
    let report = block_on_until_signal(&rt, async { Ok(run_exactness(&sides[0], &sides[1], &plan).await?) })?;
    let file = ExactnessReport::path_in(&root);
    emit(&SavedExactness { report: &report, file: &file }, a.output.format());
    let facts = exactness_facts(&variants, a.model.as_deref(), &common)?;
    crate::study::evidence::write_json(&crate::study::evidence::exactness_facts_in(&root), &facts)?;
    crate::finish::record(history.as_mut(), &root, a.output.format(), || {
        Ok(crate::history::StudyRecord::of_exactness(&root, &report, Some(&facts)))
    });
    Ok(match report.gate {
        Gate::Exact => 0,
        Gate::CosinePass => 3,
        Gate::Fail => 4,
    })
}
