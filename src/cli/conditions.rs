//! The sample conditions `ab` and `pi` share: the idle gate, the isolation hooks and telemetry.
use clap::Args;

use super::args::TelemetryArg;
use crate::study::file::{self, HookCommand, IdleGate, Isolation};
use crate::telemetry::SourceKind;

/// Run conditions: `--idle-samples`, `--foreign-cpu-max`, `--idle-timeout`, `--before`/`--after`/`--verify` hooks, `--telemetry`,
/// `--telemetry-hz` (ab, pi).
#[derive(Args, Debug, Clone)]
pub(crate) struct RunConditions {
    /// Consecutive idle samples the idle gate needs before each request.
    #[arg(long, default_value_t = file::default_consecutive(), value_name = "N",
          value_parser = crate::bounds::u32_flag(1, crate::bounds::MAX_IDLE_SAMPLES))]
    pub(crate) idle_samples: u32,
    /// Before each request, wait until other processes used at most this much CPU (% of one
    /// core) over the last second, printing the busiest ones while it waits; reject a sample when
    /// they used more during its request. Default 50 (docs/methodology.md §7.7, §9.1; the study
    /// file's `[idle] foreign_cpu_max_pct`).
    #[arg(long, value_name = "PCT", value_parser = non_negative)]
    pub(crate) foreign_cpu_max: Option<f64>,
    /// The idle gate's waits give up after S seconds: a server or GPU still busy ends the study;
    /// other processes still above --foreign-cpu-max let the request go ahead (it is retaken if
    /// rejected), and the third such wait in a row ends the study with exit status 1 (docs/
    /// methodology.md §9.1; the study file's `[idle] timeout_s`).
    #[arg(long, value_name = "S", default_value_t = file::default_gate_timeout() as u32,
          value_parser = crate::bounds::u32_flag(1, 86_400))]
    pub(crate) idle_timeout: u32,
    /// Isolation hook run before every sample (repeatable; no shell).
    #[arg(long, value_name = "CMD")]
    pub(crate) before: Vec<String>,
    /// Restore hook run once at exit, on every exit path (repeatable).
    #[arg(long, value_name = "CMD")]
    pub(crate) after: Vec<String>,
    /// Verification hook run after the restore (repeatable).
    #[arg(long, value_name = "CMD")]
    pub(crate) verify: Vec<String>,
    /// Before each request, after the idle gate, wait until the device is within --thermal-band
    /// °C of the study's first idle temperature, or at most --thermal-ceiling (docs/methodology.md
    /// §9.9; the study file's `[idle.thermal]`). Needs a GPU telemetry source.
    #[arg(long)]
    pub(crate) thermal_gate: bool,
    /// The thermal gate's band above the study's first idle temperature, °C.
    #[arg(long, value_name = "C", default_value_t = file::default_thermal_band(), value_parser = degrees, requires = "thermal_gate")]
    pub(crate) thermal_band: f64,
    /// The thermal gate also passes a device at or below this temperature, °C.
    #[arg(long, value_name = "C", value_parser = degrees, requires = "thermal_gate")]
    pub(crate) thermal_ceiling: Option<f64>,
    /// The thermal gate fails the study after waiting this many seconds.
    #[arg(long, value_name = "S", default_value_t = file::default_thermal_timeout() as u32, requires = "thermal_gate",
          value_parser = crate::bounds::u32_flag(1, 3600))]
    pub(crate) thermal_timeout: u32,
    #[command(flatten)]
    pub(crate) telemetry: TelemetryArg,
    /// Telemetry samples per second during each request; at most what the source refreshes (100
    /// Hz for NVML and CPU-only hosts, 1000 for amdgpu sysfs and ROCm SMI; docs/methodology.md §9.2).
    #[arg(long, default_value_t = file::default_hz(), value_name = "HZ",
          value_parser = crate::bounds::u32_flag(1, crate::bounds::MAX_TELEMETRY_HZ))]
    pub(crate) telemetry_hz: u32,
}

fn non_negative(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(format!("{s:?} is not a percentage of a core (a number ≥ 0, e.g. 50)")),
    }
}

fn degrees(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && (0.0..=150.0).contains(&v) => Ok(v),
        _ => Err(format!("{s:?} is not a temperature in °C (a number from 0 to 150, e.g. 3)")),
    }
}

fn lines(v: &[String]) -> Vec<HookCommand> {
    v.iter().map(|s| HookCommand::Line(s.clone())).collect()
}

impl RunConditions {
    pub(crate) fn telemetry(&self) -> SourceKind {
        self.telemetry.telemetry
    }

    pub(crate) fn idle(&self) -> IdleGate {
        let default = IdleGate::default();
        IdleGate {
            consecutive: self.idle_samples,
            timeout_s: u64::from(self.idle_timeout),
            foreign_cpu_max_pct: self.foreign_cpu_max.unwrap_or(default.foreign_cpu_max_pct),
            thermal: self.thermal_gate.then_some(file::ThermalGate {
                band_c: self.thermal_band,
                ceiling_c: self.thermal_ceiling,
                timeout_s: u64::from(self.thermal_timeout),
            }),
            ..default
        }
    }

    pub(crate) fn isolation(&self) -> Isolation {
        Isolation {
            before: lines(&self.before),
            after: lines(&self.after),
            verify: lines(&self.verify),
            ..Isolation::default()
        }
    }
}
