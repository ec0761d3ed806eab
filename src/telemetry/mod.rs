//! GPU (or, on GPU-less hosts, process CPU) telemetry: one `TelemetrySource` trait whose `read()`
//! returns a `Reading` of optional values, a backend per vendor interface, and a sampler thread
//! that reads a source on absolute deadlines and says how often each value really changes.
//!
//! Units are fixed per field (W, J, °C, MHz, bytes, %) whatever the backend, so the study and the
//! reports never convert. A field a backend cannot provide stays `None`: absent, never zero.
mod error;
mod reading;

pub mod amdgpu_sysfs;
pub(crate) mod csv;
pub mod gpu_metrics;
pub(crate) mod idle;
pub(crate) mod monitor;
pub mod nvml;
pub(crate) mod phases;
pub(crate) mod power_state;
pub(crate) mod proc_cpu;
pub(crate) mod record;
pub mod rocm_smi;
pub mod sampler;
pub mod select;
mod sysfs_file;
pub(crate) mod task_cpu;
pub(crate) mod thermal;

pub use error::TelemetryError;
pub use reading::Field;
pub use reading::Reading;
pub use select::{open, OpenOptions, SourceKind};

use serde::{Deserialize, Serialize};

/// Anything abprof can poll for a `Reading`. Implementations are opened once (library loaded,
/// files opened) and then read many times; `read` must not allocate, because the sampler calls
/// it up to a few thousand times a second.
pub trait TelemetrySource: Send {
    /// Which backend this is (`nvml`, `amdgpu-sysfs`, …).
    fn kind(&self) -> SourceKind;

    /// One line naming the device and what this source can and cannot read, for logs and
    /// evidence folders.
    fn describe(&self) -> String;

    /// How many devices this source's backend sees on the host: a server's devices are looked up
    /// among these indices (docs/methodology.md §9.11). 1 for a source of no GPU.
    fn devices_on_host(&self) -> u32 {
        1
    }

    /// One reading of everything this source provides.
    fn read(&mut self) -> Result<Reading, TelemetryError>;

    /// Power samples the driver buffered since the previous call (NVML keeps ~2.4 s of 20 ms
    /// samples). Sources without such a buffer add nothing.
    fn drain_driver_power(&mut self, _out: &mut Vec<DriverPowerSample>) -> Result<(), TelemetryError> {
        Ok(())
    }
}

/// One power value that the driver sampled by itself, at its own rate, on its own clock.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct DriverPowerSample {
    /// The driver's timestamp converted to CLOCK_MONOTONIC ns (see `nvml.rs` for how).
    pub(crate) mono_ns: u64,
    /// The driver's own timestamp, as it gave it (NVML: µs on the CPU's wall clock).
    pub(crate) driver_us: u64,
    pub(crate) power_w: f64,
}
