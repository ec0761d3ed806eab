//! The host's side of a measurement: its power state, the CPU frequency governor and boost, and
//! the CPU other processes use right now (docs/methodology.md §21).
use std::path::Path;
use std::time::Duration;

use super::finding::Finding;
use crate::telemetry::foreign::{list, Own, ProcTable, ProcessShare};
use crate::telemetry::power_state::PowerState;
use crate::telemetry::task_cpu::{ForeignLoad, TaskCpu};

/// A study's default limit on other processes' CPU during a request (docs/methodology.md §7.7).
pub(crate) fn foreign_cpu_max_pct() -> f64 {
    crate::study::file::IdleGate::default().foreign_cpu_max_pct
}

/// The power state a study records in host.json (docs/methodology.md §9.7): reported, since two
/// studies under different states are not compared, not judged.
pub(crate) fn power_state(st: &PowerState) -> Finding {
    let line = st.line();
    if st == &PowerState::default() {
        return Finding::not_present("power state", line, None);
    }
    Finding::ok("power state", line)
}

/// Every CPU's `scaling_governor`: anything but `performance` ramps the clock with the load, so a
/// cold server starts each sample at whatever clock the idle host left.
pub(crate) fn governor(sysfs: &Path) -> Finding {
    const NAME: &str = "cpu governor";
    let cpus = sysfs.join("devices/system/cpu");
    let mut governors: Vec<String> = std::fs::read_dir(&cpus)
        .map(|d| {
            d.flatten()
                .filter(|e| e.file_name().to_str().is_some_and(|n| n.strip_prefix("cpu").is_some_and(is_index)))
                .filter_map(|e| std::fs::read_to_string(e.path().join("cpufreq/scaling_governor")).ok())
                .map(|g| g.trim().to_string())
                .collect()
        })
        .unwrap_or_default();
    if governors.is_empty() {
        return Finding::not_present(
            NAME,
            format!("no {}/cpu*/cpufreq/scaling_governor (a VM, or no cpufreq driver)", cpus.display()),
            None,
        );
    }
    let total = governors.len();
    governors.sort();
    let mut counts: Vec<(String, usize)> = Vec::new();
    for g in governors {
        match counts.last_mut() {
            Some((last, n)) if *last == g => *n += 1,
            _ => counts.push((g, 1)),
        }
    }
    let words = counts.iter().map(|(g, n)| format!("{g} on {n} of {total} CPUs")).collect::<Vec<_>>().join(", ");
    if counts.iter().all(|(g, _)| g == "performance") {
        return Finding::ok(NAME, words);
    }
    Finding::warn(
        NAME,
        words,
        "set the performance governor while measuring, e.g. a `before` hook `cpupower frequency-set -g performance` and an `after` hook that puts the governor back (docs/methodology.md §6)",
    )
}

fn is_index(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// CPU boost (turbo): reported, not judged; the interleaved order spreads its drift over every
/// variant alike (docs/methodology.md §5).
pub(crate) fn boost(sysfs: &Path) -> Finding {
    const NAME: &str = "cpu boost";
    let read = |rel: &str| std::fs::read_to_string(sysfs.join(rel)).ok().map(|s| s.trim().to_string());
    if let Some(v) = read("devices/system/cpu/cpufreq/boost") {
        let on = if v == "1" { "on" } else { "off" };
        return Finding::ok(NAME, format!("{on} (cpufreq/boost = {v})"));
    }
    if let Some(v) = read("devices/system/cpu/intel_pstate/no_turbo") {
        let on = if v == "0" { "on" } else { "off" };
        return Finding::ok(NAME, format!("{on} (intel_pstate/no_turbo = {v})"));
    }
    Finding::not_present(
        NAME,
        format!(
            "no {} nor intel_pstate/no_turbo (a VM, or no cpufreq driver)",
            sysfs.join("devices/system/cpu/cpufreq/boost").display()
        ),
        None,
    )
}

/// The CPU other processes use over `window`, % of one core: the measurement a study takes over
/// each request and its idle gate before it (docs/methodology.md §7.7, §9.1), with no server,
/// abprof's own threads left out; and the busiest of those processes, as the gate names them.
pub(crate) fn foreign_cpu(window: Duration) -> Option<(f64, Vec<ProcessShare>)> {
    // No server runs: a task that does not exist counts nothing.
    let (none, me) = (TaskCpu::new(u32::MAX), TaskCpu::new(std::process::id()));
    let (start, table) = (ForeignLoad::snapshot(&none, &me)?, ProcTable::read());
    std::thread::sleep(window);
    let (end, later) = (ForeignLoad::snapshot(&none, &me)?, ProcTable::read());
    Some((start.since(&end).foreign_pct, table.top_since(&later, Own::abprof(), TOP)))
}

/// The busiest processes a finding names (as the idle gate's progress line).
const TOP: usize = 3;

/// Other processes' CPU now, against a study's limit.
pub(crate) fn load_now(window: Duration, max_pct: f64) -> Finding {
    let (pct, top) = foreign_cpu(window).unzip();
    judge_load(pct, top.as_deref().unwrap_or_default(), window, max_pct)
}

pub(crate) fn judge_load(foreign_pct: Option<f64>, top: &[ProcessShare], window: Duration, max_pct: f64) -> Finding {
    const NAME: &str = "cpu load";
    let Some(pct) = foreign_pct else {
        return Finding::not_present(NAME, "no /proc/stat to read the host's CPU time from", None);
    };
    let value = format!("other processes used {pct:.0}% of a core over {:.1} s", window.as_secs_f64());
    if pct > max_pct {
        return Finding::warn(
            NAME,
            format!(
                "{value} (the busiest: {}); a study waits before each sample for less than {max_pct:.0}% and rejects a sample above it (other-workload, docs/methodology.md §7.7, §9.1)",
                list(top)
            ),
            "stop the busiest processes named above before measuring, or run when the host is quiet",
        );
    }
    Finding::ok(NAME, format!("{value} (a study's limit: {max_pct:.0}%)"))
}

#[cfg(test)]
mod tests {
    use super::super::finding::Status;
    use super::*;

    fn write(root: &Path, rel: &str, text: &str) {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    #[test]
    fn a_powersave_governor_warns_and_performance_everywhere_is_ready() {
        let d = tempfile::tempdir().unwrap();
        write(d.path(), "devices/system/cpu/cpu0/cpufreq/scaling_governor", "performance\n");
        write(d.path(), "devices/system/cpu/cpu1/cpufreq/scaling_governor", "performance\n");
        write(d.path(), "devices/system/cpu/cpufreq/boost", "1\n");
        let f = governor(d.path());
        assert_eq!((f.status, f.value.as_str()), (Status::Ok, "performance on 2 of 2 CPUs"));
        assert_eq!(boost(d.path()).value, "on (cpufreq/boost = 1)");

        write(d.path(), "devices/system/cpu/cpu1/cpufreq/scaling_governor", "powersave\n");
        let f = governor(d.path());
        assert_eq!(f.status, Status::Warn);
        assert_eq!(f.value, "performance on 1 of 2 CPUs, powersave on 1 of 2 CPUs");
        assert!(f.fix.unwrap().contains("cpupower frequency-set -g performance"));
    }

    #[test]
    fn a_host_without_cpufreq_has_no_governor_and_no_boost() {
        let d = tempfile::tempdir().unwrap();
        write(d.path(), "devices/system/cpu/cpu0/topology/core_id", "0\n");
        assert_eq!(governor(d.path()).status, Status::NotPresent);
        assert_eq!(boost(d.path()).status, Status::NotPresent);
        write(d.path(), "devices/system/cpu/intel_pstate/no_turbo", "1\n");
        assert_eq!(boost(d.path()).value, "off (intel_pstate/no_turbo = 1)");
    }

    #[test]
    fn the_power_state_is_reported_or_not_present() {
        assert_eq!(power_state(&PowerState::default()).status, Status::NotPresent);
        let st = PowerState { power_profile: Some("performance".into()), ..PowerState::default() };
        let f = power_state(&st);
        assert_eq!((f.status, f.value.as_str()), (Status::Ok, "profile performance"));
    }

    #[test]
    fn load_above_the_studys_limit_warns_with_its_rule() {
        let w = Duration::from_secs(1);
        let top = [ProcessShare { pid: 4242, name: "cc1plus".into(), pct: 81.0 }];
        let f = judge_load(Some(87.0), &top, w, 50.0);
        assert_eq!(f.status, Status::Warn);
        assert!(f.value.contains("87% of a core over 1.0 s") && f.value.contains("§7.7"), "{}", f.value);
        assert!(f.value.contains("the busiest: pid 4242 (cc1plus) 81%"), "{}", f.value);
        assert_eq!(judge_load(Some(3.0), &[], w, 50.0).status, Status::Ok);
        assert_eq!(judge_load(None, &[], w, 50.0).status, Status::NotPresent);
        assert!((foreign_cpu_max_pct() - 50.0).abs() < 1e-9);
    }

    /// A busy process beside abprof is other processes' load; above the limit it warns. In the
    /// test bed's tier, which runs one test at a time: a second of a busy core would be other
    /// tests' foreign load on the 2-core test bed (.config/nextest.toml).
    mod on_test_bed {
        use super::super::super::finding::Status;
        use super::super::*;

        #[test]
        fn a_busy_process_is_other_processes_load() {
            let mut busy = std::process::Command::new("sh").args(["-c", "while :; do :; done"]).spawn().unwrap();
            std::thread::sleep(Duration::from_millis(100));
            let pct = foreign_cpu(Duration::from_millis(1000));
            let _ = busy.kill();
            let _ = busy.wait();
            let (pct, top) = pct.unwrap();
            assert!(pct > 30.0, "a busy loop used {pct:.0}% of a core");
            assert_eq!(judge_load(Some(pct), &top, Duration::from_secs(1), 20.0).status, Status::Warn);
        }
    }
}
