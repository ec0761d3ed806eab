//! CPU use of one process from `/proc/<pid>/stat`: the `cpu` backend on GPU-less hosts (the idle
//! gate then waits for "server CPU below X%"), and an add-on to any GPU backend.
use std::path::PathBuf;
use std::time::Duration;

use super::sysfs_file::SysfsFile;
use super::{Reading, SourceKind, TelemetryError, TelemetrySource};
use crate::clock::mono_ns;

/// USER_HZ, the unit of utime/stime: fixed at 100 by the Linux ABI on x86-64 and arm64.
const TICKS_PER_S: f64 = 100.0;

/// utime+stime move in 10 ms ticks, so a rate over a few ms would read 0% or 1000%. The value is
/// recomputed once this much time has passed and held in between; the sampler's change tracking
/// then shows this window as the field's real update interval.
pub(crate) const CPU_WINDOW: Duration = Duration::from_millis(200);

pub(crate) struct ProcessCpu {
    pid: i32,
    stat: SysfsFile,
    window_start: Option<(u64, u64)>,
    last_pct: Option<f64>,
}

/// utime + stime (ticks) from a `/proc/<pid>/stat` line. The command name may hold spaces and
/// parentheses, so fields are counted from the last ')'.
fn parse_cpu_ticks(stat: &[u8]) -> Option<u64> {
    let text = std::str::from_utf8(stat).ok()?;
    let rest = &text[text.rfind(')')? + 1..];
    let mut fields = rest.split_ascii_whitespace();
    // After ')': state(3) ppid(4) … utime is field 14, stime 15 (proc(5)); index from field 3.
    let utime: u64 = fields.nth(11)?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    Some(utime + stime)
}

impl ProcessCpu {
    pub(crate) fn open(pid: i32) -> Result<ProcessCpu, TelemetryError> {
        let path = PathBuf::from(format!("/proc/{pid}/stat"));
        let stat = SysfsFile::open_readable(&path).map_err(|_| TelemetryError::NoSuchProcess { pid })?;
        Ok(ProcessCpu { pid, stat, window_start: None, last_pct: None })
    }

    /// % of one core over the latest complete window; `None` until the first window closes.
    pub(crate) fn read_pct(&mut self) -> Result<Option<f64>, TelemetryError> {
        let now = mono_ns();
        // The stat file is read only when a window closes: in between the last value stands.
        let window = CPU_WINDOW.as_nanos() as u64;
        if self.window_start.is_some_and(|(t0, _)| !super::task_cpu::window_closes(t0, now, window)) {
            return Ok(self.last_pct);
        }
        let mut buf = [0u8; 1024];
        let n = self.stat.read_into(&mut buf).map_err(|_| TelemetryError::NoSuchProcess { pid: self.pid })?;
        let ticks = parse_cpu_ticks(&buf[..n]).ok_or_else(|| self.stat.parse_error("utime/stime", &buf[..n]))?;
        if let Some((t0, ticks0)) = self.window_start {
            let cpu_s = (ticks - ticks0) as f64 / TICKS_PER_S;
            self.last_pct = Some(100.0 * cpu_s / ((now - t0) as f64 / 1e9));
        }
        self.window_start = Some((now, ticks));
        Ok(self.last_pct)
    }
}

impl TelemetrySource for ProcessCpu {
    fn kind(&self) -> SourceKind {
        SourceKind::Cpu
    }

    fn describe(&self) -> String {
        format!("CPU use of process {} from /proc/{}/stat ({} ms windows)", self.pid, self.pid, CPU_WINDOW.as_millis())
    }

    fn read(&mut self) -> Result<Reading, TelemetryError> {
        Ok(Reading { cpu_pct: self.read_pct()?, ..Reading::default() })
    }
}

/// Any source plus the CPU use of one process (the server), so the idle gate can check both.
pub(crate) struct WithProcessCpu {
    pub(crate) inner: Box<dyn TelemetrySource>,
    pub(crate) cpu: ProcessCpu,
}

impl TelemetrySource for WithProcessCpu {
    fn kind(&self) -> SourceKind {
        self.inner.kind()
    }

    fn describe(&self) -> String {
        format!("{}; plus {}", self.inner.describe(), self.cpu.describe())
    }

    fn devices_on_host(&self) -> u32 {
        self.inner.devices_on_host()
    }

    fn power_fields(&self) -> Vec<super::power_field::PowerField> {
        self.inner.power_fields()
    }

    fn read(&mut self) -> Result<Reading, TelemetryError> {
        let mut r = self.inner.read()?;
        r.cpu_pct = self.cpu.read_pct()?;
        Ok(r)
    }

    fn drain_driver_power(&mut self, out: &mut Vec<super::DriverPowerSample>) -> Result<(), TelemetryError> {
        self.inner.drain_driver_power(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_ticks_past_a_tricky_command_name() {
        let line = b"1234 (my (odd) srv) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 8 0 100 0 0\n";
        assert_eq!(parse_cpu_ticks(line), Some(300));
        assert_eq!(parse_cpu_ticks(b"garbage"), None);
    }

    /// What the window reads is what the process's own CPU clock says it used over that wall
    /// time, however busy the host (a loaded host gives the spinning thread less of a core).
    #[test]
    fn measures_a_busy_thread_of_this_process() {
        use nix::time::{clock_gettime, ClockId};
        let cpu_ns = || {
            let t = clock_gettime(ClockId::CLOCK_PROCESS_CPUTIME_ID).unwrap();
            t.tv_sec() as f64 * 1e9 + t.tv_nsec() as f64
        };
        let mut cpu = ProcessCpu::open(std::process::id() as i32).unwrap();
        let (cpu0, wall0) = (cpu_ns(), std::time::Instant::now());
        assert_eq!(cpu.read_pct().unwrap(), None);
        // A full window, and enough CPU used in it that 10 ms ticks are a small part of it.
        let mut spins = 0u64;
        while wall0.elapsed() < CPU_WINDOW + Duration::from_millis(50) || cpu_ns() - cpu0 < 150e6 {
            spins = std::hint::black_box(spins + 1);
        }
        let seen = cpu.read_pct().unwrap().expect("a full window has passed");
        let own = 100.0 * (cpu_ns() - cpu0) / wall0.elapsed().as_nanos() as f64;
        assert!(seen > 0.5 * own && seen < 2.0 * own + 10.0, "read {seen}% where the process's own clock says {own}%");
    }

    #[test]
    fn a_missing_process_is_named() {
        let e = ProcessCpu::open(i32::MAX).err().unwrap();
        assert!(matches!(e, TelemetryError::NoSuchProcess { .. }), "{e}");
    }
}
