//! `run.json`: the mark of a run in progress in an evidence folder (docs/methodology.md §6). It is
//! written when a run starts, names the server of the sample in flight, and is removed once the
//! restore hooks ran. A run killed outright (SIGKILL, a crash, a power cut) leaves it behind, and
//! the next `--resume` reads it: it says so, runs the restore the dead run never ran, and stops a
//! server of this study that outlived it.
use super::evidence::{read_json, write_json, Evidence, EvidenceError};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::layout::RUN_FILE;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub(crate) struct RunRecord {
    pub(crate) abprof_pid: u32,
    pub(crate) started_at: String,
    /// The server of the sample in flight (none between samples).
    pub(crate) server: Option<InFlight>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub(crate) struct InFlight {
    pub(crate) pid: u32,
    /// The server's own process group (it leads it).
    pub(crate) pgid: u32,
    pub(crate) sample_dir: PathBuf,
}

/// Writes and clears `run.json` of one evidence folder.
#[derive(Debug, Clone)]
pub(crate) struct RunFile {
    path: PathBuf,
    record: RunRecord,
}

impl RunFile {
    /// Marks a run in progress.
    pub(crate) fn begin(ev: &Evidence) -> Result<RunFile, EvidenceError> {
        let record =
            RunRecord { abprof_pid: std::process::id(), started_at: chrono::Local::now().to_rfc3339(), server: None };
        let f = RunFile { path: ev.path(RUN_FILE), record };
        write_json(&f.path, &f.record)?;
        Ok(f)
    }

    /// Names the server now in flight (None: none). Best effort: a record that cannot be written
    /// must not end a sample; the process-group check on resume still needs the study folder in
    /// the server's argv.
    pub(crate) fn set_server(&mut self, server: Option<InFlight>) {
        self.record.server = server;
        let _ = write_json(&self.path, &self.record);
    }
}

/// Dropped once the restore ran (the driver declares it before the restore guard): this run
/// needs nothing from the next one.
impl Drop for RunFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// What a previous run left behind, if it died without restoring.
pub(crate) fn previous(ev: &Evidence) -> Option<RunRecord> {
    let path = ev.path(RUN_FILE);
    // An unreadable record still means a run died mid-write: restore anyway.
    path.exists()
        .then(|| read_json(&path).unwrap_or(RunRecord { abprof_pid: 0, started_at: String::new(), server: None }))
}

/// Processes of process group `pgid` whose command line names `root`: the only ones a resume
/// may stop, so that a recycled pid or group of another program is never touched.
pub(crate) fn leftover_servers(pgid: u32, root: &Path) -> Vec<i32> {
    let needle = root.display().to_string();
    let Ok(dir) = std::fs::read_dir("/proc") else { return Vec::new() };
    dir.flatten()
        .filter_map(|e| e.file_name().to_string_lossy().parse::<i32>().ok())
        .filter(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let after = stat.rsplit(')').next().unwrap_or("");
            // Fields after the name: state, ppid, pgrp.
            let group: Option<u32> = after.split_whitespace().nth(2).and_then(|g| g.parse().ok());
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            group == Some(pgid) && String::from_utf8_lossy(&cmdline).replace('\0', " ").contains(&needle)
        })
        .collect()
}

/// Stops the processes `leftover_servers` found: SIGKILL (they measure nothing now), then waits
/// up to 5 s for them to go. Returns how many were stopped.
pub(crate) fn stop_leftovers(pids: &[i32]) -> usize {
    for &p in pids {
        let _ = kill(Pid::from_raw(p), Signal::SIGKILL);
    }
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(5) && pids.iter().any(|p| alive(*p)) {
        std::thread::sleep(Duration::from_millis(10));
    }
    pids.len()
}

/// Alive and not a zombie waiting for its parent.
fn alive(pid: i32) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    !stat.is_empty() && stat.rsplit(')').next().and_then(|a| a.split_whitespace().next()) != Some("Z")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;

    #[test]
    fn a_run_leaves_its_mark_until_it_finishes() {
        let d = tempfile::tempdir().unwrap();
        let ev = Evidence::create(&d.path().join("s")).unwrap();
        assert!(previous(&ev).is_none());
        let mut f = RunFile::begin(&ev).unwrap();
        f.set_server(Some(InFlight { pid: 1, pgid: 1, sample_dir: "x".into() }));
        let seen = previous(&ev).unwrap();
        assert_eq!(seen.abprof_pid, std::process::id());
        assert_eq!(seen.server.unwrap().pgid, 1);
        drop(f);
        assert!(previous(&ev).is_none());
    }

    #[test]
    fn only_processes_naming_the_study_folder_are_leftovers() {
        let d = tempfile::tempdir().unwrap();
        let mut child =
            std::process::Command::new("sleep").arg("30").env("X", d.path()).process_group(0).spawn().unwrap();
        let pgid = child.id();
        assert!(leftover_servers(pgid, d.path()).is_empty(), "its argv does not name the folder");
        child.kill().unwrap();
        child.wait().unwrap();
        let marker = d.path().join("log");
        // A shell that waits in a builtin (`read` on a pipe this test holds), so the group holds no
        // forked child: a `sleep` child shows the shell's argv until it has exec'd, and was found too.
        let mut child = std::process::Command::new("sh")
            .args(["-c", "read x; : \"$0\"", marker.to_str().unwrap()])
            .stdin(std::process::Stdio::piped())
            .process_group(0)
            .spawn()
            .unwrap();
        // Until the child has exec'd `sh`, its /proc cmdline is still this test binary's.
        let cmdline = format!("/proc/{}/cmdline", child.id());
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while !std::fs::read(&cmdline).unwrap_or_default().starts_with(b"sh\0") && std::time::Instant::now() < deadline
        {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let found = leftover_servers(child.id(), d.path());
        assert_eq!(found, vec![child.id() as i32]);
        assert_eq!(stop_leftovers(&found), 1);
        child.wait().unwrap();
    }
}
