//! What the study plugs into each sample: the idle gate before the request, a telemetry sampler
//! from the gate to the end of the request (its series saved beside the sample and split into
//! prefill and decode), the host's foreign CPU load, and the progress display.
use super::file::IdleGate;
use super::quiet_host::{self, QuietHost};
use super::sample_folder::SampleFolder;
use crate::client::StreamRecord;
use crate::measure::{GateError, GateFailure, SampleObserver, SamplePhase};
use crate::server::devices::{devices_used, DeviceUse};
use crate::telemetry::idle::{GateState, IdleGate as Gate, IdleThresholds};
use crate::telemetry::phases::{split_series, summed, RequestMarks};
use crate::telemetry::record::{
    DeviceTelemetry, ForeignWaitRecord, HostCpu, IdleGateRecord, TelemetryRecord, ThermalRecord,
};
use crate::telemetry::sampler::{Sampler, SamplerConfig, Series};
use crate::telemetry::task_cpu::{CpuShares, ForeignLoad, TaskCpu, TaskCpuSource};
use crate::telemetry::thermal::{ThermalGate, ThermalState, ThermalTarget};
use crate::telemetry::{SourceKind, TelemetrySource};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Why the study's observer cannot watch a study, found before anything is created.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ObserverError {
    /// The telemetry backend asked for does not open on this host.
    #[error("{0}: pass --telemetry none to run without GPU telemetry")]
    NoSource(#[from] crate::telemetry::TelemetryError),
    /// A variant's device list names a device the telemetry cannot match (docs/methodology.md
    /// §9.11): the one line of `server::devices`.
    #[error("{0}")]
    UnmatchedDevice(String),
}

/// Shows the phase somewhere (a progress bar, or nowhere).
pub(crate) trait PhaseSink {
    fn phase(&self, label: &str, phase: SamplePhase);
    /// One line for people while a sample waits (the wait for a quiet host).
    fn note(&self, line: &str) {
        eprintln!("abprof: {line}");
    }
}

/// The study's GPU telemetry sources by backend index, lent to one sample at a time: the first
/// device's is opened with the study, any other the first time a variant's server runs on it
/// (docs/methodology.md §9.11). No source: GPU-less host (the server's CPU is sampled instead).
pub(crate) struct TelemetrySlot {
    gpus: Vec<Lent>,
    /// The backend of every device's source, and how many devices it sees; `None`: GPU-less.
    kind: Option<(SourceKind, u32)>,
    /// What stands for `/sys` when another device is opened (a fixture tree in tests).
    sysfs_root: PathBuf,
    pub(crate) hz: f64,
    /// The study's first idle temperature, the thermal gate's reference (docs/methodology.md
    /// §9.9): set by the first sample's gate.
    pub(crate) thermal_reference_c: Option<f64>,
    /// Samples in a row whose wait for a quiet host timed out (docs/methodology.md §9.1).
    pub(crate) foreign_timeouts: u32,
}

pub(crate) struct StudyObserver<'a> {
    label: String,
    gate: IdleGate,
    sink: &'a dyn PhaseSink,
    telemetry: &'a mut TelemetrySlot,
    sample_dir: PathBuf,
    /// The GPUs this sample's server runs on; `None` on a GPU-less host.
    devices: Option<DeviceUse>,
    /// How long the gate waited, for the sample's timeline.
    pub(crate) gate_ms: f64,
    /// The running sampler and the devices lent to it, in its tracks' order; none lent: it reads
    /// the server's CPU (a GPU-less host).
    sampler: Option<(Sampler, Vec<u32>)>,
    load: Option<(TaskCpu, TaskCpu, ForeignLoad)>,
    /// The host's CPU when the server was spawned: the wait for a quiet host starts from it.
    spawned: Option<ForeignLoad>,
    /// Foreign load over the request, measured when it finished.
    host_cpu: Option<CpuShares>,
    /// Told the server's pid as soon as it is spawned (the study's `run.json`).
    on_spawn: Option<Box<dyn FnMut(u32) + 'a>>,
    /// Set when abprof is told to stop: the gate gives up waiting at its next reading.
    cancel: Option<Arc<AtomicBool>>,
}

/// A device's backend index and its source.
type Lent = (u32, Box<dyn TelemetrySource>);

impl TelemetrySlot {
    pub(crate) fn new(gpu: Option<Box<dyn TelemetrySource>>, hz: f64) -> TelemetrySlot {
        let kind = gpu.as_ref().map(|g| (g.kind(), g.devices_on_host()));
        TelemetrySlot {
            gpus: gpu.map(|g| (0, g)).into_iter().collect(),
            kind,
            sysfs_root: crate::telemetry::OpenOptions::default().sysfs_root,
            hz,
            thermal_reference_c: None,
            foreign_timeouts: 0,
        }
    }

    /// The GPU backend, `None` on a GPU-less host.
    pub(crate) fn kind(&self) -> Option<SourceKind> {
        self.kind.map(|k| k.0)
    }

    /// The devices a server started with `argv` and its variant's `env` runs on
    /// (docs/methodology.md §9.11); `None` on a GPU-less host. A list that names a device the
    /// telemetry cannot match is refused in one line.
    pub(crate) fn devices_of(
        &self,
        argv: &[String],
        env: &[(String, String)],
    ) -> Result<Option<DeviceUse>, ObserverError> {
        let Some((_, on_host)) = self.kind else { return Ok(None) };
        devices_used(argv, env, &|k| std::env::var(k).ok(), on_host).map(Some).map_err(ObserverError::UnmatchedDevice)
    }

    /// The sources of `indices`, opening those not opened yet.
    fn lend(&mut self, indices: &[u32]) -> Result<Vec<Lent>, GateFailure> {
        let Some((kind, _)) = self.kind else { return Ok(Vec::new()) };
        indices
            .iter()
            .map(|&i| match self.gpus.iter().position(|(d, _)| *d == i) {
                Some(at) => Ok(self.gpus.swap_remove(at)),
                None => crate::telemetry::open(&crate::telemetry::OpenOptions {
                    kind,
                    device: i,
                    sysfs_root: self.sysfs_root.clone(),
                    ..Default::default()
                })
                .map(|o| (i, o.source))
                .map_err(|e| GateFailure::OpenTelemetry {
                    device: i,
                    kind: kind.to_string(),
                    detail: e.to_string(),
                }),
            })
            .collect()
    }

    fn give_back(&mut self, device: u32, source: Box<dyn TelemetrySource>) {
        self.gpus.push((device, source));
    }
}

/// GPU sources refresh every 100–200 ms: gate samples closer than this would repeat one value.
const GPU_GATE_SPACING: Duration = Duration::from_millis(100);

/// The server's CPU series during the request: 10 ms windows at the study's sampling rate.
const REQUEST_CPU_WINDOW: Duration = Duration::from_millis(10);

impl<'a> StudyObserver<'a> {
    pub(crate) fn new(
        label: &str,
        gate: &IdleGate,
        sink: &'a dyn PhaseSink,
        telemetry: &'a mut TelemetrySlot,
        sample_dir: PathBuf,
        devices: Option<DeviceUse>,
    ) -> Self {
        StudyObserver {
            label: label.into(),
            gate: gate.clone(),
            sink,
            telemetry,
            sample_dir,
            devices,
            gate_ms: 0.0,
            sampler: None,
            load: None,
            spawned: None,
            host_cpu: None,
            on_spawn: None,
            cancel: None,
        }
    }

    /// Ends the gate's wait once `flag` is set (the study's signal listener sets it).
    pub(crate) fn cancel_on(mut self, flag: Arc<AtomicBool>) -> Self {
        self.cancel = Some(flag);
        self
    }

    fn cancelled(&self) -> Result<(), GateError> {
        match &self.cancel {
            Some(c) if c.load(Ordering::SeqCst) => Err(GateError::Interrupted),
            _ => Ok(()),
        }
    }

    /// Calls `f` with the server's pid as soon as it is spawned.
    pub(crate) fn on_spawn(mut self, f: impl FnMut(u32) + 'a) -> Self {
        self.on_spawn = Some(Box::new(f));
        self
    }

    /// Waits until `consecutive` readings, at least `spacing` apart, are idle (GPU busy and power
    /// at or below their bounds, or the server's CPU at or below `cpu_max_pct`), then leaves the
    /// request's sampler running. On a GPU host the gate reads the sampler's own tap; on a
    /// GPU-less host it reads the server's schedstat every `interval_ms` itself and starts the
    /// request's sampler (at the study's rate, 10 ms windows) only once the gate has passed, so
    /// the gate's fast reads never run beside the measured request.
    fn gate(&mut self, server_pid: u32) -> Result<IdleGateRecord, GateError> {
        let t0 = crate::clock::mono_ns();
        // The first of the readings the wait for a quiet host judges: from the server's start,
        // else from here (the idle readings count towards its first second).
        let since = self
            .spawned
            .take()
            .or_else(|| ForeignLoad::snapshot(&TaskCpu::group(server_pid), &TaskCpu::new(std::process::id())));
        let timeout = Duration::from_secs(self.gate.timeout_s);
        let mut thermal = None;
        let indices = self.devices.as_ref().map_or(&[][..], |d| d.indices.as_slice());
        let lent = self.telemetry.lend(indices).map_err(GateError::Failed)?;
        let (describe, spacing, thresholds, waited) = match lent.first() {
            Some((_, first)) => {
                let thresholds = IdleThresholds {
                    max_busy_pct: Some(self.gate.busy_max_pct),
                    max_power_w: self.gate.power_max_w,
                    max_cpu_pct: None,
                };
                // The gates read the tap: the first device's sample raised to the most loaded
                // device's values, so every device must be idle and cool (docs/methodology.md §9.11).
                let describe = first.describe();
                let (tx, rx) = std::sync::mpsc::sync_channel(4096);
                let mut config = SamplerConfig::new(self.telemetry.hz, 1 << 20);
                config.tap = Some(tx);
                let (devices, sources): (Vec<u32>, Vec<_>) = lent.into_iter().unzip();
                self.sampler = Some((self.start(sources, config).map_err(GateError::Failed)?, devices));
                let mut gate = Gate::new(thresholds, self.gate.consecutive as usize, timeout, t0);
                // Readings closer than the refresh interval would repeat one value.
                let min_gap = GPU_GATE_SPACING.as_nanos() as u64 * 9 / 10;
                let mut last_seen = 0u64;
                let waited = loop {
                    self.cancelled()?;
                    let s = rx
                        .recv_timeout(Duration::from_secs(5))
                        .map_err(|_| GateError::Failed(GateFailure::SamplerStopped))?;
                    if s.at.mono_ns < last_seen + min_gap {
                        continue;
                    }
                    last_seen = s.at.mono_ns;
                    if let Some(done) = self.judge(&mut gate, &s, true)? {
                        break done;
                    }
                };
                thermal = match self.gate.thermal {
                    Some(t) => Some(self.thermal_gate(&t, &rx)?),
                    None => None,
                };
                (describe, GPU_GATE_SPACING, thresholds, waited)
            }
            None => {
                // schedstat counts ns, so a window as short as the gate's spacing is exact.
                let spacing = Duration::from_millis(self.gate.interval_ms.max(1));
                let thresholds =
                    IdleThresholds { max_busy_pct: None, max_power_w: None, max_cpu_pct: Some(self.gate.cpu_max_pct) };
                let mut source = TaskCpuSource::of(TaskCpu::group(server_pid), spacing);
                let describe = source.describe();
                let mut gate = Gate::new(thresholds, self.gate.consecutive as usize, timeout, t0);
                let mut next = std::time::Instant::now();
                let waited = loop {
                    self.cancelled()?;
                    let reading = source.read().map_err(|e| GateError::Failed(GateFailure::Reading(e.to_string())))?;
                    let s = crate::telemetry::sampler::TelemetrySample {
                        at: crate::clock::Stamp::now(),
                        late_ns: 0,
                        reading,
                    };
                    if let Some(done) = self.judge(&mut gate, &s, false)? {
                        break done;
                    }
                    next += spacing;
                    std::thread::sleep(next.saturating_duration_since(std::time::Instant::now()));
                };
                (describe, spacing, thresholds, waited)
            }
        };
        let foreign = self.quiet_host(server_pid, since)?;
        if self.sampler.is_none() {
            // After every wait, so the gate's fast reads never run beside the measured request.
            let series = TaskCpuSource::of(TaskCpu::group(server_pid), REQUEST_CPU_WINDOW);
            let config = SamplerConfig::new(self.telemetry.hz, 1 << 20);
            self.sampler = Some((self.start(vec![Box::new(series)], config).map_err(GateError::Failed)?, Vec::new()));
        }
        let idle_ms = waited.as_secs_f64() * 1e3;
        // The sample's timeline counts both waits; its record keeps each apart.
        self.gate_ms = idle_ms + foreign.waited_ms;
        Ok(IdleGateRecord {
            source: describe,
            consecutive: self.gate.consecutive,
            spacing_ms: spacing.as_secs_f64() * 1e3,
            threshold_busy_pct: thresholds.max_busy_pct,
            threshold_power_w: thresholds.max_power_w,
            threshold_cpu_pct: thresholds.max_cpu_pct,
            waited_ms: idle_ms,
            thermal,
            foreign: Some(foreign),
        })
    }

    /// The gate's last wait, right before the request, for other processes' CPU to fall to the
    /// study's `other-workload` limit (docs/methodology.md §7.7, §9.1); the third timeout in a
    /// row ends the study in one line.
    fn quiet_host(&mut self, server_pid: u32, since: Option<ForeignLoad>) -> Result<ForeignWaitRecord, GateError> {
        let timeout = Duration::from_secs(self.gate.timeout_s);
        let sink = self.sink;
        let what = match self.sample_dir.file_name() {
            Some(name) => format!("sample {} ({})", name.to_string_lossy(), self.label),
            None => format!("the sample of {}", self.label),
        };
        let host = QuietHost {
            max_pct: self.gate.foreign_cpu_max_pct,
            timeout,
            cancelled: &|| self.cancelled().is_err(),
            note: &|line| sink.note(line),
            what: &what,
            top: quiet_host::TOP,
        };
        let r = host.wait(server_pid, since)?;
        if !r.timed_out {
            self.telemetry.foreign_timeouts = 0;
            return Ok(r);
        }
        self.telemetry.foreign_timeouts += 1;
        if self.telemetry.foreign_timeouts >= quiet_host::NEVER_QUIET {
            // Every layout puts a sample two folders below the study's root (samples/NNN-LABEL,
            // pi/LABEL-N, LABEL/traced).
            let root = self.sample_dir.parent().and_then(std::path::Path::parent).unwrap_or(&self.sample_dir);
            return Err(GateError::Failed(GateFailure::NeverQuiet(quiet_host::never_quiet_line(&r, timeout, root))));
        }
        Ok(r)
    }

    /// The thermal gate on the sampler's tap, after the idle gate (docs/methodology.md §9.9): the
    /// first sample's first reading is the study's reference.
    fn thermal_gate(
        &mut self,
        settings: &super::file::ThermalGate,
        rx: &std::sync::mpsc::Receiver<crate::telemetry::sampler::TelemetrySample>,
    ) -> Result<ThermalRecord, GateError> {
        let target = ThermalTarget {
            band_c: settings.band_c,
            ceiling_c: settings.ceiling_c,
            reference_c: self.telemetry.thermal_reference_c,
        };
        let mut gate = ThermalGate::new(target, Duration::from_secs(settings.timeout_s), crate::clock::mono_ns());
        loop {
            self.cancelled()?;
            let s =
                rx.recv_timeout(Duration::from_secs(5)).map_err(|_| GateError::Failed(GateFailure::SamplerStopped))?;
            match gate.observe(&s) {
                ThermalState::Waiting => {}
                ThermalState::Cool { start_c, waited } => {
                    let reference = *self.telemetry.thermal_reference_c.get_or_insert(start_c);
                    let target = ThermalTarget { reference_c: Some(reference), ..target };
                    return Ok(ThermalRecord {
                        target: target.describe(),
                        start_c,
                        cooling_ms: waited.as_secs_f64() * 1e3,
                    });
                }
                ThermalState::TimedOut { waited, last_c } => {
                    return Err(GateError::Failed(GateFailure::NeverCool(gate.timeout_line(waited, last_c))));
                }
            }
        }
    }

    fn start(&self, sources: Vec<Box<dyn TelemetrySource>>, config: SamplerConfig) -> Result<Sampler, GateFailure> {
        Sampler::start_on(sources, config).map_err(|e| GateFailure::SamplerStart(e.to_string()))
    }

    /// Stops the sampler, hands its GPU sources back to the study, and returns its series with
    /// the devices they are of (none for the server's CPU series).
    fn stop_sampler(&mut self) -> Option<(Vec<Series>, Vec<u32>)> {
        let (sampler, devices) = self.sampler.take()?;
        let mut tracks = sampler.stop().tracks.into_iter();
        let mut series = Vec::with_capacity(tracks.len());
        // A GPU sampler has a track per lent device; the CPU sampler has one and lent none.
        for &device in &devices {
            let track = tracks.next().expect("a track per lent device");
            self.telemetry.give_back(device, track.source);
            series.push(track.series);
        }
        series.extend(tracks.map(|t| t.series));
        Some((series, devices))
    }

    /// One reading through the gate: `Some(waited)` once idle long enough, an error on timeout.
    fn judge(
        &self,
        gate: &mut Gate,
        s: &crate::telemetry::sampler::TelemetrySample,
        gpu: bool,
    ) -> Result<Option<Duration>, GateError> {
        match gate.observe(s) {
            GateState::Waiting => Ok(None),
            GateState::Idle { waited } => Ok(Some(waited)),
            GateState::TimedOut { last, .. } => {
                let what = if gpu { "the GPU" } else { "the server's CPU" };
                Err(GateError::Failed(GateFailure::NeverIdle(format!(
                    "{what} never went idle for {} readings in {} s (last: {last:?}): another workload is running, or raise the idle thresholds",
                    self.gate.consecutive, self.gate.timeout_s
                ))))
            }
        }
    }

    fn finish_telemetry(&mut self, record: &StreamRecord) -> Option<TelemetryRecord> {
        let (tracks, lent) = self.stop_sampler()?;
        Some(telemetry_record(&tracks, &lent, self.devices.as_ref(), record, &self.sample_dir))
    }
}

/// The record of one request's telemetry: each track's series written beside the sample (the
/// first as `telemetry.csv`), split into its phases, and for a server on several devices
/// (`lent`, in the tracks' order) every device's phases and their sum.
fn telemetry_record(
    tracks: &[Series],
    lent: &[u32],
    devices_used: Option<&DeviceUse>,
    record: &StreamRecord,
    sample_dir: &std::path::Path,
) -> TelemetryRecord {
    let marks = |r: &crate::client::RequestSpan| match (r.start, r.first_token, r.last_token) {
        (Some(start), Some(first_token), Some(last_token)) => Some(RequestMarks {
            start,
            first_token,
            last_token,
            prompt_tokens: r.prompt_tokens?,
            output_tokens: r.completion_tokens?,
        }),
        _ => None,
    };
    // A sequence's phases are its requests' own, combined: the span from the first token to
    // the last would hold every later request's prefill (docs/methodology.md §4.2).
    let phases_of = |series: &Series| match record.requests.as_slice() {
        [] => marks(&crate::client::RequestSpan::of(record)).map(|m| split_series(series, &m)),
        each => each
            .iter()
            .map(|r| marks(r).map(|m| split_series(series, &m)))
            .collect::<Option<Vec<_>>>()
            .and_then(|parts| crate::telemetry::phases::combined(&parts)),
    };
    let devices: Vec<DeviceTelemetry> = tracks
        .iter()
        .enumerate()
        .map(|(i, series)| {
            let csv = SampleFolder::telemetry_csv_name(i, lent.get(i).copied());
            write_csv(&sample_dir.join(&csv), series);
            DeviceTelemetry {
                index: lent.get(i).copied().unwrap_or(0),
                source: series.stats.source.clone(),
                samples: series.samples.len(),
                phases: phases_of(series),
                csv,
            }
        })
        .collect();
    let first = &tracks[0];
    let phases = match devices.as_slice() {
        [one] => one.phases.clone(),
        many => many.iter().map(|d| d.phases.clone()).collect::<Option<Vec<_>>>().and_then(|p| summed(&p)),
    };
    TelemetryRecord {
        source: first.stats.source.clone(),
        achieved_hz: first.stats.achieved_hz,
        samples: first.samples.len(),
        fields: first.stats.fields.clone(),
        phases,
        csv: SampleFolder::telemetry_csv_name(0, None),
        host_cpu: None,
        devices_from: devices_used.filter(|_| devices.len() > 1).map(|d| d.from.clone()),
        power_fields: first.stats.power_fields.clone(),
        torn_reads: tracks.iter().map(|t| t.stats.torn_reads).sum(),
        devices: if devices.len() > 1 { devices } else { Vec::new() },
    }
}

fn write_csv(path: &std::path::Path, series: &Series) {
    if let Ok(f) = std::fs::File::create(path) {
        let mut w = std::io::BufWriter::new(f);
        let _ = crate::telemetry::csv::write_header(&mut w);
        for s in &series.samples {
            let _ = crate::telemetry::csv::write_row(&mut w, s);
        }
    }
}

impl SampleObserver for StudyObserver<'_> {
    fn phase(&mut self, phase: SamplePhase) {
        self.sink.phase(&self.label, phase);
    }

    fn server_started(&mut self, pid: u32) {
        // The first reading of the wait for a quiet host: the server's start, health and
        // warm-up count towards its first second (its group then holds the leader alone, and a
        // process born into it later counts as the server's from its birth).
        self.spawned = ForeignLoad::snapshot(&TaskCpu::new(pid), &TaskCpu::new(std::process::id()));
        if let Some(f) = self.on_spawn.as_mut() {
            f(pid);
        }
    }

    fn before_request(&mut self, server_pid: u32) -> Result<Option<IdleGateRecord>, GateError> {
        let gate = self.gate(server_pid)?;
        // The server's whole process group: a wrapper script's llama-server is the server too.
        let (server, me) = (TaskCpu::group(server_pid), TaskCpu::new(std::process::id()));
        self.load = ForeignLoad::snapshot(&server, &me).map(|l| (server, me, l));
        Ok(Some(gate))
    }

    fn request_finished(&mut self) {
        if let Some((sampler, _)) = &self.sampler {
            sampler.request_stop();
        }
        if let Some((server, me, start)) = self.load.take() {
            self.host_cpu = ForeignLoad::snapshot(&server, &me).map(|end| start.since(&end));
        }
    }

    fn after_request(&mut self, record: &StreamRecord) -> Option<TelemetryRecord> {
        let mut out = self.finish_telemetry(record);
        if let Some(cpu) = self.host_cpu.take() {
            out.get_or_insert_with(TelemetryRecord::default).host_cpu = Some(HostCpu {
                foreign_pct: cpu.foreign_pct,
                server_pct: cpu.server_pct,
                abprof_pct: Some(cpu.abprof_pct),
                source: "/proc/stat minus the server's (process group) and abprof's schedstat".into(),
            });
        }
        out
    }
}

impl Drop for StudyObserver<'_> {
    /// A sample cut short (an error, a signal) must still hand the GPU source back.
    fn drop(&mut self) {
        self.stop_sampler();
    }
}

/// Opens the study's telemetry source: a GPU backend, or none (GPU-less host, or `none`).
pub(crate) fn open_gpu_source(kind: SourceKind) -> Result<(Option<Box<dyn TelemetrySource>>, String), ObserverError> {
    if matches!(kind, SourceKind::None | SourceKind::Cpu) {
        return Ok((None, "server CPU only (telemetry none/cpu)".into()));
    }
    let opened = crate::telemetry::open(&crate::telemetry::OpenOptions { kind, ..Default::default() })?;
    if matches!(opened.source.kind(), SourceKind::None | SourceKind::Cpu) {
        // The full reason (each backend passed over and why) is long; `abprof monitor` prints it.
        return Ok((None, "GPU-less host (no NVML, amdgpu or ROCm SMI device): server CPU via schedstat".into()));
    }
    let desc = format!("{} ({})", opened.source.describe(), opened.why);
    Ok((Some(opened.source), desc))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::telemetry::amdgpu_sysfs::AmdgpuSysfs;
    use crate::telemetry::phases::PhaseStats;

    fn copy_tree(from: &std::path::Path, to: &std::path::Path) {
        std::fs::create_dir_all(to).unwrap();
        for e in std::fs::read_dir(from).unwrap().flatten() {
            let target = to.join(e.file_name());
            if e.file_type().unwrap().is_dir() {
                copy_tree(&e.path(), &target);
            } else {
                std::fs::copy(e.path(), &target).unwrap();
            }
        }
    }

    /// Two amdgpu cards from the recorded dGPU tree: card1 draws 100 W where card0 draws 291 W.
    fn two_card_tree() -> tempfile::TempDir {
        let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sysfs/dgpu-v1_3");
        let root = tempfile::tempdir().unwrap();
        for card in ["card0", "card1"] {
            copy_tree(&fixture.join("class/drm/card0"), &root.path().join("class/drm").join(card));
        }
        let hwmon = root.path().join("class/drm/card1/device/hwmon/hwmon3");
        std::fs::write(hwmon.join("power1_input"), "100000000\n").unwrap();
        std::fs::write(hwmon.join("power1_average"), "100000000\n").unwrap();
        root
    }

    /// A server split over two GPUs (docs/methodology.md §9.11): the study meters both, each
    /// device's phases are kept, and the sample's phases are their sum.
    #[test]
    fn a_server_on_two_gpus_is_metered_on_both_and_its_energy_summed() {
        let tree = two_card_tree();
        let first = AmdgpuSysfs::open(tree.path(), 0).unwrap();
        let mut slot = TelemetrySlot::new(Some(Box::new(first)), 200.0);
        slot.sysfs_root = tree.path().to_owned();
        let argv: Vec<String> = ["-m", "x.gguf", "-ts", "1,1"].map(String::from).to_vec();
        let devices = slot.devices_of(&argv, &[]).unwrap().unwrap();
        assert_eq!(devices.indices, [0, 1], "{devices:?}");
        let one: Vec<String> = ["-m", "x.gguf", "-dev", "ROCm1"].map(String::from).to_vec();
        assert_eq!(slot.devices_of(&one, &[]).unwrap().unwrap().indices, [1]);

        let lent = slot.lend(&devices.indices).unwrap();
        assert!(slot.gpus.is_empty(), "both lent, card1 opened on first use");
        let (indices, sources): (Vec<u32>, Vec<_>) = lent.into_iter().unzip();
        let sampler = Sampler::start_on(sources, SamplerConfig::new(200.0, 10_000)).unwrap();
        let start = crate::clock::Stamp::now();
        std::thread::sleep(Duration::from_millis(150));
        let first_token = crate::clock::Stamp::now();
        std::thread::sleep(Duration::from_millis(300));
        let last_token = crate::clock::Stamp::now();
        std::thread::sleep(Duration::from_millis(20));
        let finished = sampler.stop();
        let mut tracks = Vec::new();
        for (track, i) in finished.tracks.into_iter().zip(&indices) {
            slot.give_back(*i, track.source);
            tracks.push(track.series);
        }
        assert_eq!(slot.lend(&[1, 0]).unwrap().len(), 2, "given back, lent again without reopening");

        let record = StreamRecord {
            request_start: Some(start),
            first_token: Some(first_token),
            last_token: Some(last_token),
            usage: Some(crate::client::Usage { prompt_tokens: 64, completion_tokens: 30, ..Default::default() }),
            ..Default::default()
        };
        let dir = tempfile::tempdir().unwrap();
        let t = telemetry_record(&tracks, &indices, Some(&devices), &record, dir.path());
        let files: Vec<(u32, &str)> = t.devices.iter().map(|d| (d.index, d.csv.as_str())).collect();
        assert_eq!(files, [(0, "telemetry.csv"), (1, "telemetry-gpu1.csv")]);
        assert!(dir.path().join("telemetry.csv").is_file() && dir.path().join("telemetry-gpu1.csv").is_file());
        assert_eq!(t.devices_from.as_deref(), Some(devices.from.as_str()));
        let decode = |p: &Option<[PhaseStats; 2]>| p.as_ref().unwrap()[1].clone();
        let (a, b, sum) = (decode(&t.devices[0].phases), decode(&t.devices[1].phases), decode(&t.phases));
        assert!((a.mean_power_w.unwrap() - 291.0).abs() < 1e-6, "{a:?}");
        assert!((b.mean_power_w.unwrap() - 100.0).abs() < 1e-6, "{b:?}");
        assert!((sum.mean_power_w.unwrap() - 391.0).abs() < 1e-6, "{sum:?}");
        assert!((sum.energy_j.unwrap() - a.energy_j.unwrap() - b.energy_j.unwrap()).abs() < 1e-9);
        assert!((sum.j_per_token.unwrap() - sum.energy_j.unwrap() / 30.0).abs() < 1e-12);

        // One device: the record every earlier release wrote, no device list.
        let t = telemetry_record(&tracks[..1], &indices[..1], None, &record, dir.path());
        assert!(t.devices.is_empty() && t.devices_from.is_none());
        assert!((decode(&t.phases).mean_power_w.unwrap() - 291.0).abs() < 1e-6);
    }
}
