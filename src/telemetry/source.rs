//! What every backend is: the `TelemetrySource` trait, and the power sample a driver buffers by
//! itself. The bottom of the folder: the backends, the sampler and the study's callers build on it.
use serde::{Deserialize, Serialize};

use super::error::TelemetryError;
use super::power_field::PowerField;
use super::reading::Reading;
use super::source_kind::SourceKind;

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

    /// What each power value this source fills measures (docs/methodology.md §9.7); empty for a
    /// source of no power.
    fn power_fields(&self) -> Vec<PowerField> {
        Vec::new()
    }

    /// Readings whose gpu_metrics table was rejected as torn (a header or size that does not
    /// match the table's revision), since the source opened; those readings went on without the
    /// table's values (docs/methodology.md §9.2).
    fn torn_reads(&self) -> u64 {
        0
    }

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
