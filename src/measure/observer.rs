//! What a study plugs into a sample: the idle gate before the load and telemetry around it.
//! Measurement stays free of telemetry: the lifecycle only calls these hooks at fixed points.
use crate::client::StreamRecord;
use crate::telemetry::record::{IdleGateRecord, TelemetryRecord};

/// Where a sample is, for progress displays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SamplePhase {
    Starting,
    IdleGate,
    Request,
    Stopping,
}

impl SamplePhase {
    pub(crate) fn name(self) -> &'static str {
        match self {
            SamplePhase::Starting => "start+health",
            SamplePhase::IdleGate => "idle gate",
            SamplePhase::Request => "request",
            SamplePhase::Stopping => "stop",
        }
    }
}

/// Why the idle gate let no request through.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum GateError {
    /// abprof was told to stop while the gate waited.
    Interrupted,
    /// The gate gave up (it timed out, or telemetry failed).
    Failed(GateFailure),
}

/// How the gate gave up, each said in the one line a user reads.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(crate) enum GateFailure {
    /// The GPU (or the server's CPU) stayed busy past the gate's timeout.
    #[error("{0}")]
    NeverIdle(String),
    /// The GPU did not reach its thermal target before the timeout.
    #[error("{0}")]
    NeverCool(String),
    /// Other processes kept the host's CPU above the study's limit through the wait before
    /// several samples in a row (docs/methodology.md §9.1).
    #[error("{0}")]
    NeverQuiet(String),
    #[error("cannot open the telemetry of device {device} ({kind}): {detail}")]
    OpenTelemetry { device: u32, kind: String, detail: String },
    #[error("cannot start the telemetry sampler: {0}")]
    SamplerStart(String),
    #[error("the telemetry sampler stopped delivering readings")]
    SamplerStopped,
    /// A reading of the server's CPU failed.
    #[error("{0}")]
    Reading(String),
}

pub(crate) trait SampleObserver {
    fn phase(&mut self, _phase: SamplePhase) {}
    /// Right after the server was spawned, with its pid (it leads its own process group).
    fn server_started(&mut self, _pid: u32) {}
    /// Between health and the load; blocks until the GPU (or the server's CPU) is idle, or until
    /// abprof is told to stop.
    fn before_request(&mut self, _server_pid: u32) -> Result<Option<IdleGateRecord>, GateError> {
        Ok(None)
    }
    /// The moment the load has ended, before the server is stopped: cheap work only (mark the
    /// end of measurement); the server's shutdown is not part of the request.
    fn request_finished(&mut self) {}
    /// After the load and the server's stop; `record` is empty for a load without a stream.
    fn after_request(&mut self, _record: &StreamRecord) -> Option<TelemetryRecord> {
        None
    }
}

/// No gate, no telemetry.
pub(crate) struct NoObserver;
impl SampleObserver for NoObserver {}
