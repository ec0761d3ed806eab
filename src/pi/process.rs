//! A child process timed from spawn to exit, in its own process group so that a timeout — or
//! anything it left running — can be ended as a whole without touching any other process.
use crate::clock::Stamp;
use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use serde::{Deserialize, Serialize};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::Command;
use std::sync::mpsc;
use std::time::Duration;

/// How a timed process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TimedExit {
    Exited(i32),
    Signaled(i32),
    TimedOut,
}

impl TimedExit {
    pub fn describe(&self) -> String {
        match self {
            TimedExit::Exited(c) => format!("exited with status {c}"),
            TimedExit::Signaled(s) => format!("was killed by signal {s}"),
            TimedExit::TimedOut => "ran past its timeout".into(),
        }
    }

    pub fn success(&self) -> bool {
        *self == TimedExit::Exited(0)
    }
}

#[derive(Debug, Clone, Copy)]
pub struct TimedRun {
    pub exit: TimedExit,
    /// Spawn to exit (to the kill, on a timeout), ms.
    pub wall_ms: f64,
    pub started: Stamp,
    pub ended: Stamp,
}

/// Runs `cmd` to completion or `timeout`. The waiting thread stamps the exit the moment `wait`
/// returns, so the wall time carries no polling delay. On a timeout the group gets SIGTERM,
/// then SIGKILL two seconds later.
pub fn run_timed(cmd: &mut Command, timeout: Duration) -> std::io::Result<TimedRun> {
    cmd.process_group(0);
    let started = Stamp::now();
    let mut child = cmd.spawn()?;
    let group = Pid::from_raw(child.id() as i32);
    let (tx, rx) = mpsc::channel();
    let waiter = std::thread::spawn(move || {
        let status = child.wait();
        let _ = tx.send((status, Stamp::now()));
    });
    let (exit, ended) = match rx.recv_timeout(timeout) {
        Ok((status, ended)) => {
            let status = status?;
            let exit = match (status.code(), status.signal()) {
                (Some(c), _) => TimedExit::Exited(c),
                (_, Some(s)) => TimedExit::Signaled(s),
                _ => TimedExit::Exited(-1),
            };
            (exit, ended)
        }
        Err(_) => {
            let ended = Stamp::now();
            let _ = killpg(group, Signal::SIGTERM);
            if rx.recv_timeout(Duration::from_secs(2)).is_err() {
                let _ = killpg(group, Signal::SIGKILL);
            }
            (TimedExit::TimedOut, ended)
        }
    };
    let _ = waiter.join();
    // Whatever the process started and left behind in its group goes with it.
    if killpg(group, None).is_ok() {
        let _ = killpg(group, Signal::SIGKILL);
    }
    Ok(TimedRun { exit, wall_ms: started.ms_until(&ended), started, ended })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_exits_and_timeouts() {
        let r = run_timed(Command::new("sh").args(["-c", "sleep 0.2; exit 3"]), Duration::from_secs(10)).unwrap();
        assert_eq!(r.exit, TimedExit::Exited(3));
        assert!(r.wall_ms >= 190.0 && r.wall_ms < 5000.0, "{}", r.wall_ms);
        let r = run_timed(Command::new("sh").args(["-c", "sleep 30"]), Duration::from_millis(300)).unwrap();
        assert_eq!(r.exit, TimedExit::TimedOut);
        assert!(r.wall_ms < 2000.0);
        assert!(run_timed(&mut Command::new("/no/such/program"), Duration::from_secs(1)).is_err());
    }
}
