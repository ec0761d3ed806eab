//! How abprof starts llama-server: the binary, model and port of one server, and the arguments
//! and health wait every server gets.
use anyhow::Result;
use clap::Args;
use std::path::PathBuf;
use std::time::Duration;

/// Launch: `--server-args`, `--health-timeout` and `--stall-timeout`, for every command that starts servers.
#[derive(Args, Debug, Clone)]
pub(crate) struct LaunchArgs {
    /// Further server arguments, split like a shell splits words (no shell runs them), e.g.
    /// "-c 4096 -t 2 -np 1". --host, --port and --log-file are abprof's.
    #[arg(long, value_name = "ARGS", default_value = "", allow_hyphen_values = true)]
    pub(crate) server_args: String,
    /// Seconds to wait for each server's /health before giving up.
    #[arg(long, value_name = "SECS", default_value_t = crate::study::file::default_health_timeout(),
          value_parser = crate::bounds::u64_flag(1, crate::bounds::MAX_TIMEOUT_S))]
    pub(crate) health_timeout: u64,
    /// Seconds without a byte from the server before a streamed request is given up as stalled
    /// (the response headers included, so a long prefill on a slow host may need more); for
    /// `pi`, seconds without a byte of Pi's output.
    #[arg(long, value_name = "SECS", default_value_t = crate::study::file::default_stall_timeout(),
          value_parser = crate::bounds::u64_flag(1, crate::bounds::MAX_TIMEOUT_S))]
    pub(crate) stall_timeout: u64,
}

impl LaunchArgs {
    pub(crate) fn common_args(&self) -> Result<Vec<String>> {
        split_server_args(&self.server_args)
    }

    pub(crate) fn health_timeout(&self) -> Duration {
        Duration::from_secs(self.health_timeout)
    }

    pub(crate) fn stall_timeout(&self) -> Duration {
        Duration::from_secs(self.stall_timeout)
    }
}

/// Server: `--server-bin`, `--model`, `--port` of the one server a command starts, plus
/// [`LaunchArgs`] (bench).
#[derive(Args, Debug, Clone)]
pub(crate) struct ServerArgs {
    /// The llama-server binary (or an `abprof build` artifact folder).
    #[arg(long, value_name = "BIN")]
    pub(crate) server_bin: PathBuf,
    /// The GGUF model, passed as `-m`.
    #[arg(long, value_name = "GGUF")]
    pub(crate) model: PathBuf,
    /// Loopback port for the server (default: a free one the OS picks).
    #[arg(long)]
    pub(crate) port: Option<u16>,
    #[command(flatten)]
    pub(crate) launch: LaunchArgs,
}

impl ServerArgs {
    pub(crate) fn binary(&self) -> PathBuf {
        crate::variant::resolve_binary(&self.server_bin).0
    }
}

fn split_server_args(s: &str) -> Result<Vec<String>> {
    match crate::variant::split_args(s) {
        Some(v) => Ok(v),
        None => crate::refusal::refuse!("cannot split --server-args {s:?} like a shell would: check its quotes"),
    }
}
