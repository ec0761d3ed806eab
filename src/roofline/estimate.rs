//! `abprof roofline`: one model's bytes per decode step at a context, the bandwidth of this host's
//! decoding memory, and the floor they make.
use super::bandwidth::{self, Bandwidth, Target};
use super::bytes::{KvShape, WeightBytes};
use super::gguf::GgmlType;
use super::{floor_ms, model_inputs, server_args, StepBytes};
use serde::Serialize;
use std::path::PathBuf;

/// Which memory to measure; `None` picks a CUDA, else a HIP device, else the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DeviceChoice {
    Auto,
    Cpu,
    Cuda,
    Hip,
}

#[derive(Debug, Clone)]
pub(crate) struct EstimatePlan {
    pub(crate) model: Option<PathBuf>,
    pub(crate) kv: GgmlType,
    pub(crate) context: u64,
    pub(crate) device: DeviceChoice,
    /// Host threads; `None`: llama-server's default, the physical cores.
    pub(crate) threads: Option<u32>,
    pub(crate) fresh: bool,
}

/// One model at one context.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct ModelBytes {
    pub(crate) path: PathBuf,
    pub(crate) weights: WeightBytes,
    pub(crate) kv: KvShape,
    pub(crate) context_tokens: f64,
    pub(crate) bytes: StepBytes,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct RooflineEstimate {
    pub(crate) model: Option<ModelBytes>,
    pub(crate) target: Target,
    pub(crate) bandwidth: Option<Bandwidth>,
    /// Why there is no bandwidth.
    pub(crate) bandwidth_error: Option<String>,
    /// `bytes.total ÷ bandwidth`, in ms per decode step.
    pub(crate) floor_ms: Option<f64>,
}

pub(crate) fn estimate(plan: &EstimatePlan) -> anyhow::Result<RooflineEstimate> {
    let model = match &plan.model {
        Some(path) => {
            let (weights, kv) = model_inputs(path, (plan.kv, plan.kv))?;
            let context_tokens = plan.context as f64;
            let bytes = StepBytes::at(&weights, &kv, context_tokens);
            Some(ModelBytes { path: path.clone(), weights, kv, context_tokens, bytes })
        }
        None => None,
    };
    let threads = || plan.threads.unwrap_or_else(|| server_args::threads(&[]));
    let target = match plan.device {
        DeviceChoice::Cpu => Target::Cpu { threads: threads() },
        DeviceChoice::Cuda => Target::Cuda { device: 0 },
        DeviceChoice::Hip => Target::Hip { device: 0 },
        DeviceChoice::Auto => bandwidth::probe_gpu().unwrap_or_else(|| Target::Cpu { threads: threads() }),
    };
    let (bandwidth, bandwidth_error) = match bandwidth::bandwidth(&target, plan.fresh) {
        Ok(b) => (Some(b), None),
        Err(e) => (None, Some(e.to_string())),
    };
    let floor_ms = model.as_ref().zip(bandwidth.as_ref()).map(|(m, b)| floor_ms(m.bytes.total, b.gb_per_s));
    Ok(RooflineEstimate { model, target, bandwidth, bandwidth_error, floor_ms })
}
