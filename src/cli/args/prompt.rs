//! `--prompt FILE` / `--prompt-tokens N`: which prompt a request sends.
use clap::Args;
use std::path::PathBuf;

/// Prompt: `--prompt FILE` (made by `abprof calibrate`) and `--prompt-tokens N`, its exact
/// token count or, without a FILE, the length to calibrate (bench, exactness; ab, trace).
#[derive(Args, Debug, Clone)]
pub(crate) struct PromptArgs {
    /// Calibrated prompt text (see `abprof calibrate`).
    #[arg(long, value_name = "FILE")]
    pub(crate) prompt: Option<PathBuf>,
    /// Exact prompt tokens, chat template included: the count FILE must have (default: read from
    /// FILE.calibration.json), or without FILE the length to calibrate.
    #[arg(long, value_name = "N", value_parser = prompt_tokens())]
    pub(crate) prompt_tokens: Option<u64>,
}

/// A prompt has at least one token, and at most [`crate::bounds::MAX_TOKENS`].
pub(crate) fn prompt_tokens() -> impl Fn(&str) -> Result<u64, String> + Clone + Send + Sync + 'static {
    crate::bounds::u64_flag(1, crate::bounds::MAX_TOKENS as u64)
}
