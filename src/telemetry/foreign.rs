//! Who uses the host's CPU besides the server and abprof: every process's CPU time from
//! `/proc/<pid>/stat`, two looks apart. The total that rule `other-workload` judges is
//! `task_cpu::ForeignLoad`'s (docs/methodology.md §7.7); this names the processes behind it, for
//! the idle gate's wait for a quiet host (§9.1) and doctor's CPU load finding (§21).
use serde::{Deserialize, Serialize};

/// USER_HZ, the unit of utime/stime: fixed at 100 by the Linux ABI on x86-64 and arm64.
const TICK_NS: f64 = 10_000_000.0;

/// One process's CPU over a window, % of one core.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct ProcessShare {
    pub(crate) pid: u32,
    /// Its command name (`/proc/<pid>/stat`'s second field).
    pub(crate) name: String,
    pub(crate) pct: f64,
}

/// The processes that are not foreign: the server's process group (every process of it is the
/// server, §7.7) and abprof itself, exactly those `ForeignLoad` leaves out of the total.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Own {
    pub(crate) server_pgid: Option<u32>,
    pub(crate) abprof: u32,
}

impl Own {
    /// abprof alone: no server runs (doctor).
    pub(crate) fn abprof() -> Own {
        Own { server_pgid: None, abprof: std::process::id() }
    }

    fn owns(&self, p: &ProcTicks) -> bool {
        p.pid == self.abprof || self.server_pgid.is_some_and(|g| p.pgid == g)
    }
}

#[derive(Debug, Clone, PartialEq)]
struct ProcTicks {
    pid: u32,
    ppid: u32,
    pgid: u32,
    name: String,
    /// utime + stime of every thread of the process.
    ticks: u64,
}

/// Every process's CPU time at one moment.
#[derive(Debug, Clone)]
pub(crate) struct ProcTable {
    mono_ns: u64,
    procs: Vec<ProcTicks>,
}

impl ProcTable {
    /// Reads `/proc/*/stat`: one small file a process, so a look costs a few ms on a busy host;
    /// taken only while the gate waits, never during a request.
    pub(crate) fn read() -> ProcTable {
        let mut procs: Vec<ProcTicks> = std::fs::read_dir("/proc")
            .map(|d| {
                d.flatten()
                    .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
                    .filter_map(|pid| parse_stat(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?))
                    .collect()
            })
            .unwrap_or_default();
        procs.sort_by_key(|p| p.pid);
        ProcTable { mono_ns: crate::clock::mono_ns(), procs }
    }

    /// How long ago it was read.
    pub(crate) fn age(&self) -> std::time::Duration {
        std::time::Duration::from_nanos(crate::clock::mono_ns().saturating_sub(self.mono_ns))
    }

    /// The `n` foreign processes that used the most CPU from this look to `later`, busiest first;
    /// a process seen in only one look is left out (it started or ended between them).
    pub(crate) fn top_since(&self, later: &ProcTable, own: Own, n: usize) -> Vec<ProcessShare> {
        let wall = later.mono_ns.saturating_sub(self.mono_ns).max(1) as f64;
        let mut shares: Vec<ProcessShare> = later
            .procs
            .iter()
            .filter(|p| !own.owns(p))
            .filter_map(|p| {
                let before = self.procs.binary_search_by_key(&p.pid, |q| q.pid).ok().map(|i| &self.procs[i])?;
                let used = p.ticks.checked_sub(before.ticks)?;
                (used > 0).then(|| ProcessShare {
                    pid: p.pid,
                    name: p.name.clone(),
                    pct: 100.0 * used as f64 * TICK_NS / wall,
                })
            })
            .collect();
        shares.sort_by(|a, b| b.pct.total_cmp(&a.pct).then(a.pid.cmp(&b.pid)));
        shares.truncate(n);
        shares
    }
}

/// pid, ppid, pgrp, name and utime + stime from a `/proc/<pid>/stat` line. The command name may
/// hold spaces and parentheses, so fields are counted from the last ')'.
fn parse_stat(line: &str) -> Option<ProcTicks> {
    let (open, close) = (line.find('(')?, line.rfind(')')?);
    let pid = line[..open].trim().parse().ok()?;
    let name = line.get(open + 1..close)?.to_string();
    // After ')': state(3) ppid(4) pgrp(5) … utime(14) stime(15), proc(5).
    let f: Vec<&str> = line[close + 1..].split_ascii_whitespace().take(13).collect();
    let num = |i: usize| f.get(i)?.parse::<u64>().ok();
    Some(ProcTicks {
        pid,
        ppid: u32::try_from(num(1)?).ok()?,
        pgid: u32::try_from(num(2)?).ok()?,
        name,
        ticks: num(11)? + num(12)?,
    })
}

/// `pid 4242 (cc1plus) 97%, pid 77 (sh) 12%`: the processes a person would stop.
pub(crate) fn list(top: &[ProcessShare]) -> String {
    if top.is_empty() {
        return "no single process stands out (many short-lived ones, or the kernel)".into();
    }
    top.iter().map(|p| format!("pid {} ({}) {:.0}%", p.pid, p.name, p.pct)).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_stat_line_past_a_tricky_command_name() {
        let line = "1234 (my (odd) srv) S 77 1200 1200 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 8 0 100 0 0\n";
        let p = parse_stat(line).unwrap();
        assert_eq!((p.pid, p.ppid, p.pgid, p.name.as_str(), p.ticks), (1234, 77, 1200, "my (odd) srv", 300));
        assert_eq!(parse_stat("garbage"), None);
    }

    #[test]
    fn the_server_group_and_abprof_are_not_foreign() {
        let p = |pid, ppid, pgid| ProcTicks { pid, ppid, pgid, name: "x".into(), ticks: 0 };
        let own = Own { server_pgid: Some(500), abprof: 10 };
        assert!(own.owns(&p(500, 10, 500)) && own.owns(&p(501, 500, 500)), "the server's group");
        assert!(own.owns(&p(10, 1, 10)), "abprof");
        assert!(!own.owns(&p(12, 1, 12)) && !own.owns(&p(11, 10, 11)), "another process, a hook abprof started");
        let table = |ticks: [u64; 3], ms: u64| ProcTable {
            mono_ns: ms * 1_000_000,
            procs: [(12, 1, 12), (13, 1, 13), (501, 500, 500)]
                .iter()
                .zip(ticks)
                .map(|(&(pid, ppid, pgid), ticks)| ProcTicks { ticks, ..p(pid, ppid, pgid) })
                .collect(),
        };
        let top = table([0, 5, 0], 0).top_since(&table([99, 15, 100], 1000), own, 5);
        let got: Vec<(u32, f64)> = top.iter().map(|s| (s.pid, s.pct.round())).collect();
        assert_eq!(got, [(12, 99.0), (13, 10.0)]);
        assert_eq!(list(&top[..1]), "pid 12 (x) 99%");
    }

    /// A busy child this test started is among the busiest foreign processes, whatever else runs
    /// on the host (the suite runs beside busy loops): a relative fact, never a share.
    #[test]
    fn a_busy_child_is_among_the_busiest_foreign_processes() {
        let mut busy = std::process::Command::new("sh").args(["-c", "while :; do :; done"]).spawn().unwrap();
        let before = ProcTable::read();
        let until = std::time::Instant::now() + std::time::Duration::from_millis(400);
        while std::time::Instant::now() < until {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let after = ProcTable::read();
        let _ = busy.kill();
        let _ = busy.wait();
        // This process (abprof, here) is not foreign; its busy child is, among the busiest 16.
        let top = before.top_since(&after, Own::abprof(), 16);
        assert!(top.iter().all(|s| s.pid != std::process::id()), "{top:?}");
        assert!(top.iter().any(|s| s.pid == busy.id() && s.name == "sh"), "{top:?}");
    }
}
