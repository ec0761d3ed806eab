//! `abprof doctor`: is this host ready to measure, and what would add noise (src/doctor/).
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Result;
use clap::Args;

use super::args::{HistoryDb, OutputArgs, TelemetryArg};
use crate::doctor::DoctorPlan;
use crate::telemetry::OpenOptions;

#[derive(Args, Debug)]
pub(crate) struct DoctorArgs {
    /// The llama-server a study would run (or an `abprof build` artifact folder): its --version,
    /// and whether it offers --spec-type draft-mtp and --backend-sampling.
    #[arg(long, value_name = "BIN", value_parser = existing_server)]
    pub(crate) server_bin: Option<PathBuf>,
    /// The model a study would load: on an APU, whether it fits what the GPU may map (GTT and
    /// TTM's page limit) with room for its KV cache.
    #[arg(long, value_name = "GGUF", value_parser = existing_file)]
    pub(crate) model: Option<PathBuf>,
    /// Where a study's evidence would go: its free disk is measured (or that of the nearest
    /// folder above it that exists).
    #[arg(long, value_name = "DIR", default_value = ".", value_parser = folder_or_new)]
    pub(crate) root: PathBuf,
    /// A fixed port a study would use (default: check that the OS gives a free one).
    #[arg(long)]
    pub(crate) port: Option<u16>,
    #[command(flatten)]
    pub(crate) telemetry: TelemetryArg,
    /// What stands for /sys: telemetry, the CPU governor and boost, and the KFD's GPU processes
    /// are read under it (for fixture trees; the power state reads the real /sys).
    #[arg(long, default_value = "/sys", value_name = "DIR", value_parser = existing_folder)]
    pub(crate) sysfs_root: PathBuf,
    #[command(flatten)]
    pub(crate) db: HistoryDb,
    /// Print each finding's detail below it (why each telemetry backend did not open, say); the
    /// JSON always carries it.
    #[arg(long, short)]
    pub(crate) verbose: bool,
    #[command(flatten)]
    pub(crate) output: OutputArgs,
}

fn existing_server(s: &str) -> Result<PathBuf, String> {
    let p = PathBuf::from(s);
    if crate::variant::resolve_binary(&p).0.is_file() {
        return Ok(p);
    }
    Err(format!(
        "{s}: no such llama-server: pass the binary (build/bin/llama-server) or an `abprof build` artifact folder"
    ))
}

/// A tree that does not exist reads as a host without a GPU, cpufreq or KFD: a typo would report
/// the host ready.
fn existing_folder(s: &str) -> Result<PathBuf, String> {
    let p = PathBuf::from(s);
    if p.is_dir() {
        return Ok(p);
    }
    Err(format!("{s}: no such folder: pass a sysfs tree (the default /sys, or a fixture copy of one)"))
}

fn existing_file(s: &str) -> Result<PathBuf, String> {
    let p = PathBuf::from(s);
    if p.is_file() {
        return Ok(p);
    }
    Err(format!("{s}: no such file: pass the GGUF model a study would load"))
}

fn folder_or_new(s: &str) -> Result<PathBuf, String> {
    let p = PathBuf::from(s);
    if p.exists() && !p.is_dir() {
        return Err(format!("{s} is a file, not a folder: pass the folder a study's --root would be"));
    }
    Ok(p)
}

pub(crate) fn run(a: DoctorArgs) -> Result<i32> {
    let history = match a.db.location() {
        Ok(l) => Some(l),
        Err(e) if e.is::<crate::refusal::Refusal>() => return Err(e),
        // No place for a default history (no HOME): the finding says so.
        Err(_) => None,
    };
    let plan = DoctorPlan {
        telemetry: OpenOptions {
            kind: a.telemetry.telemetry,
            sysfs_root: a.sysfs_root.clone(),
            ..OpenOptions::default()
        },
        sysfs: a.sysfs_root,
        server: a.server_bin,
        root: a.root,
        port: a.port,
        history,
        cpu_window: Duration::from_secs(1),
        model: a.model,
    };
    crate::app::doctor(&plan, a.output.format(), a.verbose)
}
