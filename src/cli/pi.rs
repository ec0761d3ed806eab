//! `abprof pi`: the real Pi coding agent against each variant, cold, interleaved.
use super::args::{HistoryArgs, OutputArgs, VariantArgs, STUDY_FLAGS};
use super::common::{default_evidence, study_file};
use super::conditions::RunConditions;
use crate::app::Finishing;
use crate::refusal::{refuse, Refusal};
use crate::study::file::{KindName, PiSection, StudyFile, StudyKind};
use crate::study::pi::{PiError, PiMode};
use crate::variant::parse_variants;
use anyhow::{Context, Result};
use clap::Args;
use std::path::{Path, PathBuf};

#[derive(Args, Debug)]
#[command(
    after_help = "Exit status: 0 every sample valid; 3 some sample failed (reasons listed); 1 error, also after the report when the restore/verify hooks failed; 2 usage; 128+N stopped by signal N (129 SIGHUP, 130 SIGINT, 143 SIGTERM; resumable)."
)]
#[command(mut_arg("variants", |a| a.required_unless_present("resume")))]
pub(crate) struct PiArgs {
    #[command(flatten)]
    pub(crate) variants: VariantArgs,
    /// Finish an interrupted Pi study in DIR (its study.toml holds every setting).
    #[arg(long, value_name = "DIR", conflicts_with = "root", conflicts_with_all = STUDY_FLAGS)]
    #[arg(conflicts_with_all = ["samples", "mode", "prompt", "pi_bin", "timeout", "max_tokens", "context_window", "python", "code_timeout"])]
    pub(crate) resume: Option<PathBuf>,
    /// Samples per variant (at least 3: docs/methodology.md §8).
    #[arg(long, value_name = "K", default_value_t = 3, value_parser = crate::bounds::u32_flag(1, crate::bounds::MAX_SAMPLES))]
    pub(crate) samples: u32,
    /// The controlled workload.
    #[arg(long, value_enum, default_value_t = PiMode::Decode)]
    pub(crate) mode: PiMode,
    /// Replace the mode's prompt (its Python is still extracted and run).
    #[arg(long, value_name = "TEXT")]
    pub(crate) prompt: Option<String>,
    /// Evidence folder (pi.json, and pi/LABEL-N/ per sample); default a new folder under the temp dir.
    #[arg(long, value_name = "DIR")]
    pub(crate) root: Option<PathBuf>,
    /// The pi executable.
    #[arg(long, value_name = "PATH", default_value = "pi")]
    pub(crate) pi_bin: PathBuf,
    /// Seconds one whole pi process may take.
    #[arg(long, value_name = "S", default_value_t = 900, value_parser = crate::bounds::u64_flag(1, crate::bounds::MAX_TIMEOUT_S))]
    pub(crate) timeout: u64,
    /// The model's maxTokens in Pi's models.json (Pi sends it as max_tokens).
    #[arg(long, value_name = "N", default_value_t = 4096, value_parser = crate::bounds::u32_flag(2, crate::bounds::MAX_TOKENS))]
    pub(crate) max_tokens: u32,
    /// The model's contextWindow in Pi's models.json.
    #[arg(long, value_name = "N", default_value_t = 32768, value_parser = crate::bounds::u32_flag(1, crate::bounds::MAX_TOKENS))]
    pub(crate) context_window: u32,
    /// Python interpreter for the answer's code.
    #[arg(long, value_name = "PATH", default_value = "python3")]
    pub(crate) python: PathBuf,
    /// Seconds the answer's code may run.
    #[arg(long, value_name = "S", default_value_t = 60, value_parser = crate::bounds::u64_flag(1, crate::bounds::MAX_TIMEOUT_S))]
    pub(crate) code_timeout: u64,
    #[command(flatten)]
    pub(crate) conditions: RunConditions,
    #[command(flatten)]
    pub(crate) output: OutputArgs,
    #[command(flatten)]
    pub(crate) history: HistoryArgs,
}

/// `pi` alone means the one on PATH; a path is taken as given.
fn resolve_program(p: &Path) -> Option<PathBuf> {
    if p.components().count() > 1 {
        return p.is_file().then(|| p.to_path_buf());
    }
    crate::child::on_path(p.to_str()?)
}

/// The study file of a new Pi study, from the flags.
fn study_from_flags(a: &PiArgs, pi_bin: PathBuf, python: PathBuf) -> Result<StudyFile> {
    let variants = parse_variants(&a.variants.variants).map_err(Refusal::of)?;
    let model = match (&a.variants.model, variants.iter().find(|v| v.model.is_none())) {
        (Some(m), _) => m.clone(),
        (None, Some(v)) => refuse!("variant {} has no model: pass --model GGUF, or model=PATH in its spec", v.label),
        (None, None) => variants[0].model.clone().expect("every variant names its model"),
    };
    let pi = PiSection {
        pi_bin,
        mode: a.mode.name().into(),
        prompt: a.prompt.clone().unwrap_or_else(|| a.mode.prompt().to_string()),
        timeout_s: a.timeout,
        max_tokens: a.max_tokens,
        context_window: a.context_window,
        python,
        code_timeout_s: a.code_timeout,
    };
    // Pi sends its model's maxTokens as max_tokens.
    let file =
        StudyFile { kind: StudyKind::Pi(pi), ..study_file(&a.variants, &a.conditions, model, a.max_tokens, a.samples) };
    Ok(file.with_paths_from(&std::env::current_dir()?))
}

pub(crate) fn run(a: PiArgs) -> Result<i32> {
    let (file, root, resume) = match &a.resume {
        Some(dir) => (crate::study::open(dir)?.resumed_by(KindName::Pi)?.file, dir.clone(), true),
        None => {
            let pi_bin = resolve_program(&a.pi_bin).ok_or_else(|| PiError::PiMissing(a.pi_bin.clone()))?;
            let python = resolve_program(&a.python).with_context(|| {
                format!("python interpreter {} not found: install python3 or pass --python", a.python.display())
            })?;
            let root = a.root.clone().unwrap_or_else(|| default_evidence("pi"));
            (study_from_flags(&a, pi_bin, python)?, root, false)
        }
    };
    let how = Finishing { format: a.output.format(), history: a.history.location()?, gate: None };
    crate::app::study(&file, &root, resume, how)
}
