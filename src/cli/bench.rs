//! `abprof bench`: one cold, honestly measured sample.
use super::args::{HistoryArgs, OutputArgs, PromptArgs, ServerArgs};
use super::common::{check_model, default_evidence, port_or_free};
use crate::app::{BenchRequest, Finishing};
use anyhow::Result;
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
#[command(mut_arg("prompt", |a| a.required(true)))]
#[command(
    after_help = "Exit status: 0 the sample was accepted; 3 it was rejected (its rules listed); 1 error; 2 usage; 128+N stopped by signal N (129 SIGHUP, 130 SIGINT, 143 SIGTERM; its server stopped)."
)]
pub(crate) struct BenchArgs {
    #[command(flatten)]
    pub(crate) server: ServerArgs,
    #[command(flatten)]
    pub(crate) prompt: PromptArgs,
    /// Output tokens (max_tokens); the sample must finish by `length` with exactly N (at least 2:
    /// decode TPS needs two).
    #[arg(long, value_name = "N", value_parser = crate::bounds::u32_flag(2, crate::bounds::MAX_TOKENS))]
    pub(crate) tokens: u32,
    /// Send llama-server's `ignore_eos` so a model that would stop early decodes exactly N.
    #[arg(long)]
    pub(crate) ignore_eos: bool,
    #[command(flatten)]
    pub(crate) output: OutputArgs,
    /// Evidence folder (default: a new folder under the temp dir).
    #[arg(long, value_name = "DIR")]
    pub(crate) evidence: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) history: HistoryArgs,
}

pub(crate) fn run(a: BenchArgs) -> Result<i32> {
    check_model(&a.server.model)?;
    let prompt_file = a.prompt.prompt.as_deref().expect("clap requires --prompt");
    let read = crate::measure::calibrate::read_prompt_file(prompt_file)?;
    let expected_prompt_tokens = a.prompt.prompt_tokens.or(read.tokens);
    if expected_prompt_tokens.is_none() {
        eprintln!(
            "abprof: warning: {} has no calibration record and no --prompt-tokens was given: the prompt length is unchecked",
            prompt_file.display()
        );
    }
    let request = BenchRequest {
        server_bin: a.server.server_bin.clone(),
        program: a.server.binary(),
        model: a.server.model.clone(),
        common: a.server.launch.common_args()?,
        prompt: read.text,
        expected_prompt_tokens,
        tokens: a.tokens,
        ignore_eos: a.ignore_eos,
        evidence: a.evidence.clone().unwrap_or_else(|| default_evidence("bench")),
        port: port_or_free(a.server.port)?,
        health_timeout: a.server.launch.health_timeout(),
        stall_timeout: a.server.launch.stall_timeout(),
    };
    let how = Finishing { format: a.output.format(), history: a.history.location()?, gate: None };
    crate::app::bench(&request, how)
}
