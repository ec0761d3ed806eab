//! `abprof roofline [--model M] [--kv TYPE] [--ctx N]`: the bytes one decode step reads, this
//! host's decoding-memory bandwidth, and the floor they make (docs/methodology.md §18).
use super::args::OutputArgs;
use crate::roofline::estimate::{DeviceChoice, EstimatePlan};
use crate::roofline::gguf::GgmlType;
use anyhow::Result;
use clap::{Args, ValueEnum};
use std::path::PathBuf;

#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum DeviceArg {
    /// A CUDA device, else a HIP device, else host memory.
    Auto,
    /// Host memory (streaming read).
    Cpu,
    /// CUDA device 0 (device-to-device copy).
    Cuda,
    /// HIP device 0 (device-to-device copy).
    Hip,
}

#[derive(Args, Debug)]
pub(crate) struct RooflineArgs {
    /// A GGUF model: its bytes per decode step by class, and the floor.
    #[arg(long, value_name = "GGUF", value_parser = existing_file)]
    pub(crate) model: Option<PathBuf>,
    /// KV cache type of K and V, as llama-server's --cache-type-k/-v take it.
    #[arg(long, value_name = "TYPE", default_value = "f16", value_parser = kv_type, requires = "model")]
    pub(crate) kv: GgmlType,
    /// Tokens of context the KV cache holds during the step (prompt + tokens generated so far).
    #[arg(long, value_name = "N", default_value_t = 0, requires = "model")]
    pub(crate) ctx: u64,
    /// Which memory to measure.
    #[arg(long, value_enum, default_value = "auto")]
    pub(crate) device: DeviceArg,
    /// Host threads of the streaming read (default: llama-server's default, the physical cores).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub(crate) threads: Option<u32>,
    /// Measure again even when this host measured the same memory less than a day ago.
    #[arg(long)]
    pub(crate) fresh: bool,
    #[command(flatten)]
    pub(crate) output: OutputArgs,
}

fn existing_file(s: &str) -> Result<PathBuf, String> {
    let p = PathBuf::from(s);
    if p.is_file() {
        Ok(p)
    } else {
        Err(format!("{s} is not a file: pass a GGUF model"))
    }
}

fn kv_type(s: &str) -> Result<GgmlType, String> {
    if !crate::variant::KV_TYPES.contains(&s) {
        return Err(format!("{s:?} is not a KV cache type: pass one of {}", crate::variant::KV_TYPES.join(", ")));
    }
    GgmlType::from_name(s).map_err(|e| e.to_string())
}

pub(crate) fn run(a: RooflineArgs) -> Result<i32> {
    let plan = EstimatePlan {
        model: a.model,
        kv: a.kv,
        context: a.ctx,
        device: match a.device {
            DeviceArg::Auto => DeviceChoice::Auto,
            DeviceArg::Cpu => DeviceChoice::Cpu,
            DeviceArg::Cuda => DeviceChoice::Cuda,
            DeviceArg::Hip => DeviceChoice::Hip,
        },
        threads: a.threads,
        fresh: a.fresh,
    };
    crate::app::roofline(&plan, a.output.format())
}
