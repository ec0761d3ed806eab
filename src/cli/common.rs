//! Options several subcommands share, and the small conversions from them to lower floors.
use anyhow::{bail, Context, Result};
use clap::Args;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How to start one llama-server.
#[derive(Args, Debug, Clone)]
pub struct ServerOpts {
    /// The llama-server binary (or an `abprof build` artifact folder).
    #[arg(long, value_name = "BIN")]
    pub server_bin: PathBuf,
    /// The GGUF model, passed as `-m`.
    #[arg(long, value_name = "GGUF")]
    pub model: PathBuf,
    /// Further server arguments, split like a shell splits words (no shell runs them), e.g.
    /// "-c 4096 -t 2 -np 1". --host, --port and --log-file are abprof's.
    #[arg(long, value_name = "ARGS", default_value = "", allow_hyphen_values = true)]
    pub server_args: String,
    /// Loopback port for the server (default: a free one the OS picks).
    #[arg(long)]
    pub port: Option<u16>,
    /// Seconds to wait for /health before giving up.
    #[arg(long, default_value_t = 600, value_name = "SECS")]
    pub health_timeout: u64,
}

impl ServerOpts {
    pub fn binary(&self) -> PathBuf {
        crate::variant::resolve_binary(&self.server_bin).0
    }

    pub fn common_args(&self) -> Result<Vec<String>> {
        split_server_args(&self.server_args)
    }

    pub fn health_timeout(&self) -> Duration {
        Duration::from_secs(self.health_timeout)
    }
}

pub fn split_server_args(s: &str) -> Result<Vec<String>> {
    match crate::variant::split_args(s) {
        Some(v) => Ok(v),
        None => bail!("cannot split --server-args {s:?} like a shell would: check its quotes"),
    }
}

pub fn check_model(model: &Path) -> Result<()> {
    if !model.is_file() {
        bail!(
            "model {} does not exist: pass a GGUF file (scripts/testbed prints TARGET_MODEL and SMOLLM2_MODEL)",
            model.display()
        );
    }
    Ok(())
}

pub fn read_prompt(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).with_context(|| {
        format!(
            "cannot read prompt file {}: make one with `abprof calibrate ... --out {}`",
            path.display(),
            path.display()
        )
    })
}

pub fn port_or_free(port: Option<u16>) -> Result<u16> {
    match port {
        Some(p) => Ok(p),
        None => crate::server::free_port("127.0.0.1").context("no free loopback port"),
    }
}

/// A fresh folder name under the system temp dir, for evidence the user did not place.
pub fn default_evidence(kind: &str) -> PathBuf {
    let ts = chrono::Local::now().format("%Y%m%d-%H%M%S");
    std::env::temp_dir().join(format!("abprof-{kind}-{ts}-{}", std::process::id()))
}

/// The async runtime every HTTP-speaking subcommand runs on. Multi-threaded so a blocking idle
/// gate can run in place without stalling the stream reader.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("tokio runtime")
}
