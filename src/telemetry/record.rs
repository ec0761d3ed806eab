//! What the idle gate and the telemetry series leave in a sample's record. Typed, so a summary
//! reads fields, never string keys; every field has a default so records written by earlier
//! releases (where some of these were absent) still load.
use super::phases::PhaseStats;
use super::power_field::PowerField;
use super::sampler::FieldActivity;
use serde::{Deserialize, Serialize};

/// The idle gate before one request: what it read, against which bounds, and how long it waited.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct IdleGateRecord {
    pub(crate) source: String,
    pub(crate) consecutive: u32,
    pub(crate) spacing_ms: f64,
    pub(crate) threshold_busy_pct: Option<f64>,
    pub(crate) threshold_power_w: Option<f64>,
    pub(crate) threshold_cpu_pct: Option<f64>,
    pub(crate) waited_ms: f64,
    /// The thermal gate after it, when the study has one (docs/methodology.md §9.9).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) thermal: Option<ThermalRecord>,
    /// The wait for other processes' CPU after it (docs/methodology.md §9.1); absent in records
    /// of earlier releases, which did not wait.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) foreign: Option<ForeignWaitRecord>,
}

/// The gate's wait, right before the request, until other processes used at most the study's
/// `other-workload` limit over the last second (docs/methodology.md §7.7, §9.1).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct ForeignWaitRecord {
    /// The limit, % of one core: the study's `foreign_cpu_max_pct`.
    pub(crate) max_pct: f64,
    /// Other processes' CPU over the last second when the wait ended, % of one core.
    pub(crate) foreign_pct: f64,
    /// From the end of the idle readings to the end of this wait (a GPU-less host spends its
    /// first second measuring).
    pub(crate) waited_ms: f64,
    /// The gate's timeout passed with the host still busy; the request was sent anyway.
    pub(crate) timed_out: bool,
    /// The busiest other processes of the wait's busiest second; empty when the host was quiet
    /// at once.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) top: Vec<super::foreign::ProcessShare>,
}

/// The thermal gate before one request: what it waited for, the temperature the sample started
/// at, and how long it spent cooling.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct ThermalRecord {
    pub(crate) target: String,
    pub(crate) start_c: f64,
    pub(crate) cooling_ms: f64,
}

/// CPU used on the host during the request by everything but the server and abprof.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct HostCpu {
    /// % of one core.
    pub(crate) foreign_pct: f64,
    /// The server's own use (its whole process group), % of one core.
    pub(crate) server_pct: f64,
    /// abprof's own use (every thread of it: the sampler, the stream, the runtime), % of one
    /// core; absent in records of releases before it was counted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) abprof_pct: Option<f64>,
    pub(crate) source: String,
}

/// The telemetry series over one request, summarized; the series itself is `csv` beside it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct TelemetryRecord {
    pub(crate) source: String,
    pub(crate) achieved_hz: f64,
    pub(crate) samples: usize,
    pub(crate) fields: Vec<FieldActivity>,
    /// [prefill, decode]; absent when the request carried no stream stamps (a Pi run).
    pub(crate) phases: Option<[PhaseStats; 2]>,
    /// File name of the series, relative to the sample folder.
    pub(crate) csv: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) host_cpu: Option<HostCpu>,
    /// A server on several GPUs (docs/methodology.md §9.11): each device's series, whose phases
    /// `phases` sums; empty for one device (`source`, `samples`, `fields` and `csv` are then its
    /// own; for several they are the first device's).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) devices: Vec<DeviceTelemetry>,
    /// What said the server runs on these devices (its flags and environment).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) devices_from: Option<String>,
    /// What each power value of the source measures (docs/methodology.md §9.7).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) power_fields: Vec<PowerField>,
    /// Readings whose gpu_metrics table was rejected as torn during the request (§9.2).
    #[serde(skip_serializing_if = "is_zero")]
    pub(crate) torn_reads: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// One device's telemetry over one request of a server on several GPUs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct DeviceTelemetry {
    /// The telemetry backend's index (NVML and ROCm SMI index, n-th amdgpu card).
    pub(crate) index: u32,
    pub(crate) source: String,
    pub(crate) samples: usize,
    /// [prefill, decode] on this device alone.
    pub(crate) phases: Option<[PhaseStats; 2]>,
    /// File name of this device's series, relative to the sample folder.
    pub(crate) csv: String,
}
