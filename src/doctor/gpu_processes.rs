//! Other processes on the GPU now, where the host can list them: `nvidia-smi`'s compute apps, or
//! the amdgpu KFD's per-process folders (/sys/class/kfd/kfd/proc/PID).
use std::path::Path;

use super::finding::Finding;

const NAME: &str = "gpu processes";

/// One process on the GPU.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct GpuProcess {
    pub(crate) pid: u32,
    pub(crate) name: String,
}

/// `nvidia-smi --query-compute-apps=pid,process_name --format=csv,noheader` lines.
fn nvidia(text: &str) -> Vec<GpuProcess> {
    text.lines()
        .filter_map(|l| {
            let (pid, name) = l.split_once(',')?;
            Some(GpuProcess { pid: pid.trim().parse().ok()?, name: name.trim().to_string() })
        })
        .collect()
}

/// The KFD's process folders, each named by its pid; the name from `/proc/PID/comm` when readable.
fn kfd(sysfs: &Path) -> Option<Vec<GpuProcess>> {
    let dir = std::fs::read_dir(sysfs.join("class/kfd/kfd/proc")).ok()?;
    let mut out: Vec<GpuProcess> = dir
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .map(|pid| {
            let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).ok();
            GpuProcess { pid, name: comm.map_or_else(|| "?".into(), |c| c.trim().to_string()) }
        })
        .collect();
    out.sort_by_key(|p| p.pid);
    Some(out)
}

/// The processes on the GPU other than `me`, with where they were listed from; `None` when the
/// host has no list.
pub(crate) fn list(
    sysfs: &Path,
    run: &dyn Fn(&str, &[&str]) -> Option<String>,
    me: u32,
) -> Option<(Vec<GpuProcess>, &'static str)> {
    let nv = run("nvidia-smi", &["--query-compute-apps=pid,process_name", "--format=csv,noheader"]);
    let (all, source) = match nv {
        Some(text) => (nvidia(&text), "nvidia-smi --query-compute-apps"),
        None => (kfd(sysfs)?, "/sys/class/kfd/kfd/proc"),
    };
    Some((all.into_iter().filter(|p| p.pid != me).collect(), source))
}

pub(crate) fn finding(sysfs: &Path, run: &dyn Fn(&str, &[&str]) -> Option<String>, me: u32) -> Finding {
    let Some((others, source)) = list(sysfs, run, me) else {
        return Finding::not_present(
            NAME,
            format!(
                "no list on this host: no nvidia-smi answered and no {}",
                sysfs.join("class/kfd/kfd/proc").display()
            ),
            None,
        );
    };
    if others.is_empty() {
        return Finding::ok(NAME, format!("none ({source})"));
    }
    let named = others.iter().map(|p| format!("{} {}", p.pid, p.name)).collect::<Vec<_>>().join(", ");
    Finding::warn(
        NAME,
        format!("{} other process(es) on the GPU: {named} ({source})", others.len()),
        "stop them before measuring, or stop them in a `before` hook (docs/methodology.md §6): the idle gate waits for an idle GPU, and a sample another workload slowed is rejected",
    )
}

#[cfg(test)]
mod tests {
    use super::super::finding::Status;
    use super::*;

    /// What nvidia-smi prints with one other job on the GPU (the query's format).
    fn busy_h200(program: &str, _: &[&str]) -> Option<String> {
        (program == "nvidia-smi").then(|| "4242, /usr/bin/python3\n".into())
    }

    fn idle_h200(program: &str, _: &[&str]) -> Option<String> {
        (program == "nvidia-smi").then(String::new)
    }

    fn no_probe(_: &str, _: &[&str]) -> Option<String> {
        None
    }

    #[test]
    fn another_job_on_an_nvidia_gpu_warns_and_names_it() {
        let d = tempfile::tempdir().unwrap();
        let f = finding(d.path(), &busy_h200, 1);
        assert_eq!(f.status, Status::Warn);
        assert!(f.value.contains("4242 /usr/bin/python3"), "{}", f.value);
        let f = finding(d.path(), &idle_h200, 1);
        assert_eq!((f.status, f.value.as_str()), (Status::Ok, "none (nvidia-smi --query-compute-apps)"));
        assert_eq!(finding(d.path(), &busy_h200, 4242).status, Status::Ok, "abprof itself is no other process");
    }

    #[test]
    fn a_kfd_process_folder_is_a_process_on_an_amd_gpu() {
        let d = tempfile::tempdir().unwrap();
        assert_eq!(finding(d.path(), &no_probe, 1).status, Status::NotPresent);
        std::fs::create_dir_all(d.path().join("class/kfd/kfd/proc")).unwrap();
        assert_eq!(finding(d.path(), &no_probe, 1).status, Status::Ok);
        let me = std::process::id();
        std::fs::create_dir_all(d.path().join(format!("class/kfd/kfd/proc/{me}"))).unwrap();
        let f = finding(d.path(), &no_probe, 1);
        assert_eq!(f.status, Status::Warn);
        assert!(f.value.contains(&format!("{me} ")), "named with its /proc comm: {}", f.value);
    }
}
