//! `--prompt FILE` / `--prompt-tokens N`: which prompt a request sends.
use clap::builder::RangedU64ValueParser;
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

/// A prompt has at least one token.
pub(crate) fn prompt_tokens() -> RangedU64ValueParser<u64> {
    clap::value_parser!(u64).range(1..)
}
