//! A child process timed from spawn to exit, in its own process group so that a timeout — or
//! anything it left running — can be ended as a whole without touching any other process. Used
//! by the Pi agent's processes and by the `--version` probe of a variant's binary.
use crate::clock::Stamp;
use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use serde::{Deserialize, Serialize};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The executable file `program` in the first folder of PATH that holds one, as a shell finds it.
pub(crate) fn on_path(program: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(program))
        .find(|p| std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0))
}

/// How a timed process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum TimedExit {
    Exited(i32),
    Signaled(i32),
    TimedOut,
    /// abprof was told to stop (SIGINT/SIGTERM) and ended the process.
    Interrupted,
    /// Its output did not grow for this many seconds, and it was ended (see [`StallWatch`]).
    Stalled(u64),
}

impl TimedExit {
    pub(crate) fn describe(&self) -> String {
        match self {
            TimedExit::Exited(c) => format!("exited with status {c}"),
            TimedExit::Signaled(s) => format!("was killed by signal {s}"),
            TimedExit::TimedOut => "ran past its timeout".into(),
            TimedExit::Interrupted => "was stopped because abprof was interrupted".into(),
            TimedExit::Stalled(s) => format!("wrote nothing for {s} s (stalled) and was stopped"),
        }
    }
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct TimedRun {
    pub(crate) exit: TimedExit,
    /// Spawn to exit (to the kill, on a timeout), ms.
    pub(crate) wall_ms: f64,
}

/// How often a running process's wait looks at the cancel flag.
const CANCEL_POLL: Duration = Duration::from_millis(50);

/// A process that streams what it does into a file (the Pi agent's JSON events): when the file
/// stops growing for `after`, the process is stuck and is ended.
#[derive(Debug, Clone)]
pub(crate) struct StallWatch {
    pub(crate) output: PathBuf,
    pub(crate) after: Duration,
}

/// Runs `cmd` to completion, `timeout`, or until `cancel` is set. The waiting thread stamps the
/// exit the moment `wait` returns, so the wall time carries no polling delay. On a timeout or a
/// cancel the group gets SIGTERM, then SIGKILL two seconds later.
pub(crate) fn run_timed(cmd: &mut Command, timeout: Duration, cancel: &AtomicBool) -> std::io::Result<TimedRun> {
    run_watched(cmd, timeout, None, cancel)
}

/// [`run_timed`], telling `group` the process group once it is spawned and `None` once it is
/// over (a build's leash, `artifact::leash`).
pub(crate) fn run_timed_telling(
    cmd: &mut Command,
    timeout: Duration,
    cancel: &AtomicBool,
    group: &dyn Fn(Option<u32>),
) -> std::io::Result<TimedRun> {
    run_reporting(cmd, timeout, None, cancel, group, false)
}

/// [`run_timed`], also ended like a timeout when `stall` sees its output stand still.
pub(crate) fn run_watched(
    cmd: &mut Command,
    timeout: Duration,
    stall: Option<&StallWatch>,
    cancel: &AtomicBool,
) -> std::io::Result<TimedRun> {
    run_reporting(cmd, timeout, stall, cancel, &|_| {}, true)
}

fn run_reporting(
    cmd: &mut Command,
    timeout: Duration,
    stall: Option<&StallWatch>,
    cancel: &AtomicBool,
    tell: &dyn Fn(Option<u32>),
    leash: bool,
) -> std::io::Result<TimedRun> {
    cmd.process_group(0);
    let abprof = std::process::id() as i32;
    // A leashed child dies with abprof. Fired when the forking thread exits: this one, which
    // waits for the child below.
    // SAFETY: between fork and exec only async-signal-safe calls: prctl, getppid and raise.
    if leash {
        unsafe {
            cmd.pre_exec(move || {
                nix::sys::prctl::set_pdeathsig(Signal::SIGKILL).map_err(std::io::Error::from)?;
                // abprof died between fork and prctl: the signal will never come.
                if nix::libc::getppid() != abprof {
                    nix::libc::raise(nix::libc::SIGKILL);
                }
                Ok(())
            });
        }
    }
    let started = Stamp::now();
    let mut child = cmd.spawn()?;
    tell(Some(child.id()));
    let group = Pid::from_raw(child.id() as i32);
    // The death signal reaches the child alone; the leash ends what it started too.
    let held = if leash { GroupLeash::hold(child.id()).ok() } else { None };
    let (tx, rx) = mpsc::channel();
    let waiter = std::thread::spawn(move || {
        let status = child.wait();
        let _ = tx.send((status, Stamp::now()));
    });
    let deadline = Instant::now() + timeout;
    let output_len = |w: &StallWatch| std::fs::metadata(&w.output).map_or(0, |m| m.len());
    let mut progress = stall.map(|w| (output_len(w), Instant::now()));
    let waited = loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if let Ok(done) = rx.recv_timeout(left.min(CANCEL_POLL)) {
            break Ok(done);
        }
        if cancel.load(Ordering::Relaxed) {
            break Err(TimedExit::Interrupted);
        }
        if left <= CANCEL_POLL {
            break Err(TimedExit::TimedOut);
        }
        if let (Some(w), Some((len, since))) = (stall, progress.as_mut()) {
            let now = output_len(w);
            if now != *len {
                (*len, *since) = (now, Instant::now());
            } else if since.elapsed() >= w.after {
                break Err(TimedExit::Stalled(w.after.as_secs()));
            }
        }
    };
    let (exit, ended) = match waited {
        Ok((status, ended)) => {
            let status = status?;
            let exit = match (status.code(), status.signal()) {
                (Some(c), _) => TimedExit::Exited(c),
                (_, Some(s)) => TimedExit::Signaled(s),
                _ => TimedExit::Exited(-1),
            };
            (exit, ended)
        }
        Err(why) => {
            let ended = Stamp::now();
            let _ = killpg(group, Signal::SIGTERM);
            if rx.recv_timeout(Duration::from_secs(2)).is_err() {
                let _ = killpg(group, Signal::SIGKILL);
            }
            (why, ended)
        }
    };
    let _ = waiter.join();
    // Whatever the process started and left behind in its group goes with it.
    if killpg(group, None).is_ok() {
        let _ = killpg(group, Signal::SIGKILL);
    }
    if let Some(l) = held {
        l.release();
    }
    tell(None);
    Ok(TimedRun { exit, wall_ms: started.ms_until(&ended) })
}

/// What ends a child's whole process group when abprof dies without a chance to clean up
/// (SIGKILL, a crash): a small watcher holding the other end of a pipe from abprof. When the pipe
/// closes without "done" (abprof is gone, however it died), it sends the group SIGKILL. The
/// child's own death signal (`PR_SET_PDEATHSIG`) reaches only the child; an agent's tool
/// processes would otherwise live on (docs/methodology.md §11).
struct GroupLeash {
    stdin: std::process::ChildStdin,
    watcher: std::process::Child,
}

impl GroupLeash {
    fn hold(pgid: u32) -> std::io::Result<GroupLeash> {
        let mut watcher = Command::new("sh")
            .arg("-c")
            .arg(r#"read what; [ "$what" = done ] || kill -9 -"$1" 2>/dev/null; exit 0"#)
            .arg("abprof-group-leash")
            .arg(pgid.to_string())
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            // Its own group: a Ctrl-C at the terminal is abprof's to handle, not the watcher's.
            .process_group(0)
            .spawn()?;
        let stdin = watcher.stdin.take().ok_or_else(|| std::io::Error::other("no pipe to the leash"))?;
        Ok(GroupLeash { stdin, watcher })
    }

    /// The group ended with its child: the watcher exits without a signal.
    fn release(mut self) {
        use std::io::Write;
        let _ = writeln!(self.stdin, "done");
        drop(self.stdin);
        let _ = self.watcher.wait();
    }
}

/// The pids whose process group is `pgid` (field 5 of `/proc/PID/stat`, after the command name
/// in parentheses, which may itself hold spaces and parentheses).
pub(crate) fn group_members(pgid: u32) -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc") else { return Vec::new() };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let rest = stat.rfind(')').map_or("", |i| &stat[i + 1..]);
            rest.split_whitespace().nth(2).and_then(|g| g.parse::<u32>().ok()) == Some(pgid)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_exits_and_timeouts() {
        let go = AtomicBool::new(false);
        let r = run_timed(Command::new("sh").args(["-c", "sleep 0.2; exit 3"]), Duration::from_secs(10), &go).unwrap();
        assert_eq!(r.exit, TimedExit::Exited(3));
        assert!(r.wall_ms >= 190.0 && r.wall_ms < 5000.0, "{}", r.wall_ms);
        let r = run_timed(Command::new("sh").args(["-c", "sleep 30"]), Duration::from_millis(300), &go).unwrap();
        assert_eq!(r.exit, TimedExit::TimedOut);
        assert!(r.wall_ms < 2000.0);
        assert!(run_timed(&mut Command::new("/no/such/program"), Duration::from_secs(1), &go).is_err());
    }

    #[test]
    fn a_cancel_ends_the_process_group() {
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(200));
            flag.store(true, Ordering::Relaxed);
        });
        let r = run_timed(Command::new("sh").args(["-c", "sleep 30"]), Duration::from_secs(60), &stop).unwrap();
        assert_eq!(r.exit, TimedExit::Interrupted);
        assert!(r.wall_ms < 2000.0, "{}", r.wall_ms);
    }

    #[test]
    fn a_process_whose_output_stands_still_is_ended_as_stalled() {
        let d = tempfile::tempdir().unwrap();
        let out = d.path().join("out");
        let go = AtomicBool::new(false);
        let watch = StallWatch { output: out.clone(), after: Duration::from_secs(1) };
        // Writes for a second, then stops writing without exiting.
        let script = format!("for i in 1 2 3 4 5; do echo $i >> {}; sleep 0.2; done; sleep 30", out.display());
        let mut cmd = Command::new("sh");
        cmd.args(["-c", &script]);
        let r = run_watched(&mut cmd, Duration::from_secs(20), Some(&watch), &go).unwrap();
        assert_eq!(r.exit, TimedExit::Stalled(1));
        assert!(r.wall_ms > 1500.0 && r.wall_ms < 4000.0, "{}", r.wall_ms);
        let mut cmd = Command::new("sh");
        cmd.args(["-c", &format!("for i in 1 2 3 4 5 6; do echo $i >> {}; sleep 0.2; done", out.display())]);
        let r = run_watched(&mut cmd, Duration::from_secs(20), Some(&watch), &go).unwrap();
        assert_eq!(r.exit, TimedExit::Exited(0), "a process that keeps writing is left to finish");
    }
}
