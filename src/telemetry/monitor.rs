//! The monitor: one telemetry source read at a fixed rate until a duration passes or a stop
//! signal (Ctrl-C, SIGTERM, SIGHUP),
//! every sample written to CSV, the newest shown to a live view, and at the end what a sampling
//! tool should always admit: the rate it achieved, how often each value really changed, its
//! timing jitter and what it cost in CPU.
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::mpsc::{sync_channel, Receiver};
use std::time::{Duration, Instant};

use nix::sys::resource::{getrusage, UsageWho};
use nix::sys::signal::{sigaction, SaFlags, SigAction, SigHandler, SigSet, Signal};
use serde::Serialize;

use super::sampler::{Sampler, SamplerConfig, SamplerStats, TelemetrySample};
use super::{csv, open, OpenOptions, TelemetryError};

/// What to read, how fast, for how long, and where to record it.
#[derive(Debug, Clone)]
pub(crate) struct MonitorPlan {
    pub(crate) source: OpenOptions,
    /// Reads per second.
    pub(crate) hz: f64,
    /// `None` runs until Ctrl-C, SIGTERM or SIGHUP.
    pub(crate) duration: Option<Duration>,
    /// Every sample, one row each.
    pub(crate) csv: Option<PathBuf>,
    /// The driver's own buffered power samples (NVML).
    pub(crate) driver_power_csv: Option<PathBuf>,
    /// The run's statistics ([`MonitorRun`]'s JSON).
    pub(crate) stats_json: Option<PathBuf>,
}

/// Whatever shows the run while it goes (a terminal line, a log of lines).
pub(crate) trait LiveView {
    /// How often [`show`](Self::show) is called.
    fn refresh(&self) -> Duration;
    /// The source that opened, and why `auto` chose it.
    fn opened(&mut self, why: &str, describe: &str);
    /// The newest sample so far (none before the first read lands).
    fn show(&mut self, elapsed: Duration, newest: Option<&TelemetrySample>) -> io::Result<()>;
    /// The run ended.
    fn finish(&mut self) -> io::Result<()>;
}

/// One finished run. Its JSON (the `--stats-json` file) is `process_cpu_s`, `stats`, `wall_s`.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct MonitorRun {
    /// CPU time of the whole process over the run, sampler thread included.
    pub(crate) process_cpu_s: f64,
    pub(crate) stats: SamplerStats,
    pub(crate) wall_s: f64,
    /// The last sample read, for the final value of each field.
    #[serde(skip)]
    pub(crate) last: Option<TelemetrySample>,
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum MonitorError {
    #[error("opening telemetry")]
    Open(#[source] TelemetryError),
    #[error("cannot create {}: check the folder exists and is writable", path.display())]
    Create { path: PathBuf, source: io::Error },
    #[error("writing {}", path.display())]
    Write { path: PathBuf, source: io::Error },
    #[error("installing the handler of {0}")]
    Interrupt(Signal, #[source] nix::errno::Errno),
    #[error("starting the sampler thread")]
    Sampler(#[source] io::Error),
    #[error("showing the live view")]
    View(#[source] io::Error),
}

/// The signal that ended the run (0: none yet).
static STOPPED_BY: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_stop(signal: std::ffi::c_int) {
    STOPPED_BY.store(signal, Ordering::Relaxed);
}

fn stopped_by() -> i32 {
    STOPPED_BY.load(Ordering::Relaxed)
}

/// Ctrl-C, SIGTERM (a supervisor, `timeout`) and SIGHUP (a closed terminal or ssh session) end the
/// run like its duration would, so the CSV, the statistics and the summary are still written.
fn catch_stop_signals() -> Result<(), MonitorError> {
    let action = SigAction::new(SigHandler::Handler(on_stop), SaFlags::SA_RESTART, SigSet::empty());
    for signal in [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP] {
        // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
        unsafe { sigaction(signal, &action) }.map_err(|e| MonitorError::Interrupt(signal, e))?;
    }
    Ok(())
}

fn process_cpu_s() -> f64 {
    getrusage(UsageWho::RUSAGE_SELF)
        .map(|u| {
            let t = |tv: nix::sys::time::TimeVal| tv.tv_sec() as f64 + tv.tv_usec() as f64 / 1e6;
            t(u.user_time()) + t(u.system_time())
        })
        .unwrap_or(0.0)
}

/// A buffered file that names itself in its errors.
struct Recorder {
    path: PathBuf,
    out: BufWriter<File>,
}

impl Recorder {
    fn create(path: &Path) -> Result<Recorder, MonitorError> {
        let file = File::create(path).map_err(|source| MonitorError::Create { path: path.to_path_buf(), source })?;
        Ok(Recorder { path: path.to_path_buf(), out: BufWriter::new(file) })
    }

    fn write(&mut self, f: impl FnOnce(&mut BufWriter<File>) -> io::Result<()>) -> Result<(), MonitorError> {
        f(&mut self.out).map_err(|source| MonitorError::Write { path: self.path.clone(), source })
    }

    fn finish(mut self) -> Result<(), MonitorError> {
        self.write(|w| w.flush())
    }
}

/// Writes pending samples to the CSV and keeps the newest.
fn drain(
    rx: &Receiver<TelemetrySample>,
    csv_out: &mut Option<Recorder>,
    last: &mut Option<TelemetrySample>,
) -> Result<(), MonitorError> {
    for s in rx.try_iter() {
        if let Some(r) = csv_out.as_mut() {
            r.write(|w| csv::write_row(w, &s))?;
        }
        *last = Some(s);
    }
    Ok(())
}

/// Runs the monitor to its end and records what the plan asks for.
pub(crate) fn run_monitor(plan: &MonitorPlan, view: &mut dyn LiveView) -> Result<MonitorRun, MonitorError> {
    let opened = open(&plan.source).map_err(MonitorError::Open)?;
    view.opened(&opened.why, &opened.source.describe());

    let mut csv_out = match &plan.csv {
        Some(path) => {
            let mut r = Recorder::create(path)?;
            r.write(csv::write_header)?;
            Some(r)
        }
        None => None,
    };

    catch_stop_signals()?;
    let (tx, rx) = sync_channel(16_384);
    let mut config = SamplerConfig::new(plan.hz, 0);
    config.tap = Some(tx);
    let cpu_before = process_cpu_s();
    let started = Instant::now();
    let sampler = Sampler::start(opened.source, config).map_err(MonitorError::Sampler)?;

    let refresh = view.refresh();
    let mut last: Option<TelemetrySample> = None;
    let mut next_show = started + refresh;
    loop {
        let remaining = plan.duration.map(|d| d.saturating_sub(started.elapsed()));
        if stopped_by() != 0 || remaining == Some(Duration::ZERO) {
            break;
        }
        std::thread::sleep(
            remaining
                .unwrap_or(refresh)
                .min(refresh)
                .min(next_show.saturating_duration_since(Instant::now()))
                .max(Duration::from_millis(5)),
        );
        drain(&rx, &mut csv_out, &mut last)?;
        if Instant::now() >= next_show {
            next_show += refresh;
            match view.show(started.elapsed(), last.as_ref()) {
                Ok(()) => {}
                // Its reader went away (`monitor | head -1`, a closed pipe): the run ends as on a
                // stop signal, and the files are still written.
                Err(e) if e.kind() == io::ErrorKind::BrokenPipe => break,
                // A hang-up closes the terminal with its signal: the files are still written.
                Err(_) if stopped_by() != 0 => {}
                Err(e) => return Err(MonitorError::View(e)),
            }
        }
    }
    let mut finished = sampler.stop();
    let wall_s = started.elapsed().as_secs_f64();
    drain(&rx, &mut csv_out, &mut last)?;
    if let Err(e) = view.finish() {
        if stopped_by() != Signal::SIGHUP as i32 && e.kind() != io::ErrorKind::BrokenPipe {
            return Err(MonitorError::View(e));
        }
    }
    if let Some(r) = csv_out {
        r.finish()?;
    }
    let series = finished.tracks.swap_remove(0).series;
    if let Some(path) = &plan.driver_power_csv {
        let mut r = Recorder::create(path)?;
        r.write(|w| csv::write_driver_power(w, &series.driver_power))?;
        r.finish()?;
    }
    let run = MonitorRun { process_cpu_s: process_cpu_s() - cpu_before, stats: series.stats, wall_s, last };
    if let Some(path) = &plan.stats_json {
        let mut r = Recorder::create(path)?;
        // Through a `Value`, as the file has always been written: keys sorted at every level.
        let mut json = serde_json::to_value(&run).expect("statistics always serialize");
        if let Some(doc) = json.as_object_mut() {
            doc.insert("schema_version".into(), crate::schema::SCHEMA_VERSION.into());
        }
        r.write(|w| w.write_all(serde_json::to_string_pretty(&json).expect("a value always prints").as_bytes()))?;
        r.finish()?;
    }
    Ok(run)
}
