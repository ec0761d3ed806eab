//! The sample conditions `ab` and `pi` share: the idle gate, the isolation hooks and telemetry.
use clap::Args;

use crate::study::file::{self, HookCommand, IdleGate, Isolation};

#[derive(Args, Debug, Clone)]
pub struct ConditionArgs {
    /// Consecutive idle samples the idle gate needs before each request.
    #[arg(long, default_value_t = file::default_consecutive(), value_name = "N")]
    pub idle_samples: u32,
    /// Isolation hook run before every sample (repeatable; no shell).
    #[arg(long, value_name = "CMD")]
    pub before: Vec<String>,
    /// Restore hook run once at exit, on every exit path (repeatable).
    #[arg(long, value_name = "CMD")]
    pub after: Vec<String>,
    /// Verification hook run after the restore (repeatable).
    #[arg(long, value_name = "CMD")]
    pub verify: Vec<String>,
    /// GPU telemetry for the idle gate and the power series: auto, rocm-smi, amdgpu-sysfs, nvml, none.
    #[arg(long, default_value_t = file::default_telemetry(), value_name = "KIND")]
    pub telemetry: String,
    /// Telemetry samples per second during each request.
    #[arg(long, default_value_t = file::default_hz(), value_name = "HZ")]
    pub telemetry_hz: u32,
}

fn lines(v: &[String]) -> Vec<HookCommand> {
    v.iter().map(|s| HookCommand::Line(s.clone())).collect()
}

impl ConditionArgs {
    pub fn idle(&self) -> IdleGate {
        IdleGate { consecutive: self.idle_samples, ..IdleGate::default() }
    }

    pub fn isolation(&self) -> Isolation {
        Isolation {
            before: lines(&self.before),
            after: lines(&self.after),
            verify: lines(&self.verify),
            ..Isolation::default()
        }
    }
}
