//! A process's CPU use at millisecond resolution, for the idle gate on GPU-less hosts.
//!
//! `/proc/<pid>/stat` counts in 10 ms ticks, so a gate built on it needs windows of ~200 ms and ten
//! of them take two seconds per sample. `/proc/<pid>/task/<tid>/schedstat` counts nanoseconds on
//! the CPU per thread: summed over the server's threads, a 5 ms window already tells idle from busy.
use crate::child::group_members;
use std::path::PathBuf;

/// The CPU time of one process, or of every process of a process group as it was when looked up.
pub(crate) struct TaskCpu {
    /// The first is the process (or the group's leader) named at construction.
    task_dirs: Vec<PathBuf>,
}

impl TaskCpu {
    pub(crate) fn new(pid: u32) -> TaskCpu {
        TaskCpu { task_dirs: vec![task_dir(pid)] }
    }

    /// Every process of the server's process group (its leader is the process abprof started),
    /// listed once, now. A variant's binary may be a wrapper script that starts llama-server as
    /// its child without `exec` (to set an environment): the server is then the group, not the
    /// script's own pid, and counting only the script would leave the server's CPU to "other
    /// processes" (docs/methodology.md §7.7). Looked up once per sample, after /health: the
    /// server's processes exist by then, and scanning /proc at every reading would be abprof's
    /// own load beside the request.
    pub(crate) fn group(pgid: u32) -> TaskCpu {
        let mut task_dirs = vec![task_dir(pgid)];
        task_dirs.extend(group_members(pgid).into_iter().filter(|&p| p != pgid).map(task_dir));
        TaskCpu { task_dirs }
    }

    /// Nanoseconds on the CPU of all the threads of its processes, or None if they are all gone.
    pub(crate) fn cpu_ns(&self) -> Option<u64> {
        let mut total = 0u64;
        let mut seen = false;
        for dir in &self.task_dirs {
            let Ok(tasks) = std::fs::read_dir(dir) else { continue };
            seen = true;
            for entry in tasks.flatten() {
                let text = std::fs::read_to_string(entry.path().join("schedstat")).unwrap_or_default();
                total += text.split_whitespace().next().and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
            }
        }
        seen.then_some(total)
    }
}

fn task_dir(pid: u32) -> PathBuf {
    PathBuf::from(format!("/proc/{pid}/task"))
}

/// Whether a CPU window that opened at `t0` may close at `now`. Readers sample at the window's
/// own spacing, and a read that comes a little early must not be held back a whole period: that
/// would repeat the last value, and the idle gate would count one window twice.
pub(crate) fn window_closes(t0: u64, now: u64, window_ns: u64) -> bool {
    now.saturating_sub(t0) >= window_ns - window_ns / 4
}

/// The server's CPU use as a telemetry source (GPU-less hosts): % of one core over windows of at
/// least `window`, precise because schedstat counts nanoseconds (a 2 ms window already tells
/// idle from busy). Read it no faster than the window, or readings repeat one value.
pub(crate) struct TaskCpuSource {
    cpu: TaskCpu,
    window: std::time::Duration,
    window_start: Option<(u64, u64)>,
    last_pct: Option<f64>,
}

impl TaskCpuSource {
    #[cfg(test)]
    pub(crate) fn new(pid: u32, window: std::time::Duration) -> TaskCpuSource {
        TaskCpuSource::of(TaskCpu::new(pid), window)
    }

    pub(crate) fn of(cpu: TaskCpu, window: std::time::Duration) -> TaskCpuSource {
        TaskCpuSource { cpu, window, window_start: None, last_pct: None }
    }
}

impl super::TelemetrySource for TaskCpuSource {
    fn kind(&self) -> super::SourceKind {
        super::SourceKind::Cpu
    }

    fn describe(&self) -> String {
        let dirs = &self.cpu.task_dirs;
        let more =
            if dirs.len() > 1 { format!(" and {} more of its process group", dirs.len() - 1) } else { String::new() };
        format!("server CPU from {}/*/schedstat{more} ({} ms windows)", dirs[0].display(), self.window.as_millis())
    }

    fn read(&mut self) -> Result<super::Reading, super::TelemetryError> {
        let now = crate::clock::mono_ns();
        // /proc is read only when a window closes: in between the last value stands.
        let due = self.window_start.is_none_or(|(t0, _)| window_closes(t0, now, self.window.as_nanos() as u64));
        if let Some(cpu) = due.then(|| self.cpu.cpu_ns()).flatten() {
            if let Some((t0, c0)) = self.window_start {
                self.last_pct = Some(100.0 * cpu.saturating_sub(c0) as f64 / (now - t0) as f64);
            }
            self.window_start = Some((now, cpu));
        }
        Ok(super::Reading { cpu_pct: self.last_pct, ..Default::default() })
    }
}

/// Busy CPU time of the whole host, from the first line of `/proc/stat` (user, nice, system, irq,
/// softirq, steal; idle and iowait excluded), in ns.
pub(crate) fn host_busy_ns() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/stat").ok()?;
    let line = text.lines().next()?;
    let f: Vec<u64> = line.split_whitespace().skip(1).filter_map(|v| v.parse().ok()).collect();
    if f.len() < 8 {
        return None;
    }
    // USER_HZ is 100 on every Linux ABI abprof runs on: one tick is 10 ms.
    Some((f[0] + f[1] + f[2] + f[5] + f[6] + f[7]) * 10_000_000)
}

/// CPU used on this host by processes other than the server and abprof itself between two
/// snapshots: the load a "nothing else was running" claim must rule out.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ForeignLoad {
    mono_ns: u64,
    host_ns: u64,
    server_ns: u64,
    self_ns: u64,
}

impl ForeignLoad {
    pub(crate) fn snapshot(server: &TaskCpu, me: &TaskCpu) -> Option<ForeignLoad> {
        Some(ForeignLoad {
            mono_ns: crate::clock::mono_ns(),
            host_ns: host_busy_ns()?,
            server_ns: server.cpu_ns().unwrap_or(0),
            self_ns: me.cpu_ns().unwrap_or(0),
        })
    }

    /// When it was taken (CLOCK_MONOTONIC, ns).
    pub(crate) fn at_ns(&self) -> u64 {
        self.mono_ns
    }

    /// The CPU used from `self` to `later`, each % of one core.
    pub(crate) fn since(&self, later: &ForeignLoad) -> CpuShares {
        let wall = later.mono_ns.saturating_sub(self.mono_ns).max(1) as f64;
        let host = later.host_ns.saturating_sub(self.host_ns) as f64;
        let server = later.server_ns.saturating_sub(self.server_ns) as f64;
        let me = later.self_ns.saturating_sub(self.self_ns) as f64;
        CpuShares {
            foreign_pct: 100.0 * (host - server - me).max(0.0) / wall,
            server_pct: 100.0 * server / wall,
            abprof_pct: 100.0 * me / wall,
        }
    }
}

/// Who used the host's CPU over one request, each % of one core.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct CpuShares {
    /// Everything but the server and abprof.
    pub(crate) foreign_pct: f64,
    pub(crate) server_pct: f64,
    /// abprof's own threads (schedstat counts ns, so its sampler's cost is seen in full).
    pub(crate) abprof_pct: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The process's own busy loop is seen at the share of a core it got. On a busy host that
    /// share is anything from a sliver to a whole core, so the loop runs until it has had 30 ms
    /// of CPU, and the reading is held against the process's own CPU clock over the same window,
    /// never against a fixed share.
    #[test]
    fn sees_its_own_busy_loop() {
        use crate::telemetry::TelemetrySource;
        use nix::time::{clock_gettime, ClockId};
        let cpu_ns = || {
            let t = clock_gettime(ClockId::CLOCK_PROCESS_CPUTIME_ID).unwrap();
            t.tv_sec() as f64 * 1e9 + t.tv_nsec() as f64
        };
        let mut t = TaskCpuSource::new(std::process::id(), std::time::Duration::from_millis(10));
        let (cpu0, wall0) = (cpu_ns(), std::time::Instant::now());
        assert!(t.read().unwrap().cpu_pct.is_none(), "no window has closed yet");
        let mut x = 0u64;
        while cpu_ns() - cpu0 < 30e6 {
            x = x.wrapping_add(1);
        }
        std::hint::black_box(x);
        let seen = t.read().unwrap().cpu_pct.unwrap();
        let own = 100.0 * (cpu_ns() - cpu0) / wall0.elapsed().as_nanos() as f64;
        assert!(seen > 0.5 * own && seen < 2.0 * own, "read {seen}% where the process's own clock says {own}%");
        assert!(TaskCpu::new(u32::MAX).cpu_ns().is_none());
    }

    /// A child in the group (as llama-server under a wrapper script that does not exec) is
    /// counted with the group; a process outside it is not.
    #[test]
    fn a_group_counts_the_children_its_leader_started() {
        use std::os::unix::process::CommandExt;
        let mut leader = std::process::Command::new("sh")
            .args(["-c", "sh -c 'while :; do :; done' & wait"])
            .process_group(0)
            .spawn()
            .unwrap();
        let pgid = leader.id();
        let t0 = std::time::Instant::now();
        while group_members(pgid).len() < 2 && t0.elapsed() < std::time::Duration::from_secs(5) {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let (group, alone) = (TaskCpu::group(pgid), TaskCpu::new(pgid));
        let (g0, a0) = (group.cpu_ns().unwrap(), alone.cpu_ns().unwrap());
        std::thread::sleep(std::time::Duration::from_millis(200));
        let (g, a) = (group.cpu_ns().unwrap() - g0, alone.cpu_ns().unwrap() - a0);
        let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pgid as i32), nix::sys::signal::Signal::SIGKILL);
        let _ = leader.wait();
        assert!(g > 20_000_000, "the busy child's CPU is the group's: {g} ns in 200 ms");
        assert!(a < 10_000_000, "the waiting leader alone is idle: {a} ns");
    }

    /// A read a little early still closes the window: holding the last value would make the idle
    /// gate count one window twice. Each read is timed from the window it should close (a tenth
    /// of the window early), so a host that oversleeps makes a read late, never early: the test
    /// holds on a busy host.
    #[test]
    fn a_window_closes_on_a_slightly_early_read() {
        let ms = 1_000_000;
        assert!(window_closes(0, 2 * ms - ms / 10, 2 * ms));
        assert!(!window_closes(0, ms, 2 * ms));
        let window = std::time::Duration::from_millis(4);
        let mut t = TaskCpuSource::new(std::process::id(), window);
        use crate::telemetry::TelemetrySource;
        t.read().unwrap();
        for _ in 0..20 {
            let (t0, _) = t.window_start.unwrap();
            let due = t0 + window.as_nanos() as u64 * 9 / 10;
            std::thread::sleep(std::time::Duration::from_nanos(due.saturating_sub(crate::clock::mono_ns())));
            t.read().unwrap();
            assert_ne!(t.window_start.unwrap().0, t0, "a read at 0.9 of the window closed it");
        }
    }

    #[test]
    fn host_busy_time_moves_forward() {
        let a = host_busy_ns().unwrap();
        let t = std::time::Instant::now();
        while t.elapsed() < std::time::Duration::from_millis(30) {}
        assert!(host_busy_ns().unwrap() >= a);
    }
}
