//! What the study plugs into each sample: the idle gate before the request, progress display.
use super::file::IdleGate;
use crate::client::StreamRecord;
use crate::measure::{SampleObserver, SamplePhase};
use crate::telemetry::task_cpu::{ForeignLoad, TaskCpu};
use std::time::{Duration, Instant};

/// Shows the phase somewhere (a progress bar, or nowhere).
pub trait PhaseSink {
    fn phase(&self, label: &str, phase: SamplePhase);
}

pub struct StudyObserver<'a> {
    pub label: String,
    pub gate: IdleGate,
    pub sink: &'a dyn PhaseSink,
    /// How long the gate waited, for the sample's timeline.
    pub gate_ms: f64,
    load: Option<(TaskCpu, TaskCpu, ForeignLoad)>,
}

impl<'a> StudyObserver<'a> {
    pub fn new(label: &str, gate: &IdleGate, sink: &'a dyn PhaseSink) -> Self {
        StudyObserver { label: label.into(), gate: gate.clone(), sink, gate_ms: 0.0, load: None }
    }

    /// GPU-less host: the server's own CPU use must stay at or below `cpu_max_pct` for
    /// `consecutive` windows in a row.
    fn server_cpu_gate(&mut self, pid: u32) -> Result<serde_json::Value, String> {
        let t0 = Instant::now();
        let mut cpu = TaskCpu::new(pid);
        cpu.pct_since_last();
        let (need, interval) = (self.gate.consecutive as usize, Duration::from_millis(self.gate.interval_ms.max(1)));
        let timeout = Duration::from_secs(self.gate.timeout_s);
        let (mut run, mut samples, mut last) = (0usize, 0usize, 0.0f64);
        let mut next = Instant::now() + interval;
        while run < need {
            if t0.elapsed() > timeout {
                return Err(format!(
                    "the server's CPU use never stayed at or below {}% for {need} samples in {} s (last {last:.1}%): another job on this host, or raise idle.cpu_max_pct",
                    self.gate.cpu_max_pct, self.gate.timeout_s
                ));
            }
            std::thread::sleep(next.saturating_duration_since(Instant::now()));
            next += interval;
            let Some(pct) = cpu.pct_since_last() else {
                return Err("the server exited while the idle gate was waiting".into());
            };
            samples += 1;
            last = pct;
            run = if pct <= self.gate.cpu_max_pct { run + 1 } else { 0 };
        }
        self.gate_ms = t0.elapsed().as_secs_f64() * 1e3;
        Ok(serde_json::json!({
            "source": "server CPU (/proc/<pid>/task/*/schedstat)",
            "consecutive": need,
            "interval_ms": self.gate.interval_ms,
            "threshold_cpu_pct": self.gate.cpu_max_pct,
            "samples": samples,
            "last_cpu_pct": last,
            "waited_ms": self.gate_ms,
        }))
    }
}

impl SampleObserver for StudyObserver<'_> {
    fn phase(&mut self, phase: SamplePhase) {
        self.sink.phase(&self.label, phase);
    }

    fn before_request(&mut self, server_pid: u32) -> Result<serde_json::Value, String> {
        let gate = self.server_cpu_gate(server_pid)?;
        let (server, me) = (TaskCpu::new(server_pid), TaskCpu::new(std::process::id()));
        self.load = ForeignLoad::snapshot(&server, &me).map(|l| (server, me, l));
        Ok(gate)
    }

    fn after_request(&mut self, _record: &StreamRecord) -> serde_json::Value {
        let Some((server, me, start)) = self.load.take() else { return serde_json::Value::Null };
        let Some(end) = ForeignLoad::snapshot(&server, &me) else { return serde_json::Value::Null };
        let (foreign, server_pct) = start.since(&end);
        serde_json::json!({ "host_cpu": {
            "foreign_pct": foreign,
            "server_pct": server_pct,
            "source": "/proc/stat minus the server's and abprof's schedstat",
        }})
    }
}
