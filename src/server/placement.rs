//! Where the server's threads run (docs/methodology.md §2.1): the CPUs a study may place the
//! server on (`--server-cpus`), abprof's own threads kept off them, and per sample the CPU and
//! NUMA node each busy server thread was last on, so a reader can see whether placement is what
//! splits a variant's samples into clusters.
use nix::sched::CpuSet;
use nix::unistd::Pid;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// A set of CPU numbers, sorted and distinct, as `--server-cpus` names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct CpuList(Vec<u32>);

/// Evidence keeps the list as the kernel writes one (`0-3,8`); reading it back does not ask
/// whether those CPUs are online here: the study may have run on another host.
impl TryFrom<String> for CpuList {
    type Error = String;
    fn try_from(text: String) -> Result<CpuList, String> {
        parse_ranges(&text).map(CpuList).ok_or_else(|| format!("{text:?} is not a CPU list"))
    }
}

impl From<CpuList> for String {
    fn from(list: CpuList) -> String {
        list.to_string()
    }
}

impl CpuList {
    /// `0-7,16`, or `node:N` (the CPUs of NUMA node N, from sysfs); every CPU must be online.
    pub(crate) fn parse(text: &str) -> Result<CpuList, String> {
        let text = text.trim();
        let list = if let Some(node) = text.strip_prefix("node:") {
            let n: u32 = node.parse().map_err(|_| format!("--server-cpus {text}: `node:` takes a node number"))?;
            let path = format!("/sys/devices/system/node/node{n}/cpulist");
            let sys = std::fs::read_to_string(&path)
                .map_err(|_| format!("--server-cpus {text}: this host has no NUMA node {n} ({path} is unreadable)"))?;
            parse_ranges(&sys).ok_or_else(|| format!("--server-cpus {text}: {path} is not a CPU list"))?
        } else {
            parse_ranges(text).ok_or_else(|| {
                format!("--server-cpus {text}: not a CPU list; give CPU numbers and ranges like 0-7,16, or node:N")
            })?
        };
        let online = online_cpus();
        if let Some(off) = list.iter().find(|c| !online.contains(c)) {
            return Err(format!(
                "--server-cpus {text}: CPU {off} is not online here (online: {}); name online CPUs",
                CpuList(online.clone())
            ));
        }
        Ok(CpuList(list))
    }

    fn cpu_set(&self) -> Option<CpuSet> {
        let mut set = CpuSet::new();
        for &c in &self.0 {
            set.set(c as usize).ok()?;
        }
        Some(set)
    }
}

impl std::fmt::Display for CpuList {
    /// Ranges, as the kernel writes them: `0-3,8`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut parts = Vec::new();
        let mut i = 0;
        while i < self.0.len() {
            let start = self.0[i];
            while i + 1 < self.0.len() && self.0[i + 1] == self.0[i] + 1 {
                i += 1;
            }
            parts.push(if self.0[i] == start { start.to_string() } else { format!("{start}-{}", self.0[i]) });
            i += 1;
        }
        f.write_str(&parts.join(","))
    }
}

/// `0-3,8,10-11` → [0,1,2,3,8,10,11]; None if any part is not a number or range.
fn parse_ranges(text: &str) -> Option<Vec<u32>> {
    let mut out = Vec::new();
    for part in text.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (u32, u32) = (a.trim().parse().ok()?, b.trim().parse().ok()?);
                if b < a || b - a > 4096 {
                    return None;
                }
                out.extend(a..=b);
            }
            None => out.push(part.trim().parse().ok()?),
        }
    }
    out.sort_unstable();
    out.dedup();
    (!out.is_empty()).then_some(out)
}

fn online_cpus() -> Vec<u32> {
    std::fs::read_to_string("/sys/devices/system/cpu/online")
        .ok()
        .and_then(|t| parse_ranges(&t))
        .unwrap_or_else(|| (0..std::thread::available_parallelism().map_or(1, |n| n.get() as u32)).collect())
}

/// The affinity a spawned server gets, built before `fork` so that the child only makes the
/// system call (async-signal-safe) between fork and exec.
#[derive(Clone)]
pub(crate) struct ChildAffinity(CpuSet);

impl ChildAffinity {
    pub(crate) fn of(list: &CpuList) -> Option<ChildAffinity> {
        list.cpu_set().map(ChildAffinity)
    }

    /// In the forked child: place the calling (only) thread, which `exec` keeps.
    pub(crate) fn apply(&self) -> std::io::Result<()> {
        nix::sched::sched_setaffinity(Pid::from_raw(0), &self.0).map_err(std::io::Error::from)
    }
}

/// Keeps every thread abprof has now, and those it starts later (they inherit), off the server's
/// CPUs: the sampler, the stream reader and the idle gate then never share a core with the server
/// (§2.1). Returns the CPUs abprof kept, or None when the server was given every online CPU (then
/// there is nowhere else to go and nothing changes).
pub(crate) fn keep_abprof_off(server: &CpuList) -> Option<CpuList> {
    let rest: Vec<u32> = online_cpus().into_iter().filter(|c| !server.0.contains(c)).collect();
    if rest.is_empty() {
        return None;
    }
    let list = CpuList(rest);
    let set = list.cpu_set()?;
    for tid in tasks(Path::new("/proc/self/task")) {
        // A thread that ended between the listing and the call is no longer abprof's concern.
        let _ = nix::sched::sched_setaffinity(Pid::from_raw(tid as i32), &set);
    }
    Some(list)
}

fn tasks(dir: &Path) -> Vec<u32> {
    std::fs::read_dir(dir)
        .map(|d| d.flatten().filter_map(|e| e.file_name().to_str()?.parse().ok()).collect())
        .unwrap_or_default()
}

/// One server thread as it was when the request ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct ThreadPlacement {
    pub(crate) tid: u32,
    pub(crate) comm: String,
    /// The CPU it last ran on (`/proc/PID/task/TID/stat` field 39).
    pub(crate) cpu: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) node: Option<u32>,
    /// Time on a CPU since it started, ms (schedstat).
    pub(crate) run_ms: f64,
    /// Times the kernel took the CPU from it (preemption), since it started.
    pub(crate) involuntary_switches: u64,
}

/// The server's busiest threads when its request ended (docs/methodology.md §2.1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct ServerPlacement {
    /// The CPUs the study placed the server on, if it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) asked: Option<CpuList>,
    /// Busiest first; at most [`THREADS_KEPT`].
    pub(crate) threads: Vec<ThreadPlacement>,
}

/// A CUDA server has dozens of threads, most asleep; the few that did the work say where it ran.
const THREADS_KEPT: usize = 6;

impl ServerPlacement {
    /// Reads every thread of the processes of group `pgid` (the server abprof started and, for a
    /// wrapper, the server it runs).
    pub(crate) fn read(pgid: u32, asked: Option<CpuList>) -> ServerPlacement {
        let nodes = node_map();
        let mut pids = crate::child::group_members(pgid);
        if !pids.contains(&pgid) {
            pids.push(pgid);
        }
        let mut threads: Vec<ThreadPlacement> = pids
            .into_iter()
            .flat_map(|pid| {
                let dir = format!("/proc/{pid}/task");
                tasks(Path::new(&dir)).into_iter().filter_map(move |tid| thread(&format!("{dir}/{tid}"), tid))
            })
            .map(|mut t| {
                t.node = nodes.iter().find(|(_, cpus)| cpus.contains(&t.cpu)).map(|(n, _)| *n);
                t
            })
            .collect();
        threads.sort_by(|a, b| b.run_ms.total_cmp(&a.run_ms));
        threads.truncate(THREADS_KEPT);
        ServerPlacement { asked, threads }
    }
}

fn thread(dir: &str, tid: u32) -> Option<ThreadPlacement> {
    let stat = std::fs::read_to_string(format!("{dir}/stat")).ok()?;
    let (open, close) = (stat.find('(')?, stat.rfind(')')?);
    // Fields after the command name start at field 3 (state); field 39 is the last CPU.
    let cpu: u32 = stat[close + 1..].split_whitespace().nth(39 - 3)?.parse().ok()?;
    let run_ns: u64 = std::fs::read_to_string(format!("{dir}/schedstat"))
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(0);
    let status = std::fs::read_to_string(format!("{dir}/status")).unwrap_or_default();
    let involuntary_switches = status
        .lines()
        .find_map(|l| l.strip_prefix("nonvoluntary_ctxt_switches:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    Some(ThreadPlacement {
        tid,
        comm: stat[open + 1..close].to_string(),
        cpu,
        node: None,
        run_ms: run_ns as f64 / 1e6,
        involuntary_switches,
    })
}

/// NUMA node → its CPUs, from sysfs; empty on a host without the node folders.
fn node_map() -> Vec<(u32, Vec<u32>)> {
    let Ok(dir) = std::fs::read_dir("/sys/devices/system/node") else { return Vec::new() };
    let mut nodes: Vec<(u32, Vec<u32>)> = dir
        .flatten()
        .filter_map(|e| {
            let n: u32 = e.file_name().to_str()?.strip_prefix("node")?.parse().ok()?;
            let cpus = parse_ranges(&std::fs::read_to_string(e.path().join("cpulist")).ok()?)?;
            Some((n, cpus))
        })
        .collect();
    nodes.sort_by_key(|(n, _)| *n);
    nodes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_parse_and_print_as_the_kernel_writes_them() {
        assert_eq!(parse_ranges("0-3,8,10-11\n"), Some(vec![0, 1, 2, 3, 8, 10, 11]));
        assert_eq!(parse_ranges("3,1,1"), Some(vec![1, 3]));
        assert_eq!(parse_ranges("a"), None);
        assert_eq!(parse_ranges("4-2"), None);
        assert_eq!(parse_ranges(""), None);
        assert_eq!(CpuList(vec![0, 1, 2, 3, 8, 10, 11]).to_string(), "0-3,8,10-11");
        assert_eq!(CpuList(vec![5]).to_string(), "5");
    }

    #[test]
    fn a_bad_list_is_one_line_naming_the_fix() {
        let e = CpuList::parse("x-y").unwrap_err();
        assert!(e.contains("like 0-7,16, or node:N"), "{e}");
        let e = CpuList::parse("100000").unwrap_err();
        assert!(e.contains("CPU 100000 is not online here"), "{e}");
        let e = CpuList::parse("node:999").unwrap_err();
        assert!(e.contains("no NUMA node 999"), "{e}");
        assert_eq!(CpuList::parse("0").unwrap().0, vec![0]);
    }

    #[test]
    fn a_spawned_process_runs_on_the_cpus_it_was_given_and_its_threads_are_read() {
        use std::os::unix::process::CommandExt;
        let list = CpuList::parse("0").unwrap();
        let affinity = ChildAffinity::of(&list).unwrap();
        let mut cmd = std::process::Command::new("sh");
        cmd.args(["-c", "grep Cpus_allowed_list /proc/self/status; sleep 5"])
            .stdout(std::process::Stdio::piped())
            .process_group(0);
        // SAFETY: the closure only makes one system call.
        unsafe { cmd.pre_exec(move || affinity.apply()) };
        let mut child = cmd.spawn().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(200));
        let placement = ServerPlacement::read(child.id(), Some(list.clone()));
        child.kill().unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(String::from_utf8_lossy(&out.stdout).contains("Cpus_allowed_list:\t0"));
        assert!(!placement.threads.is_empty());
        assert!(placement.threads.iter().all(|t| t.cpu == 0), "{placement:?}");
        assert_eq!(placement.asked, Some(list));
    }
}
