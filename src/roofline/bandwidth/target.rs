//! Which memory a llama-server's decode streams from: host memory read by its threads, or a
//! GPU's (docs/methodology.md §18 "which device").
use crate::roofline::server_args;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub(crate) enum Target {
    /// Host memory, read by `threads` threads (the server's `-t`).
    Cpu { threads: u32 },
    /// A CUDA device, by the runtime's index as abprof's own environment sees it.
    Cuda { device: u32 },
    /// A HIP device, likewise.
    Hip { device: u32 },
}

impl Target {
    pub(crate) fn kind_name(&self) -> &'static str {
        match self {
            Target::Cpu { .. } => "cpu",
            Target::Cuda { .. } => "cuda",
            Target::Hip { .. } => "hip",
        }
    }

    pub(crate) fn describe(&self) -> String {
        match self {
            Target::Cpu { threads } => format!("host memory, {threads} threads"),
            Target::Cuda { device } => format!("CUDA device {device}"),
            Target::Hip { device } => format!("HIP device {device}"),
        }
    }
}

/// The GPU vendor a study's telemetry watched, when it watched one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum GpuVendor {
    Nvidia,
    Amd,
}

/// The memory a llama-server launched with `args` decodes from. Host memory when it offloads
/// nothing; else the GPU the study's telemetry watched; else whatever GPU a runtime shows
/// (`probe`); else host memory.
pub(crate) fn for_server(
    args: &[String],
    telemetry_gpu: Option<GpuVendor>,
    probe: impl FnOnce() -> Option<Target>,
) -> Target {
    if server_args::offloads_nothing(args) {
        return Target::Cpu { threads: server_args::threads(args) };
    }
    match telemetry_gpu {
        Some(GpuVendor::Nvidia) => Target::Cuda { device: 0 },
        Some(GpuVendor::Amd) => Target::Hip { device: 0 },
        None => probe().unwrap_or_else(|| Target::Cpu { threads: server_args::threads(args) }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        shlex::split(s).unwrap()
    }

    #[test]
    fn the_server_args_pick_host_or_gpu_and_the_threads() {
        let gpu = || Some(Target::Cuda { device: 0 });
        assert_eq!(for_server(&args("-c 4096 -t 2 -ngl 0"), None, gpu), Target::Cpu { threads: 2 });
        assert_eq!(
            for_server(&args("--device none --threads=3"), Some(GpuVendor::Nvidia), gpu),
            Target::Cpu { threads: 3 }
        );
        assert_eq!(for_server(&args("-ngl 0 -ngl 99"), None, gpu), Target::Cuda { device: 0 }, "the last -ngl wins");
        assert_eq!(for_server(&args("-ngl 99"), Some(GpuVendor::Amd), gpu), Target::Hip { device: 0 });
        assert_eq!(for_server(&args("-t 2"), None, || None), Target::Cpu { threads: 2 });
        assert!(matches!(for_server(&args(""), None, || None), Target::Cpu { threads } if threads >= 1));
    }
}
