//! The sampler: a dedicated thread that reads a `TelemetrySource` on absolute deadlines
//! (`clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME)`, so lateness never accumulates), stamps
//! each sample in both clocks, keeps at most a preallocated number of samples, and summarises
//! its own timing (jitter = actual − scheduled start of each read) and CPU cost.
//!
//! It also records, per field, how often the value actually changed. A 1 kHz read of a value the
//! device refreshes every 100 ms yields 1,000 samples a second but only 10 new values; the
//! median interval between changes is the source's real update interval, and reports print it
//! beside the read rate so nobody mistakes one for the other. A refresh that repeats the previous
//! value cannot be seen, so for a value that sits still (100% busy under load) the median is a
//! multiple of the true period: it is an upper bound on the update interval.
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{SyncSender, TrySendError};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use hdrhistogram::Histogram;
use nix::errno::Errno;
use nix::sys::time::TimeSpec;
use nix::time::{clock_nanosleep, ClockId, ClockNanosleepFlags};
use serde::{Deserialize, Serialize};

use super::power_field::PowerField;
use super::{DriverPowerSample, Field, Reading, TelemetrySource};
use crate::clock::{mono_ns, Stamp};

const FIELDS: usize = Field::ALL.len();

/// Long sleeps are cut into slices this long so `stop` is honoured promptly at low rates.
const STOP_CHECK: u64 = 50_000_000;

/// One reading with its time.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TelemetrySample {
    /// When the read started (both clocks).
    #[serde(flatten)]
    pub(crate) at: Stamp,
    /// How far after its scheduled deadline the read started.
    pub(crate) late_ns: u64,
    #[serde(flatten)]
    pub reading: Reading,
}

pub struct SamplerConfig {
    /// Reads per second.
    pub(crate) hz: f64,
    /// Samples kept for the returned series, allocated up front; later ones are counted as
    /// dropped. 0 keeps none (a live view that only uses `tap`).
    pub(crate) keep: usize,
    /// Every sample is also offered here without blocking; a full channel drops it (counted).
    pub(crate) tap: Option<SyncSender<TelemetrySample>>,
    /// How often the driver's own power buffer is collected (NVML holds ~2.4 s).
    pub(crate) driver_drain_every: Duration,
    /// Most driver power samples kept.
    pub(crate) driver_keep: usize,
}

impl SamplerConfig {
    pub fn new(hz: f64, keep: usize) -> SamplerConfig {
        SamplerConfig { hz, keep, tap: None, driver_drain_every: Duration::from_secs(1), driver_keep: 200_000 }
    }
}

/// Percentiles of a duration distribution, in µs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Quantiles {
    pub p50_us: f64,
    pub p99_us: f64,
    pub max_us: f64,
    pub mean_us: f64,
}

impl Quantiles {
    fn of(h: &Histogram<u64>) -> Quantiles {
        if h.is_empty() {
            return Quantiles::default();
        }
        Quantiles {
            p50_us: h.value_at_quantile(0.5) as f64 / 1e3,
            p99_us: h.value_at_quantile(0.99) as f64 / 1e3,
            max_us: h.max() as f64 / 1e3,
            mean_us: h.mean() / 1e3,
        }
    }
}

/// How one field behaved over a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FieldActivity {
    pub field: Field,
    /// Reads that carried the field.
    pub present: u64,
    /// Reads whose value differed from the previous one.
    pub changes: u64,
    /// Median time between two changes: the source's real update interval. `None` with fewer
    /// than two changes (a constant value, or a run shorter than one update).
    pub median_change_interval_ms: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SamplerStats {
    pub source: String,
    pub requested_hz: f64,
    pub wall_s: f64,
    pub reads: u64,
    pub read_errors: u64,
    pub first_error: Option<String>,
    /// Successful reads per second of wall time.
    pub achieved_hz: f64,
    /// Deadlines skipped because a read overran its slot (the schedule jumps ahead, it never
    /// bursts to catch up).
    pub missed_deadlines: u64,
    pub kept: usize,
    pub dropped: u64,
    pub tap_dropped: u64,
    pub jitter: Quantiles,
    pub read_cost: Quantiles,
    /// CPU time of the sampler thread (CLOCK_THREAD_CPUTIME_ID).
    pub thread_cpu_s: f64,
    /// thread_cpu_s / wall_s, in % of one core.
    pub cpu_share_pct: f64,
    pub fields: Vec<FieldActivity>,
    pub driver_power_samples: usize,
    pub driver_power_dropped: u64,
    pub driver_power_median_interval_ms: Option<f64>,
    /// What each power value of the source measures (docs/methodology.md §9.7).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub power_fields: Vec<PowerField>,
    /// Readings whose gpu_metrics table was rejected as torn during the run (§9.2).
    #[serde(default)]
    pub torn_reads: u64,
}

/// What a run produced.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Series {
    pub samples: Vec<TelemetrySample>,
    pub(crate) driver_power: Vec<DriverPowerSample>,
    pub stats: SamplerStats,
}

/// One source's series, and the source back for the next run (ROCm SMI and NVML are slow to
/// open).
pub struct Track {
    pub series: Series,
    pub(crate) source: Box<dyn TelemetrySource>,
}

/// What a run produced: a track per source, in the order they were given.
pub struct Finished {
    pub tracks: Vec<Track>,
}

impl Finished {
    /// The first source's track (the only one of a one-source sampler).
    pub fn first(&self) -> &Track {
        &self.tracks[0]
    }
}

/// A running sampler; `stop` ends it.
pub struct Sampler {
    stop: Arc<AtomicBool>,
    handle: JoinHandle<Finished>,
}

impl Sampler {
    /// Starts the sampler thread on one source; the first read is due one period from now.
    pub fn start(source: Box<dyn TelemetrySource>, config: SamplerConfig) -> std::io::Result<Sampler> {
        Sampler::start_on(vec![source], config)
    }

    /// Starts one sampler thread that reads every source at each deadline, one after the other
    /// (a server on several GPUs, docs/methodology.md §9.11): one thread, so the devices' samples
    /// share their deadlines and the sampler's cost grows by a read, not by a thread's wake-up.
    /// The tap carries one sample a deadline: the first source's, each field raised to the
    /// highest any source read (`Reading::raise_to`), which is what the gates wait on.
    pub fn start_on(sources: Vec<Box<dyn TelemetrySource>>, config: SamplerConfig) -> std::io::Result<Sampler> {
        assert!(config.hz > 0.0 && config.hz.is_finite(), "sampler rate must be positive");
        assert!(!sources.is_empty(), "a sampler reads at least one source");
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let handle =
            std::thread::Builder::new().name("abprof-telemetry".into()).spawn(move || run(sources, config, &flag))?;
        Ok(Sampler { stop, handle })
    }

    /// Asks the thread to stop after its current sleep without waiting for it, so a caller can do
    /// other work (stop a server) before collecting the series with [`stop`](Self::stop).
    pub(crate) fn request_stop(&self) {
        self.stop.store(true, Ordering::Release);
    }

    /// Stops after the read in progress (at most one period, or 50 ms at low rates) and returns
    /// the series.
    pub fn stop(self) -> Finished {
        self.stop.store(true, Ordering::Release);
        self.handle.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    }

    /// Starts, lets the sampler run for `duration` while the caller sleeps, and stops.
    pub fn run_for(
        source: Box<dyn TelemetrySource>,
        config: SamplerConfig,
        duration: Duration,
    ) -> std::io::Result<Finished> {
        let sampler = Sampler::start(source, config)?;
        std::thread::sleep(duration);
        Ok(sampler.stop())
    }
}

fn thread_cpu_ns() -> u64 {
    crate::clock::read(ClockId::CLOCK_THREAD_CPUTIME_ID)
}

fn sleep_until(deadline_ns: u64) {
    let ts = TimeSpec::new((deadline_ns / 1_000_000_000) as _, (deadline_ns % 1_000_000_000) as _);
    while let Err(Errno::EINTR) = clock_nanosleep(ClockId::CLOCK_MONOTONIC, ClockNanosleepFlags::TIMER_ABSTIME, &ts) {}
}

fn histogram() -> Histogram<u64> {
    // ns from 1 ns to an hour at 2 significant digits: ~30 KB, 1% resolution.
    Histogram::new_with_bounds(1, 3_600_000_000_000, 2).expect("static histogram bounds are valid")
}

/// Per-field change detection; fixed-size, so tracking costs no allocation per sample.
struct ChangeTracker {
    last: [Option<f64>; FIELDS],
    last_change_ns: [Option<u64>; FIELDS],
    present: [u64; FIELDS],
    changes: [u64; FIELDS],
    intervals: Vec<Histogram<u64>>,
}

impl ChangeTracker {
    fn new() -> ChangeTracker {
        ChangeTracker {
            last: [None; FIELDS],
            last_change_ns: [None; FIELDS],
            present: [0; FIELDS],
            changes: [0; FIELDS],
            intervals: (0..FIELDS).map(|_| histogram()).collect(),
        }
    }

    fn observe(&mut self, at_ns: u64, r: &Reading) {
        for (i, &f) in Field::ALL.iter().enumerate() {
            let Some(v) = r.get(f) else { continue };
            self.present[i] += 1;
            match self.last[i] {
                Some(prev) if prev != v => {
                    self.changes[i] += 1;
                    // The first change only opens the first interval; it closes none.
                    if let Some(t) = self.last_change_ns[i] {
                        let _ = self.intervals[i].record((at_ns - t).max(1));
                    }
                    self.last_change_ns[i] = Some(at_ns);
                }
                _ => {}
            }
            self.last[i] = Some(v);
        }
    }

    fn summary(&self) -> Vec<FieldActivity> {
        Field::ALL
            .iter()
            .enumerate()
            .filter(|(i, _)| self.present[*i] > 0)
            .map(|(i, &field)| FieldActivity {
                field,
                present: self.present[i],
                changes: self.changes[i],
                median_change_interval_ms: (!self.intervals[i].is_empty())
                    .then(|| self.intervals[i].value_at_quantile(0.5) as f64 / 1e6),
            })
            .collect()
    }
}

/// The series of a server on several devices (docs/methodology.md §9.11): at each deadline that
/// every device's series holds, `Reading::of_server` of their readings, stamped as the first
/// device's. A deadline one device missed (a failed read) is left out.
pub(crate) fn server_series(devices: &[Vec<TelemetrySample>]) -> Vec<TelemetrySample> {
    let Some((first, others)) = devices.split_first() else { return Vec::new() };
    let deadline = |s: &TelemetrySample| s.at.mono_ns.saturating_sub(s.late_ns);
    // Deadlines are one period apart, at least 1 ms at the fastest study rate; the CSV keeps
    // lateness to 0.1 µs.
    let same = |a: u64, b: u64| a.abs_diff(b) < 500_000;
    let mut next = vec![0usize; others.len()];
    let mut out = Vec::with_capacity(first.len());
    let mut readings = Vec::with_capacity(devices.len());
    'deadlines: for s in first {
        let d = deadline(s);
        readings.clear();
        readings.push(s.reading);
        for (series, at) in others.iter().zip(next.iter_mut()) {
            while *at < series.len() && deadline(&series[*at]) < d && !same(deadline(&series[*at]), d) {
                *at += 1;
            }
            match series.get(*at) {
                Some(x) if same(deadline(x), d) => readings.push(x.reading),
                _ => continue 'deadlines,
            }
        }
        if let Some(reading) = Reading::of_server(&readings) {
            out.push(TelemetrySample { reading, ..*s });
        }
    }
    out
}

/// Median spacing of driver samples, in ms.
fn median_spacing_ms(samples: &[DriverPowerSample]) -> Option<f64> {
    let mut gaps: Vec<u64> = samples.windows(2).map(|w| w[1].mono_ns.saturating_sub(w[0].mono_ns)).collect();
    if gaps.is_empty() {
        return None;
    }
    gaps.sort_unstable();
    Some(gaps[gaps.len() / 2] as f64 / 1e6)
}

/// What the whole run shares: the schedule, the thread's cost, the tap.
struct RunTotals {
    hz: f64,
    wall_s: f64,
    reads: u64,
    missed: u64,
    tap_dropped: u64,
    thread_cpu_s: f64,
}

/// One source's state inside the sampler thread: everything is allocated before the first read.
struct Reader {
    source: Box<dyn TelemetrySource>,
    samples: Vec<TelemetrySample>,
    driver: Vec<DriverPowerSample>,
    driver_batch: Vec<DriverPowerSample>,
    jitter: Histogram<u64>,
    read_cost: Histogram<u64>,
    changes: ChangeTracker,
    read_errors: u64,
    first_error: Option<String>,
    dropped: u64,
    driver_dropped: u64,
    /// The source's torn-read count when the run began.
    torn_before: u64,
}

impl Reader {
    fn new(source: Box<dyn TelemetrySource>, keep: usize) -> Reader {
        Reader {
            torn_before: source.torn_reads(),
            source,
            samples: Vec::with_capacity(keep),
            driver: Vec::new(),
            driver_batch: Vec::with_capacity(512),
            jitter: histogram(),
            read_cost: histogram(),
            changes: ChangeTracker::new(),
            read_errors: 0,
            first_error: None,
            dropped: 0,
            driver_dropped: 0,
        }
    }

    /// One read for `deadline`; the clock read that ends it is returned for the schedule.
    fn read(&mut self, deadline: u64, keep: usize) -> (u64, Option<TelemetrySample>) {
        let at = Stamp::now();
        let late = at.mono_ns.saturating_sub(deadline);
        let _ = self.jitter.record(late.max(1));
        let result = self.source.read();
        let after = mono_ns();
        let _ = self.read_cost.record(after.saturating_sub(at.mono_ns).max(1));
        match result {
            Ok(reading) => {
                let sample = TelemetrySample { at, late_ns: late, reading };
                self.changes.observe(at.mono_ns, &reading);
                if self.samples.len() < keep {
                    self.samples.push(sample);
                } else {
                    self.dropped += 1;
                }
                (after, Some(sample))
            }
            Err(e) => {
                self.read_errors += 1;
                self.first_error.get_or_insert_with(|| e.to_string());
                (after, None)
            }
        }
    }

    fn drain(&mut self, keep: usize) {
        drain(&mut *self.source, &mut self.driver_batch, &mut self.driver, keep, &mut self.driver_dropped);
    }

    fn finish(self, run: &RunTotals) -> Track {
        let Reader {
            source,
            samples,
            driver,
            jitter,
            read_cost,
            changes,
            read_errors,
            first_error,
            dropped,
            driver_dropped,
            torn_before,
            ..
        } = self;
        let stats = SamplerStats {
            source: source.describe(),
            requested_hz: run.hz,
            wall_s: run.wall_s,
            reads: run.reads,
            read_errors,
            first_error,
            achieved_hz: (run.reads - read_errors) as f64 / run.wall_s.max(1e-9),
            missed_deadlines: run.missed,
            kept: samples.len(),
            dropped,
            tap_dropped: run.tap_dropped,
            jitter: Quantiles::of(&jitter),
            read_cost: Quantiles::of(&read_cost),
            thread_cpu_s: run.thread_cpu_s,
            cpu_share_pct: 100.0 * run.thread_cpu_s / run.wall_s.max(1e-9),
            fields: changes.summary(),
            driver_power_samples: driver.len(),
            driver_power_dropped: driver_dropped,
            driver_power_median_interval_ms: median_spacing_ms(&driver),
            power_fields: source.power_fields(),
            torn_reads: source.torn_reads().saturating_sub(torn_before),
        };
        Track { series: Series { samples, driver_power: driver, stats }, source }
    }
}

fn run(sources: Vec<Box<dyn TelemetrySource>>, mut cfg: SamplerConfig, stop: &AtomicBool) -> Finished {
    // The default 50 µs timer slack would be most of the jitter budget; 1 µs costs nothing.
    let _ = nix::sys::prctl::set_timerslack(1_000);
    let period = ((1e9 / cfg.hz) as u64).max(1);
    let mut readers: Vec<Reader> = sources.into_iter().map(|s| Reader::new(s, cfg.keep)).collect();
    let (mut reads, mut missed, mut tap_dropped) = (0u64, 0u64, 0u64);
    let drain_every = cfg.driver_drain_every.as_nanos() as u64;

    let cpu_start = thread_cpu_ns();
    let start = mono_ns();
    let mut last_drain = start;
    let mut k: u64 = 1;
    while !stop.load(Ordering::Acquire) {
        let deadline = start + k * period;
        // Only a period longer than the stop check can leave a sleep that long.
        if period > STOP_CHECK {
            let now = mono_ns();
            if deadline > now + STOP_CHECK {
                sleep_until(now + STOP_CHECK);
                continue;
            }
        }
        sleep_until(deadline);

        // The last read's closing clock read serves the drain and the schedule below.
        let mut after = 0;
        // The tap's sample: the first device's, raised to the most loaded device's values.
        let mut tapped: Option<TelemetrySample> = None;
        for (i, reader) in readers.iter_mut().enumerate() {
            let (end, sample) = reader.read(deadline, cfg.keep);
            after = end;
            match (i, sample, tapped.as_mut()) {
                (0, Some(s), _) => tapped = Some(s),
                (_, Some(s), Some(t)) => t.reading.raise_to(&s.reading),
                _ => {}
            }
        }
        if let (Some(sample), Some(tap)) = (tapped, &cfg.tap) {
            match tap.try_send(sample) {
                Ok(()) => {}
                Err(TrySendError::Full(_)) => tap_dropped += 1,
                Err(TrySendError::Disconnected(_)) => cfg.tap = None,
            }
        }
        reads += 1;

        if after - last_drain >= drain_every {
            last_drain = after;
            readers.iter_mut().for_each(|r| r.drain(cfg.driver_keep));
        }
        // Next deadline; if this read overran one or more slots, skip them rather than burst.
        k += 1;
        if after > start + k * period {
            let next = (after - start) / period + 1;
            missed += next - k;
            k = next;
        }
    }
    readers.iter_mut().for_each(|r| r.drain(cfg.driver_keep));
    let totals = RunTotals {
        hz: cfg.hz,
        wall_s: (mono_ns() - start) as f64 / 1e9,
        reads,
        missed,
        tap_dropped,
        thread_cpu_s: (thread_cpu_ns() - cpu_start) as f64 / 1e9,
    };
    Finished { tracks: readers.into_iter().map(|r| r.finish(&totals)).collect() }
}

fn drain(
    source: &mut dyn TelemetrySource,
    batch: &mut Vec<DriverPowerSample>,
    kept: &mut Vec<DriverPowerSample>,
    keep: usize,
    dropped: &mut u64,
) {
    batch.clear();
    // A failed drain loses only that batch of driver samples; the regular reads go on.
    if source.drain_driver_power(batch).is_err() {
        return;
    }
    for s in batch.drain(..) {
        if kept.len() < keep {
            kept.push(s);
        } else {
            *dropped += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::telemetry::{SourceKind, TelemetryError};

    /// A value that changes every `every` reads, and a counter of reads.
    struct Stepping {
        reads: u64,
        every: u64,
    }

    impl TelemetrySource for Stepping {
        fn kind(&self) -> SourceKind {
            SourceKind::None
        }
        fn describe(&self) -> String {
            "stepping test source".into()
        }
        fn read(&mut self) -> Result<Reading, TelemetryError> {
            self.reads += 1;
            Ok(Reading { power_w: Some((self.reads / self.every) as f64), busy_pct: Some(5.0), ..Reading::default() })
        }
    }

    #[test]
    fn keeps_rate_bounds_the_buffer_and_finds_the_real_update_interval() {
        let source = Box::new(Stepping { reads: 0, every: 10 });
        let (tx, rx) = std::sync::mpsc::sync_channel(10_000);
        let mut cfg = SamplerConfig::new(500.0, 100);
        cfg.tap = Some(tx);
        let done = Sampler::run_for(source, cfg, Duration::from_millis(600)).unwrap();
        let done = done.first();
        let st = &done.series.stats;
        assert!(st.reads > 150, "{st:?}");
        assert_eq!(done.series.samples.len(), 100);
        assert_eq!(st.dropped, st.reads - 100);
        assert_eq!(rx.try_iter().count() as u64, st.reads);
        let power = st.fields.iter().find(|f| f.field == Field::PowerW).unwrap();
        // 500 Hz reads of a value that steps every 10 reads: ~20 ms between changes.
        let ms = power.median_change_interval_ms.unwrap();
        assert!((14.0..30.0).contains(&ms), "{ms}");
        let busy = st.fields.iter().find(|f| f.field == Field::BusyPct).unwrap();
        assert_eq!((busy.changes, busy.median_change_interval_ms), (0, None));
        // Samples are in time order, on both clocks.
        assert!(done
            .series
            .samples
            .windows(2)
            .all(|w| w[0].at.mono_ns < w[1].at.mono_ns && w[0].at.boot_ns < w[1].at.boot_ns));
    }

    /// A server on two GPUs (docs/methodology.md §9.11): one thread reads both sources at every
    /// deadline, each into its own track, and the tap carries the first source's samples alone.
    #[test]
    fn one_thread_reads_every_source_on_the_same_deadlines() {
        let sources: Vec<Box<dyn TelemetrySource>> =
            vec![Box::new(Stepping { reads: 0, every: 1 }), Box::new(Stepping { reads: 0, every: 1000 })];
        let (tx, rx) = std::sync::mpsc::sync_channel(10_000);
        let mut cfg = SamplerConfig::new(200.0, 1000);
        cfg.tap = Some(tx);
        let sampler = Sampler::start_on(sources, cfg).unwrap();
        std::thread::sleep(Duration::from_millis(300));
        let done = sampler.stop();
        let [a, b] = &done.tracks[..] else { panic!("two tracks") };
        assert!(a.series.stats.reads > 30, "{:?}", a.series.stats);
        assert_eq!(a.series.samples.len(), b.series.samples.len());
        for (x, y) in a.series.samples.iter().zip(&b.series.samples) {
            // The same deadline: the second read starts right after the first.
            let deadline = |s: &TelemetrySample| s.at.mono_ns - s.late_ns;
            assert_eq!(deadline(x), deadline(y));
            assert!(y.at.mono_ns >= x.at.mono_ns);
        }
        assert!(a.series.samples.iter().zip(&b.series.samples).any(|(x, y)| x.reading != y.reading));
        let tapped: Vec<TelemetrySample> = rx.try_iter().collect();
        assert_eq!(tapped.len(), a.series.samples.len());
        for ((t, x), y) in tapped.iter().zip(&a.series.samples).zip(&b.series.samples) {
            // The first source's stamp; each value the higher of the two sources' (the gates').
            assert_eq!(t.at, x.at);
            assert_eq!(t.reading.power_w, Some(x.reading.power_w.unwrap().max(y.reading.power_w.unwrap())));
        }
        assert_eq!(b.series.stats.fields.iter().find(|f| f.field == Field::PowerW).unwrap().changes, 0);
        let server = server_series(&[a.series.samples.clone(), b.series.samples.clone()]);
        assert_eq!(server.len(), a.series.samples.len());
        for ((s, x), y) in server.iter().zip(&a.series.samples).zip(&b.series.samples) {
            assert_eq!(s.at, x.at);
            assert_eq!(s.reading.power_w, Some(x.reading.power_w.unwrap() + y.reading.power_w.unwrap()));
        }
        // A deadline the second device missed is left out of the server's series.
        let mut gap = b.series.samples.clone();
        gap.remove(3);
        assert_eq!(server_series(&[a.series.samples.clone(), gap]).len(), a.series.samples.len() - 1);
    }

    #[test]
    fn stops_promptly_at_a_low_rate() {
        let sampler = Sampler::start(Box::new(Stepping { reads: 0, every: 1 }), SamplerConfig::new(0.5, 10)).unwrap();
        let t = std::time::Instant::now();
        std::thread::sleep(Duration::from_millis(20));
        let done = sampler.stop();
        assert!(t.elapsed() < Duration::from_millis(500));
        assert_eq!(done.first().series.stats.reads, 0);
    }

    #[test]
    fn samples_serialise_flat() {
        let s = TelemetrySample {
            at: Stamp { mono_ns: 1, boot_ns: 2 },
            late_ns: 3,
            reading: Reading { power_w: Some(4.5), ..Default::default() },
        };
        let json = serde_json::to_string(&s).unwrap();
        assert_eq!(json, r#"{"mono_ns":1,"boot_ns":2,"late_ns":3,"power_w":4.5}"#);
        assert_eq!(serde_json::from_str::<TelemetrySample>(&json).unwrap(), s);
    }
}
