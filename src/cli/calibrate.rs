//! `abprof calibrate`: a prompt of exactly N chat-template tokens, saved as text.
use super::args::{prompt_tokens, LaunchArgs, OutputArgs};
use super::common::{check_model, port_or_free};
use crate::app::{CalibrateRequest, CalibrationServer};
use anyhow::Result;
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
#[command(
    after_help = "Exit status: 0 calibrated; 1 error; 2 usage; 128+N stopped by signal N (129 SIGHUP, 130 SIGINT, 143 SIGTERM; its server stopped)."
)]
pub(crate) struct CalibrateArgs {
    /// llama-server binary to start for calibration (or use --url).
    #[arg(long, value_name = "BIN", required_unless_present = "url")]
    pub(crate) server_bin: Option<PathBuf>,
    /// Model for the started server.
    #[arg(long, value_name = "GGUF", required_unless_present = "url")]
    pub(crate) model: Option<PathBuf>,
    /// Server arguments (they change nothing about token counts, but keep them equal to the
    /// benchmark's to be safe) and the health wait.
    #[command(flatten)]
    pub(crate) launch: LaunchArgs,
    /// Calibrate against a server that is already running instead.
    #[arg(long, conflicts_with_all = ["server_bin", "model"])]
    pub(crate) url: Option<String>,
    /// Exact prompt tokens wanted (chat template included).
    // `--tokens` was its name; every other command's `--tokens` counts output tokens.
    #[arg(long, value_name = "N", alias = "tokens", value_parser = prompt_tokens())]
    pub(crate) prompt_tokens: u64,
    /// Where to save the prompt text (a `.calibration.json` is written beside it).
    #[arg(long, value_name = "FILE")]
    pub(crate) out: PathBuf,
    /// Source text to cut the prompt from (default: abprof's own).
    #[arg(long, value_name = "FILE")]
    pub(crate) source: Option<PathBuf>,
    /// Loopback port for the started server (default: a free one the OS picks).
    #[arg(long)]
    pub(crate) port: Option<u16>,
    #[command(flatten)]
    pub(crate) output: OutputArgs,
}

pub(crate) fn run(a: CalibrateArgs) -> Result<i32> {
    let server = match (a.url, a.server_bin, a.model) {
        (Some(url), _, _) => CalibrationServer::Url(url),
        (None, Some(binary), Some(model)) => {
            check_model(&model)?;
            CalibrationServer::Start {
                binary,
                model,
                common_args: a.launch.common_args()?,
                port: port_or_free(a.port)?,
                health_timeout: a.launch.health_timeout(),
            }
        }
        _ => unreachable!("clap requires --url or --server-bin and --model"),
    };
    crate::app::calibrate(CalibrateRequest {
        server,
        prompt_tokens: a.prompt_tokens,
        stall_timeout: a.launch.stall_timeout(),
        source: a.source,
        out: a.out,
        format: a.output.format(),
    })
}
