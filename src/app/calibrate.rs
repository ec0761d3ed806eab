//! `abprof calibrate` from its typed request to its exit status: a prompt of exactly N
//! chat-template tokens, on a server abprof starts (and stops) or one already running.
use crate::client::calibrate::DEFAULT_SOURCE;
use crate::client::{calibrate, Client};
use crate::measure::calibrate::calibrate_on_fresh_server;
use crate::report::calibration::SavedCalibration;
use crate::report::{emit, Format};
use crate::server::LaunchSpec;
use anyhow::{Context, Result};
use std::path::PathBuf;
use std::time::Duration;

/// Where the tokens are counted.
pub(crate) enum CalibrationServer {
    /// A server that is already running.
    Url(String),
    /// A server abprof starts: `binary -m model common_args` on loopback `port`.
    Start { binary: PathBuf, model: PathBuf, common_args: Vec<String>, port: u16, health_timeout: Duration },
}

pub(crate) struct CalibrateRequest {
    pub(crate) server: CalibrationServer,
    pub(crate) prompt_tokens: u64,
    pub(crate) stall_timeout: Duration,
    /// Text to cut the prompt from (default: abprof's own).
    pub(crate) source: Option<PathBuf>,
    pub(crate) out: PathBuf,
    pub(crate) format: Format,
}

/// Calibrates, saves the prompt (and its `.calibration.json`) and prints it.
pub(crate) fn calibrate(r: CalibrateRequest) -> Result<i32> {
    let source = match &r.source {
        Some(p) => std::fs::read_to_string(p).with_context(|| format!("cannot read --source {}", p.display()))?,
        None => DEFAULT_SOURCE.to_string(),
    };
    let rt = crate::client::runtime();
    let cal = crate::stop_signal::block_on_until_signal(&rt, async {
        match &r.server {
            CalibrationServer::Url(url) => {
                calibrate::calibrate(&Client::new(url), &source, r.prompt_tokens, r.stall_timeout)
                    .await
                    .map_err(anyhow::Error::from)
            }
            CalibrationServer::Start { binary, model, common_args, port, health_timeout } => {
                let mut dir = tempfile::Builder::new().prefix("abprof-calibrate-").tempdir()?;
                let (log_file, console_file) = crate::study::sample_folder::SampleFolder::at(dir.path()).server_logs();
                let mut args = vec!["-m".to_string(), model.display().to_string()];
                args.extend(common_args.iter().cloned());
                let spec = LaunchSpec {
                    program: crate::variant::resolve_binary(binary).0,
                    args,
                    env: vec![],
                    host: "127.0.0.1".into(),
                    port: *port,
                    log_file,
                    console_file,
                    signal_descendant: None,
                    cpus: None,
                    engine: Default::default(),
                };
                let result =
                    calibrate_on_fresh_server(&spec, *health_timeout, r.stall_timeout, &source, r.prompt_tokens).await;
                // A failure names the server's log and console output: they stay for the user to read.
                dir.disable_cleanup(result.is_err());
                result
            }
        }
    })?;
    calibrate::save(&cal, &r.out).with_context(|| format!("cannot write {}", r.out.display()))?;
    emit(&SavedCalibration { calibration: &cal, file: &r.out }, r.format);
    Ok(0)
}
