//! `abprof monitor`: a live one-line view of a telemetry source and a CSV recorder, ending with
//! what a sampling tool should always admit: the rate it achieved, how often each value really
//! changed, its timing jitter and what it cost in CPU.
use std::fs::File;
use std::io::{BufWriter, IsTerminal, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, Receiver};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use nix::sys::resource::{getrusage, UsageWho};
use nix::sys::signal::{sigaction, SaFlags, SigAction, SigHandler, SigSet, Signal};

use crate::telemetry::sampler::{Sample, Sampler, SamplerConfig, SamplerStats};
use crate::telemetry::{self, csv, Field, OpenOptions, SourceKind};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Backend: auto, rocm-smi, amdgpu-sysfs, nvml, cpu (needs --pid) or none.
    #[arg(long, default_value = "auto", value_parser = parse_kind, value_name = "KIND")]
    pub telemetry: SourceKind,
    /// Reads per second (1 to 10000).
    #[arg(long, default_value_t = 100.0, value_name = "N")]
    pub hz: f64,
    /// How long to run, e.g. 30s, 500ms, 2m (default: until Ctrl-C).
    #[arg(long, value_parser = parse_duration, value_name = "D")]
    pub duration: Option<Duration>,
    /// Write every sample to this CSV file.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Write the driver's own buffered power samples (NVML, 20 ms) to this CSV file.
    #[arg(long, value_name = "FILE")]
    pub driver_power_csv: Option<PathBuf>,
    /// Write the run's statistics as JSON to this file.
    #[arg(long, value_name = "FILE")]
    pub stats_json: Option<PathBuf>,
    /// Device index within the backend.
    #[arg(long, default_value_t = 0, value_name = "I")]
    pub device: u32,
    /// What stands for /sys (for fixture trees).
    #[arg(long, default_value = "/sys", value_name = "DIR")]
    pub sysfs_root: PathBuf,
    /// Also report this process's CPU use (e.g. the server's); required by --telemetry cpu.
    #[arg(long, value_name = "PID")]
    pub pid: Option<i32>,
    /// NVML energy counter read interval in ms (each read costs ~4 ms on an H200); 0 = never.
    #[arg(long, default_value_t = 1000, value_name = "MS")]
    pub nvml_energy_every_ms: u64,
}

fn parse_kind(s: &str) -> Result<SourceKind, String> {
    s.parse()
}

/// "500ms", "30s", "1.5s", "2m", or plain seconds.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let split = s.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(s.len());
    let (number, unit) = s.split_at(split);
    let value: f64 = number.parse().map_err(|_| format!("{s:?} is not a duration: write e.g. 500ms, 30s or 2m"))?;
    let seconds = match unit.trim() {
        "ms" => value / 1e3,
        "" | "s" => value,
        "m" | "min" => value * 60.0,
        "h" => value * 3600.0,
        other => return Err(format!("unknown duration unit {other:?} in {s:?}: use ms, s, m or h")),
    };
    if !seconds.is_finite() || seconds <= 0.0 {
        return Err(format!("duration {s:?} must be positive"));
    }
    Ok(Duration::from_secs_f64(seconds))
}

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_interrupt(_: std::ffi::c_int) {
    INTERRUPTED.store(true, Ordering::Relaxed);
}

/// Ctrl-C ends the run normally, so the summary and CSV are still written.
fn catch_interrupt() -> Result<()> {
    let action = SigAction::new(SigHandler::Handler(on_interrupt), SaFlags::SA_RESTART, SigSet::empty());
    // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
    unsafe { sigaction(Signal::SIGINT, &action) }.context("installing the Ctrl-C handler")?;
    Ok(())
}

/// A value with its unit, compactly.
fn show(field: Field, v: f64) -> String {
    match field.unit() {
        "B" if v >= 1024.0 * 1024.0 * 1024.0 => format!("{:.2} GiB", v / (1u64 << 30) as f64),
        "B" => format!("{:.0} MiB", v / (1u64 << 20) as f64),
        "W" | "J" => format!("{v:.1} {}", field.unit()),
        "°C" => format!("{v:.1} °C"),
        "%" => format!("{v:.0}%"),
        "MHz" => format!("{v:.0} MHz"),
        _ => format!("{v}"),
    }
}

/// A short label per field, so the live view fits one terminal line.
fn label(field: Field) -> Option<&'static str> {
    Some(match field {
        Field::BusyPct => "busy",
        Field::MemBusyPct => "mem-busy",
        Field::PowerW => "P",
        Field::PowerAvgW => "P-avg",
        Field::GfxPowerW => "P-gfx",
        Field::EnergyJ => "E",
        Field::TempGpuC => "T",
        Field::TempHotspotC => "T-hot",
        Field::TempMemC => "T-mem",
        Field::GfxClockMhz => "gfx",
        Field::MemClockMhz => "mem",
        Field::VramUsedBytes => "vram",
        Field::GttUsedBytes => "gtt",
        Field::CpuPct => "cpu",
        Field::GpuStampNs | Field::MetricsGfxActivityRaw | Field::MetricsTempRaw => return None,
    })
}

fn live_line(s: &Sample) -> String {
    let parts: Vec<String> =
        s.reading.present().filter_map(|(f, v)| label(f).map(|l| format!("{l} {}", show(f, v)))).collect();
    if parts.is_empty() {
        "(no values)".into()
    } else {
        parts.join("  ")
    }
}

nix::ioctl_read_bad!(window_size, nix::libc::TIOCGWINSZ, nix::libc::winsize);

/// Columns of the terminal on stdout, if it is one.
fn terminal_columns() -> Option<usize> {
    let mut ws = nix::libc::winsize { ws_row: 0, ws_col: 0, ws_xpixel: 0, ws_ypixel: 0 };
    // SAFETY: TIOCGWINSZ writes one winsize into ws; fd 1 stays open for the process's life.
    unsafe { window_size(1, &mut ws) }.ok().filter(|_| ws.ws_col > 0).map(|_| ws.ws_col as usize)
}

fn process_cpu_s() -> f64 {
    getrusage(UsageWho::RUSAGE_SELF)
        .map(|u| {
            let t = |tv: nix::sys::time::TimeVal| tv.tv_sec() as f64 + tv.tv_usec() as f64 / 1e6;
            t(u.user_time()) + t(u.system_time())
        })
        .unwrap_or(0.0)
}

fn print_summary(stats: &SamplerStats, last: Option<&Sample>, process_cpu_s: f64, wall_s: f64) {
    println!("source:       {}", stats.source);
    println!(
        "reads:        {} in {:.2} s = {:.1} Hz achieved of {} Hz requested ({} errors, {} deadlines skipped)",
        stats.reads, stats.wall_s, stats.achieved_hz, stats.requested_hz, stats.read_errors, stats.missed_deadlines
    );
    if let Some(e) = &stats.first_error {
        println!("first error:  {e}");
    }
    let j = &stats.jitter;
    println!(
        "jitter:       p50 {:.1} µs  p99 {:.1} µs  max {:.1} µs (read start − deadline)",
        j.p50_us, j.p99_us, j.max_us
    );
    let c = &stats.read_cost;
    println!("read cost:    p50 {:.1} µs  p99 {:.1} µs  max {:.1} µs", c.p50_us, c.p99_us, c.max_us);
    println!(
        "CPU:          sampler thread {:.3} s = {:.2}% of one core; whole abprof process {:.3} s = {:.2}% of one core",
        stats.thread_cpu_s,
        stats.cpu_share_pct,
        process_cpu_s,
        100.0 * process_cpu_s / wall_s.max(1e-9)
    );
    if stats.tap_dropped > 0 {
        println!("note:         {} samples did not reach the CSV/live view (consumer too slow)", stats.tap_dropped);
    }
    println!("{:<26} {:>8} {:>8}  {:<28} last", "field", "reads", "changes", "real update interval");
    for f in &stats.fields {
        let interval = match (f.median_change_interval_ms, f.changes) {
            (Some(ms), _) => format!("{ms:.1} ms ({:.1} Hz)", 1000.0 / ms),
            (None, 0) => "constant during the run".into(),
            (None, _) => "changed once".into(),
        };
        let last_value = last.and_then(|s| s.reading.get(f.field)).map(|v| show(f.field, v)).unwrap_or_default();
        println!("{:<26} {:>8} {:>8}  {:<28} {last_value}", f.field.name(), f.present, f.changes, interval);
    }
    if stats.driver_power_samples > 0 {
        println!(
            "driver power: {} buffered samples, median spacing {:.1} ms",
            stats.driver_power_samples,
            stats.driver_power_median_interval_ms.unwrap_or(f64::NAN)
        );
    }
}

/// Writes pending samples to the CSV and returns the newest.
fn drain(rx: &Receiver<Sample>, csv_out: &mut Option<BufWriter<File>>, last: &mut Option<Sample>) -> Result<()> {
    for s in rx.try_iter() {
        if let Some(w) = csv_out.as_mut() {
            csv::write_row(w, &s).context("writing the CSV")?;
        }
        *last = Some(s);
    }
    Ok(())
}

pub fn run(args: Args) -> Result<i32> {
    if !(args.hz >= 1.0 && args.hz <= 10_000.0) {
        bail!("--hz {} is out of range: pass 1 to 10000 reads per second", args.hz);
    }
    let options = OpenOptions {
        kind: args.telemetry,
        device: args.device,
        sysfs_root: args.sysfs_root.clone(),
        pid: args.pid,
        nvml_energy_every: (args.nvml_energy_every_ms > 0).then(|| Duration::from_millis(args.nvml_energy_every_ms)),
    };
    let opened = telemetry::open(&options).context("opening telemetry")?;
    eprintln!("telemetry: {}", opened.why);
    eprintln!("  {}", opened.source.describe());

    let mut csv_out = match &args.csv {
        Some(path) => {
            let file = File::create(path).with_context(|| {
                format!("cannot create CSV {}: check the folder exists and is writable", path.display())
            })?;
            let mut w = BufWriter::new(file);
            csv::write_header(&mut w)?;
            Some(w)
        }
        None => None,
    };

    catch_interrupt()?;
    let (tx, rx) = sync_channel(16_384);
    let mut config = SamplerConfig::new(args.hz, 0);
    config.tap = Some(tx);
    let cpu_before = process_cpu_s();
    let started = Instant::now();
    let sampler = Sampler::start(opened.source, config).context("starting the sampler thread")?;

    let tty = std::io::stdout().is_terminal();
    let refresh = if tty { Duration::from_millis(250) } else { Duration::from_secs(1) };
    let mut last: Option<Sample> = None;
    let mut next_print = started + refresh;
    loop {
        let remaining = args.duration.map(|d| d.saturating_sub(started.elapsed()));
        if INTERRUPTED.load(Ordering::Relaxed) || remaining == Some(Duration::ZERO) {
            break;
        }
        std::thread::sleep(
            remaining
                .unwrap_or(refresh)
                .min(refresh)
                .min(next_print.saturating_duration_since(Instant::now()))
                .max(Duration::from_millis(5)),
        );
        drain(&rx, &mut csv_out, &mut last)?;
        if Instant::now() >= next_print {
            next_print += refresh;
            let line = last.as_ref().map(live_line).unwrap_or_else(|| "(waiting for the first sample)".into());
            if tty {
                // Longer than the terminal, the line would wrap and \r could no longer redraw it.
                let line: String = line.chars().take(terminal_columns().unwrap_or(80).saturating_sub(1)).collect();
                print!("\r\x1b[2K{line}");
                std::io::stdout().flush()?;
            } else {
                println!("{:>8.2}s  {line}", started.elapsed().as_secs_f64());
            }
        }
    }
    let finished = sampler.stop();
    let wall_s = started.elapsed().as_secs_f64();
    drain(&rx, &mut csv_out, &mut last)?;
    if tty {
        println!();
    }
    if let Some(mut w) = csv_out {
        w.flush().context("writing the CSV")?;
    }
    let series = finished.series;
    if let Some(path) = &args.driver_power_csv {
        let mut w = BufWriter::new(File::create(path).with_context(|| format!("cannot create {}", path.display()))?);
        csv::write_driver_power(&mut w, &series.driver_power)?;
        w.flush()?;
    }
    let process_cpu = process_cpu_s() - cpu_before;
    print_summary(&series.stats, last.as_ref(), process_cpu, wall_s);
    if let Some(path) = &args.stats_json {
        let json = serde_json::json!({ "stats": series.stats, "process_cpu_s": process_cpu, "wall_s": wall_s });
        std::fs::write(path, serde_json::to_string_pretty(&json)?)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("7"), Ok(Duration::from_secs(7)));
        assert!(parse_duration("5 parsecs").unwrap_err().contains("unit"));
        assert!(parse_duration("0s").is_err());
    }
}
