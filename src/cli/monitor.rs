//! `abprof monitor`: a live view of a telemetry source and a CSV recorder (the loop is
//! `telemetry::monitor`, the view and the final account `report::monitor`).
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Result;

use super::args::TelemetryArg;
use crate::report::monitor::LiveLine;
use crate::report::{emit, Format};
use crate::telemetry::monitor::{run_monitor, MonitorPlan};
use crate::telemetry::OpenOptions;

#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    #[command(flatten)]
    pub(crate) telemetry: TelemetryArg,
    /// Reads per second (1 to 10000).
    #[arg(long, default_value_t = 100.0, value_parser = parse_hz, value_name = "N")]
    pub(crate) hz: f64,
    /// How long to run, e.g. 30s, 500ms, 2m (default: until Ctrl-C, SIGTERM or SIGHUP, which
    /// end the run normally: files written, summary printed, exit 0).
    #[arg(long, value_parser = parse_duration, value_name = "D")]
    pub(crate) duration: Option<Duration>,
    /// Write every sample to this CSV file.
    #[arg(long, value_name = "FILE")]
    pub(crate) csv: Option<PathBuf>,
    /// Write the driver's own buffered power samples (NVML, 20 ms) to this CSV file.
    #[arg(long, value_name = "FILE")]
    pub(crate) driver_power_csv: Option<PathBuf>,
    /// Write the run's statistics as JSON to this file.
    #[arg(long, value_name = "FILE")]
    pub(crate) stats_json: Option<PathBuf>,
    /// Device index within the backend.
    #[arg(long, default_value_t = 0, value_name = "I")]
    pub(crate) device: u32,
    /// What stands for /sys (for fixture trees).
    #[arg(long, default_value = "/sys", value_name = "DIR")]
    pub(crate) sysfs_root: PathBuf,
    /// Also report this process's CPU use (e.g. the server's); required by --telemetry cpu.
    #[arg(long, value_name = "PID")]
    pub(crate) pid: Option<i32>,
    /// NVML energy counter read interval in ms (each read costs ~4 ms on an H200); 0 = never.
    #[arg(long, default_value_t = 1000, value_name = "MS")]
    pub(crate) nvml_energy_every_ms: u64,
}

/// 1 to 10000 reads per second; fractions are fine.
fn parse_hz(s: &str) -> Result<f64, String> {
    let hz: f64 = s.trim().parse().map_err(|_| format!("{s:?} is not a number of reads per second"))?;
    if !(1.0..=10_000.0).contains(&hz) {
        return Err(format!("{s} is out of range: pass 1 to 10000 reads per second"));
    }
    Ok(hz)
}

/// "500ms", "30s", "1.5s", "2m", or plain seconds.
pub(crate) fn parse_duration(s: &str) -> Result<Duration, String> {
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
    if seconds > crate::bounds::MAX_TIMEOUT_S as f64 {
        return Err(format!("duration {s:?} is above a week, abprof's bound (docs/methodology.md §20)"));
    }
    Ok(Duration::from_secs_f64(seconds))
}

pub(crate) fn run(args: Args) -> Result<i32> {
    let plan = MonitorPlan {
        source: OpenOptions {
            kind: args.telemetry.telemetry,
            device: args.device,
            sysfs_root: args.sysfs_root,
            pid: args.pid,
            nvml_energy_every: (args.nvml_energy_every_ms > 0)
                .then(|| Duration::from_millis(args.nvml_energy_every_ms)),
        },
        hz: args.hz,
        duration: args.duration,
        csv: args.csv,
        driver_power_csv: args.driver_power_csv,
        stats_json: args.stats_json,
    };
    let finished = run_monitor(&plan, &mut LiveLine::on_stdout())?;
    emit(&finished, Format::Text);
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

    #[test]
    fn rates() {
        assert_eq!(parse_hz("100"), Ok(100.0));
        assert_eq!(parse_hz("1.5"), Ok(1.5));
        assert!(parse_hz("0").unwrap_err().contains("1 to 10000"));
        assert!(parse_hz("10001").is_err());
        assert!(parse_hz("NaN").is_err());
        assert!(parse_hz("fast").is_err());
    }
}
