//! `abprof calibrate`: a prompt of exactly N chat-template tokens, saved as text.
use super::args::{prompt_tokens, LaunchArgs, OutputArgs};
use super::common::{block_on_until_signal, check_model, port_or_free, runtime};
use crate::client::calibrate::DEFAULT_SOURCE;
use crate::client::{calibrate, Client};
use crate::measure::calibrate::calibrate_on_fresh_server;
use crate::report::calibration::SavedCalibration;
use crate::report::emit;
use crate::server::LaunchSpec;
use anyhow::{Context, Result};
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
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
    let source = match &a.source {
        Some(p) => std::fs::read_to_string(p).with_context(|| format!("cannot read --source {}", p.display()))?,
        None => DEFAULT_SOURCE.to_string(),
    };
    let rt = runtime();
    let cal = block_on_until_signal(&rt, async {
        match &a.url {
            Some(url) => calibrate::calibrate(&Client::new(url), &source, a.prompt_tokens, a.launch.stall_timeout())
                .await
                .map_err(anyhow::Error::from),
            None => {
                let model = a.model.clone().expect("clap requires it");
                check_model(&model)?;
                let dir = tempfile::tempdir()?;
                let mut args = vec!["-m".to_string(), model.display().to_string()];
                args.extend(a.launch.common_args()?);
                let spec = LaunchSpec {
                    program: crate::variant::resolve_binary(a.server_bin.as_ref().expect("clap requires it")).0,
                    args,
                    env: vec![],
                    host: "127.0.0.1".into(),
                    port: port_or_free(a.port)?,
                    log_file: dir.path().join("server.log"),
                    console_file: dir.path().join("console.log"),
                    signal_descendant: None,
                    cpus: None,
                };
                calibrate_on_fresh_server(
                    &spec,
                    a.launch.health_timeout(),
                    a.launch.stall_timeout(),
                    &source,
                    a.prompt_tokens,
                )
                .await
            }
        }
    })?;
    calibrate::save(&cal, &a.out).with_context(|| format!("cannot write {}", a.out.display()))?;
    emit(&SavedCalibration { calibration: &cal, file: &a.out }, a.output.format());
    Ok(0)
}
