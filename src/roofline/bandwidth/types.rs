//! What the bandwidth measurement shares across its parts: the measured figure, its passes, the
//! errors, and the runtime trait the CUDA and HIP copies implement.
use super::target::Target;
use serde::{Deserialize, Serialize};
use thiserror::Error;

#[derive(Debug, Error)]
pub(crate) enum BandwidthError {
    #[error("no {runtime} runtime library could be loaded (tried {tried}): {detail}; set {env} to its path")]
    LibraryMissing { runtime: &'static str, tried: String, detail: String, env: &'static str },
    #[error("{library} lacks {symbol}: it is too old for abprof's copy-bandwidth measurement")]
    SymbolMissing { library: String, symbol: &'static str },
    #[error("{runtime} sees no device {device}: {detail}")]
    NoDevice { runtime: &'static str, device: u32, detail: String },
    #[error("{call} failed: {name} ({code})")]
    Call { call: &'static str, code: i64, name: String },
    #[error("copy bandwidth: {0}")]
    DeviceMemory(String),
    #[error("no timed pass gave a figure (every pass took no measurable time)")]
    NoPass,
    #[error("host memory bandwidth: {0}")]
    Cpu(String),
}

/// What a CUDA or HIP runtime call's status code means to the measurement.
pub(crate) enum CallStatus {
    Success,
    /// No device, or no driver for one.
    NoDevice,
    Failed,
}

impl CallStatus {
    /// The one status→error step the CUDA and HIP runtimes share; `name` names the code.
    pub(crate) fn into_result(
        self,
        runtime: &'static str,
        call: &'static str,
        code: i64,
        name: impl FnOnce() -> String,
    ) -> Result<(), BandwidthError> {
        match self {
            CallStatus::Success => Ok(()),
            CallStatus::NoDevice => Err(BandwidthError::NoDevice {
                runtime,
                device: 0,
                detail: format!("{call} returned {} ({code})", name()),
            }),
            CallStatus::Failed => Err(BandwidthError::Call { call, code, name: name() }),
        }
    }
}

/// One bandwidth measurement and everything a reader needs to judge it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Bandwidth {
    pub(crate) target: Target,
    /// The fastest pass, in GB/s (10⁹ bytes per second): the figure the floor divides by.
    pub(crate) gb_per_s: f64,
    pub(crate) median_gb_per_s: f64,
    pub(crate) passes: u32,
    pub(crate) buffer_bytes: u64,
    /// How it was measured, in words.
    pub(crate) method: String,
    /// What was measured: the CPU model, or the GPU's name and PCI bus id.
    pub(crate) device: String,
    pub(crate) host: String,
    pub(crate) measured_at: String,
    pub(crate) measured_unix: i64,
    /// Taken from the cache: measured earlier on this host and device, less than a day ago.
    #[serde(default)]
    pub(crate) cached: bool,
}

impl Bandwidth {
    /// "CPU streaming read …, measured … (cached)": where the figure comes from, in one line.
    pub(crate) fn source(&self) -> String {
        format!(
            "{} on {}, best of {} passes over {} (median {:.1} GB/s), measured {}{}",
            self.method,
            self.device,
            self.passes,
            human_bytes(self.buffer_bytes as f64),
            self.median_gb_per_s,
            self.measured_at,
            if self.cached { " (cached)" } else { "" }
        )
    }
}

/// What a device-runtime measurement found before its timing: which device it is.
pub(crate) struct DeviceIdentity {
    pub(crate) name: String,
    pub(crate) pci_bus_id: String,
}

/// Timed passes and how they were taken, before the record is stamped.
pub(crate) struct Passes {
    pub(crate) gb_per_s: Vec<f64>,
    pub(crate) buffer_bytes: u64,
    pub(crate) method: String,
}

/// How many timed passes each measurement takes.
pub(crate) const PASSES: u32 = 8;

/// What the CUDA and HIP runtimes both offer the measurement.
pub(crate) trait DeviceRuntime {
    fn identify(&self, device: u32) -> Result<DeviceIdentity, BandwidthError>;
    fn copy_passes(&self, device: u32, passes: u32) -> Result<Passes, BandwidthError>;
}

/// "1.00 GiB", "272 B": bytes as a reader takes them in.
pub(crate) fn human_bytes(b: f64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b;
    let mut i = 0;
    while v >= 1024.0 && i + 1 < UNITS.len() {
        v /= 1024.0;
        i += 1;
    }
    if i == 0 {
        format!("{v:.0} B")
    } else {
        format!("{v:.2} {}", UNITS[i])
    }
}
