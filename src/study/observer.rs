//! What the study plugs into each sample: the idle gate before the request, a telemetry sampler
//! from the gate to the end of the request (its series saved beside the sample and split into
//! prefill and decode), the host's foreign CPU load, and the progress display.
use super::file::IdleGate;
use crate::client::StreamRecord;
use crate::measure::{SampleObserver, SamplePhase};
use crate::telemetry::idle::{GateState, IdleGate as Gate, IdleThresholds};
use crate::telemetry::phases::{split_series, RequestMarks};
use crate::telemetry::sampler::{Sampler, SamplerConfig};
use crate::telemetry::task_cpu::{ForeignLoad, TaskCpu, TaskCpuSource};
use crate::telemetry::{SourceKind, TelemetrySource};
use std::path::PathBuf;
use std::time::Duration;

/// Shows the phase somewhere (a progress bar, or nowhere).
pub trait PhaseSink {
    fn phase(&self, label: &str, phase: SamplePhase);
}

/// The study's telemetry source, lent to one sample at a time. `None` inside: GPU-less host (the
/// server's CPU is sampled instead).
pub struct TelemetrySlot {
    pub gpu: Option<Box<dyn TelemetrySource>>,
    pub hz: f64,
}

pub struct StudyObserver<'a> {
    label: String,
    gate: IdleGate,
    sink: &'a dyn PhaseSink,
    telemetry: &'a mut TelemetrySlot,
    sample_dir: PathBuf,
    /// How long the gate waited, for the sample's timeline.
    pub gate_ms: f64,
    sampler: Option<(Sampler, bool)>,
    load: Option<(TaskCpu, TaskCpu, ForeignLoad)>,
}

/// GPU sources refresh every 100–200 ms: gate samples closer than this would repeat one value.
const GPU_GATE_SPACING: Duration = Duration::from_millis(100);

impl<'a> StudyObserver<'a> {
    pub fn new(label: &str, gate: &IdleGate, sink: &'a dyn PhaseSink, telemetry: &'a mut TelemetrySlot, sample_dir: PathBuf) -> Self {
        StudyObserver { label: label.into(), gate: gate.clone(), sink, telemetry, sample_dir, gate_ms: 0.0, sampler: None, load: None }
    }

    /// Starts the sampler the request will be measured with (the study's GPU source, or the
    /// server's CPU on a GPU-less host) and waits on its readings until `consecutive` of them, at
    /// least `spacing` apart, are idle: GPU busy and power at or below their bounds, or the
    /// server's CPU at or below `cpu_max_pct`. The sampler then runs on through the request.
    fn gate(&mut self, server_pid: u32) -> Result<serde_json::Value, String> {
        let (source, gpu, spacing, thresholds, hz): (Box<dyn TelemetrySource>, bool, Duration, IdleThresholds, f64) =
            match self.telemetry.gpu.take() {
                Some(gpu) => (
                    gpu,
                    true,
                    GPU_GATE_SPACING,
                    IdleThresholds { max_busy_pct: Some(self.gate.busy_max_pct), max_power_w: self.gate.power_max_w, max_cpu_pct: None },
                    self.telemetry.hz,
                ),
                None => {
                    // schedstat counts ns, so a window as short as the gate's spacing is exact.
                    let spacing = Duration::from_millis(self.gate.interval_ms.max(1));
                    let hz = self.telemetry.hz.max(1.0 / spacing.as_secs_f64());
                    (
                        Box::new(TaskCpuSource::new(server_pid, spacing)),
                        false,
                        spacing,
                        IdleThresholds { max_busy_pct: None, max_power_w: None, max_cpu_pct: Some(self.gate.cpu_max_pct) },
                        hz,
                    )
                }
            };
        let describe = source.describe();
        let (tx, rx) = std::sync::mpsc::sync_channel(4096);
        let mut config = SamplerConfig::new(hz, 1 << 20);
        config.tap = Some(tx);
        let sampler = Sampler::start(source, config).map_err(|e| format!("cannot start the telemetry sampler: {e}"))?;
        self.sampler = Some((sampler, gpu));
        let t0 = crate::clock::mono_ns();
        let mut gate = Gate::new(thresholds, self.gate.consecutive as usize, Duration::from_secs(self.gate.timeout_s), t0);
        // Readings closer than `spacing` would repeat one refresh of the source.
        let min_gap = spacing.as_nanos() as u64 * 9 / 10;
        let mut last_seen = 0u64;
        loop {
            let s = rx.recv_timeout(Duration::from_secs(5)).map_err(|_| "the telemetry sampler stopped delivering readings".to_string())?;
            if s.at.mono_ns < last_seen + min_gap {
                continue;
            }
            last_seen = s.at.mono_ns;
            match gate.observe(&s) {
                GateState::Waiting => {}
                GateState::Idle { waited } => {
                    self.gate_ms = waited.as_secs_f64() * 1e3;
                    return Ok(serde_json::json!({
                        "source": describe,
                        "consecutive": self.gate.consecutive,
                        "spacing_ms": spacing.as_secs_f64() * 1e3,
                        "threshold_busy_pct": thresholds.max_busy_pct,
                        "threshold_power_w": thresholds.max_power_w,
                        "threshold_cpu_pct": thresholds.max_cpu_pct,
                        "waited_ms": self.gate_ms,
                    }));
                }
                GateState::TimedOut { last, .. } => {
                    let what = if gpu { "the GPU" } else { "the server's CPU" };
                    return Err(format!(
                        "{what} never went idle for {} readings in {} s (last: {last:?}): another workload is running, or raise the idle thresholds",
                        self.gate.consecutive, self.gate.timeout_s
                    ));
                }
            }
        }
    }

    fn finish_telemetry(&mut self, record: &StreamRecord) -> serde_json::Value {
        let Some((sampler, gpu)) = self.sampler.take() else { return serde_json::Value::Null };
        let finished = sampler.stop();
        let series = finished.series;
        if gpu {
            self.telemetry.gpu = Some(finished.source);
        }
        let csv_path = self.sample_dir.join("telemetry.csv");
        if let Ok(f) = std::fs::File::create(&csv_path) {
            let mut w = std::io::BufWriter::new(f);
            let _ = crate::telemetry::csv::write_header(&mut w);
            for s in &series.samples {
                let _ = crate::telemetry::csv::write_row(&mut w, s);
            }
        }
        let marks = match (record.request_start, record.first_token, record.last_token, &record.usage) {
            (Some(start), Some(first_token), Some(last_token), Some(u)) => Some(RequestMarks {
                start,
                first_token,
                last_token,
                prompt_tokens: u.prompt_tokens,
                output_tokens: u.completion_tokens,
            }),
            _ => None,
        };
        let phases = marks.map(|m| split_series(&series, &m));
        serde_json::json!({
            "source": series.stats.source,
            "achieved_hz": series.stats.achieved_hz,
            "samples": series.samples.len(),
            "fields": series.stats.fields,
            "phases": phases,
            "csv": "telemetry.csv",
        })
    }
}

impl SampleObserver for StudyObserver<'_> {
    fn phase(&mut self, phase: SamplePhase) {
        self.sink.phase(&self.label, phase);
    }

    fn before_request(&mut self, server_pid: u32) -> Result<serde_json::Value, String> {
        let gate = self.gate(server_pid)?;
        let (server, me) = (TaskCpu::new(server_pid), TaskCpu::new(std::process::id()));
        self.load = ForeignLoad::snapshot(&server, &me).map(|l| (server, me, l));
        Ok(gate)
    }

    fn after_request(&mut self, record: &StreamRecord) -> serde_json::Value {
        let mut out = self.finish_telemetry(record);
        if let Some((server, me, start)) = self.load.take() {
            if let Some(end) = ForeignLoad::snapshot(&server, &me) {
                let (foreign, server_pct) = start.since(&end);
                if !out.is_object() {
                    out = serde_json::json!({});
                }
                out["host_cpu"] = serde_json::json!({
                    "foreign_pct": foreign,
                    "server_pct": server_pct,
                    "source": "/proc/stat minus the server's and abprof's schedstat",
                });
            }
        }
        out
    }
}

impl Drop for StudyObserver<'_> {
    /// A sample cut short (an error, a signal) must still hand the GPU source back.
    fn drop(&mut self) {
        if let Some((sampler, gpu)) = self.sampler.take() {
            let finished = sampler.stop();
            if gpu {
                self.telemetry.gpu = Some(finished.source);
            }
        }
    }
}

/// Opens the study's telemetry source: a GPU backend, or none (GPU-less host, or `none`).
pub fn open_gpu_source(kind: &str) -> Result<(Option<Box<dyn TelemetrySource>>, String), String> {
    let kind: SourceKind = kind.parse().map_err(|e| format!("telemetry {kind:?}: {e}"))?;
    if matches!(kind, SourceKind::None | SourceKind::Cpu) {
        return Ok((None, "server CPU only (telemetry none/cpu)".into()));
    }
    let opened = crate::telemetry::open(&crate::telemetry::OpenOptions { kind, ..Default::default() }).map_err(|e| e.to_string())?;
    if matches!(opened.source.kind(), SourceKind::None | SourceKind::Cpu) {
        // The full reason (each backend passed over and why) is long; `abprof monitor` prints it.
        return Ok((None, "GPU-less host (no NVML, amdgpu or ROCm SMI device): server CPU via schedstat".into()));
    }
    let desc = format!("{} ({})", opened.source.describe(), opened.why);
    Ok((Some(opened.source), desc))
}
