//! `abprof monitor` as a person watches it: one live line of the newest values while it runs,
//! then the run's account (rate achieved, jitter, CPU cost, each field's real update interval).
use std::io::{self, IsTerminal, Write};
use std::time::Duration;

use super::table::{Column, Table, Text};
use super::Render;
use crate::telemetry::monitor::{LiveView, MonitorRun};
use crate::telemetry::sampler::TelemetrySample;
use crate::telemetry::Field;

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
        // Cumulative counters: their rise per phase is what the summary shows (§9.5).
        Field::GpuStampNs
        | Field::MetricsGfxActivityRaw
        | Field::MetricsTempRaw
        | Field::ThrottleProchot
        | Field::ThrottleSpl
        | Field::ThrottleFppt
        | Field::ThrottleSppt
        | Field::ThrottleThmCore
        | Field::ThrottleThmGfx
        | Field::ThrottleThmSoc => return None,
    })
}

fn live_line(s: &TelemetrySample) -> String {
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

/// The live view on stdout: one line redrawn in place on a terminal, else a timestamped line a
/// second. Which source opened goes to stderr.
pub(crate) struct LiveLine {
    tty: bool,
}

impl LiveLine {
    pub(crate) fn on_stdout() -> LiveLine {
        LiveLine { tty: io::stdout().is_terminal() }
    }
}

impl LiveView for LiveLine {
    fn refresh(&self) -> Duration {
        if self.tty {
            Duration::from_millis(250)
        } else {
            Duration::from_secs(1)
        }
    }

    fn opened(&mut self, why: &str, describe: &str) {
        eprintln!("telemetry: {why}");
        eprintln!("  {describe}");
    }

    fn show(&mut self, elapsed: Duration, newest: Option<&TelemetrySample>) -> io::Result<()> {
        let line = newest.map(live_line).unwrap_or_else(|| "(waiting for the first sample)".into());
        if self.tty {
            // Longer than the terminal, the line would wrap and \r could no longer redraw it.
            let line: String = line.chars().take(terminal_columns().unwrap_or(80).saturating_sub(1)).collect();
            let mut out = io::stdout().lock();
            write!(out, "\r\x1b[2K{line}")?;
            out.flush()
        } else {
            writeln!(io::stdout().lock(), "{:.2}s  {line}", elapsed.as_secs_f64())
        }
    }

    /// Errors come back rather than panic: a terminal that hung up must not stop the files.
    fn finish(&mut self) -> io::Result<()> {
        if self.tty {
            writeln!(io::stdout().lock())?;
        }
        Ok(())
    }
}

impl Render for MonitorRun {
    fn text(&self) -> String {
        let stats = &self.stats;
        // The run's figures, one labelled line each, then the fields' table.
        let mut facts = Table::new(vec![Column::text("what"), Column::text("value")]);
        let mut fact = |k: &str, v: String| facts.push_text(vec![format!("{k}:"), v]);
        fact("source", stats.source.to_string());
        fact(
            "reads",
            format!(
                "{} in {:.2} s = {:.1} Hz achieved of {} Hz requested ({} errors, {} deadlines skipped)",
                stats.reads,
                stats.wall_s,
                stats.achieved_hz,
                stats.requested_hz,
                stats.read_errors,
                stats.missed_deadlines
            ),
        );
        if let Some(e) = &stats.first_error {
            fact("first error", e.to_string());
        }
        let j = &stats.jitter;
        fact(
            "jitter",
            format!("p50 {:.1} µs  p99 {:.1} µs  max {:.1} µs (read start − deadline)", j.p50_us, j.p99_us, j.max_us),
        );
        let c = &stats.read_cost;
        fact("read cost", format!("p50 {:.1} µs  p99 {:.1} µs  max {:.1} µs", c.p50_us, c.p99_us, c.max_us));
        fact(
            "CPU",
            format!(
                "sampler thread {:.3} s = {:.2}% of one core; whole abprof process {:.3} s = {:.2}% of one core",
                stats.thread_cpu_s,
                stats.cpu_share_pct,
                self.process_cpu_s,
                100.0 * self.process_cpu_s / self.wall_s.max(1e-9)
            ),
        );
        if stats.tap_dropped > 0 {
            fact("note", format!("{} samples did not reach the CSV/live view (consumer too slow)", stats.tap_dropped));
        }
        if stats.driver_power_samples > 0 {
            fact(
                "driver power",
                format!(
                    "{} buffered samples, median spacing {:.1} ms",
                    stats.driver_power_samples,
                    stats.driver_power_median_interval_ms.unwrap_or(f64::NAN)
                ),
            );
        }
        let mut o = facts.render(&Text::rows(&facts, ""));
        let mut t = Table::new(vec![
            Column::text("field"),
            Column::number("reads"),
            Column::number("changes"),
            Column::text("real update interval"),
            Column::text("last"),
        ]);
        for f in &stats.fields {
            let interval = match (f.median_change_interval_ms, f.changes) {
                (Some(ms), _) => format!("{ms:.1} ms ({:.1} Hz)", 1000.0 / ms),
                (None, 0) => "constant during the run".into(),
                (None, _) => "changed once".into(),
            };
            let last_value =
                self.last.as_ref().and_then(|s| s.reading.get(f.field)).map(|v| show(f.field, v)).unwrap_or_default();
            t.push_text(vec![
                f.field.name().to_string(),
                f.present.to_string(),
                f.changes.to_string(),
                interval,
                last_value,
            ]);
        }
        o.push_str(&t.render(&Text::of(&t, "", true)));
        o
    }
}
