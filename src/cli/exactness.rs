//! `abprof exactness`: is the candidate computing the same thing as the baseline?
use super::args::{HistoryArgs, LaunchArgs, OutputArgs, PromptArgs};
use super::common::{check_model, default_evidence};
use crate::app::{ExactnessRequest, Finishing};
use crate::exactness::VariantClass;
use crate::refusal::{refuse, Refusal};
use crate::variant::{parse_variants, Variant};
use anyhow::Result;
use clap::Args;
use std::path::{Path, PathBuf};

#[derive(Args, Debug)]
#[command(
    after_help = "Exit status: 0 exact; 3 not exact but the cosine ≥ 0.99 fallback passes; 4 the gate fails; 1 error; 2 usage; 128+N stopped by signal N (its servers stopped).",
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
    let Some(model) = v.model.as_deref().or(default) else {
        refuse!("variant {} has no model: pass --model GGUF, or model=PATH in its spec", v.label)
    };
    check_model(model)?;
    Ok(model)
}

pub(crate) fn run(a: ExactnessArgs) -> Result<i32> {
    // Usage errors, refused (exit 2) before any server starts.
    let variants = parse_variants(&a.variants).map_err(Refusal::of)?;
    if variants.len() != 2 {
        return Err(Refusal::of(crate::exactness::ExactnessError::VariantCount(variants.len())).into());
    }
    let common = a.launch.common_args()?;
    let models = [model_of(&variants[0], a.model.as_deref())?, model_of(&variants[1], a.model.as_deref())?];
    let class = a.class.unwrap_or_else(|| {
        VariantClass::of(models[0], variants[0].kv.as_deref(), models[1], variants[1].kv.as_deref())
    });
    let models = [models[0].to_path_buf(), models[1].to_path_buf()];
    let request = ExactnessRequest {
        root: a.root.clone().unwrap_or_else(|| default_evidence("exactness")),
        variants: [variants[0].clone(), variants[1].clone()],
        models,
        common,
        class,
        prompt: a.prompt.prompt.clone(),
        prompt_tokens: a.prompt.prompt_tokens.expect("clap gives --prompt-tokens a default"),
        tokens: a.tokens,
        ignore_eos: a.ignore_eos,
        health_timeout: a.launch.health_timeout(),
        stall_timeout: a.launch.stall_timeout(),
    };
    let how = Finishing { format: a.output.format(), history: a.history.location()?, gate: None };
    crate::app::exactness(&request, how)
}
