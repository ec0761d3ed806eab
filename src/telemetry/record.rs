//! What the idle gate and the telemetry series leave in a sample's record. Typed, so a summary
//! reads fields, never string keys; every field has a default so records written by earlier
//! releases (where some of these were absent) still load.
use super::phases::PhaseStats;
use super::sampler::FieldActivity;
use serde::{Deserialize, Serialize};

/// The idle gate before one request: what it read, against which bounds, and how long it waited.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct IdleGateRecord {
    pub source: String,
    pub consecutive: u32,
    pub spacing_ms: f64,
    pub threshold_busy_pct: Option<f64>,
    pub threshold_power_w: Option<f64>,
    pub threshold_cpu_pct: Option<f64>,
    pub waited_ms: f64,
}

/// CPU used on the host during the request by everything but the server and abprof.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct HostCpu {
    /// % of one core.
    pub foreign_pct: f64,
    /// The server's own use, % of one core.
    pub server_pct: f64,
    pub source: String,
}

/// The telemetry series over one request, summarized; the series itself is `csv` beside it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TelemetryRecord {
    pub source: String,
    pub achieved_hz: f64,
    pub samples: usize,
    pub fields: Vec<FieldActivity>,
    /// [prefill, decode]; absent when the request carried no stream stamps (a Pi run).
    pub phases: Option<[PhaseStats; 2]>,
    /// File name of the series, relative to the sample folder.
    pub csv: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_cpu: Option<HostCpu>,
}
