//! Isolation hooks: commands the study declares (stop other GPU services, set a power profile,
//! restore them, verify the restore). They run without a shell, each in its own process group with
//! a timeout, their output kept in the evidence folder. `Restore` runs `after` + `verify` exactly
//! once on every exit path — success, error, panic, or a signal — because it also runs on drop.
use super::evidence::write_json;
use super::file::{HookCommand, Isolation};
use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use serde::{Deserialize, Serialize};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub(crate) struct HookRun {
    pub(crate) phase: String,
    pub(crate) argv: Vec<String>,
    pub(crate) ok: bool,
    pub(crate) status: String,
    pub(crate) ms: f64,
    /// Output file, relative to the evidence folder.
    pub(crate) output: String,
    pub(crate) at: String,
}

/// Everything the hooks did during a study (`isolation.json`).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub(crate) struct IsolationRecord {
    pub(crate) runs: Vec<HookRun>,
    /// `after` and `verify` ran and all succeeded (true when none were declared).
    pub(crate) restored: Option<bool>,
}

impl IsolationRecord {
    pub(crate) fn before_failed(&self) -> Option<&HookRun> {
        self.runs.iter().find(|r| r.phase == "before" && !r.ok)
    }
}

/// Runs hooks and keeps the record on disk after every run.
pub(crate) struct Hooks {
    /// The evidence folder: `isolation.json` and `isolation/` go here.
    root: PathBuf,
    iso: Isolation,
    record: Arc<Mutex<IsolationRecord>>,
}

impl Hooks {
    pub(crate) fn new(root: &Path, iso: &Isolation) -> Hooks {
        let previous = super::evidence::read_json(&root.join("isolation.json")).unwrap_or_default();
        Hooks { root: root.into(), iso: iso.clone(), record: Arc::new(Mutex::new(previous)) }
    }

    fn save(&self) {
        let rec = self.record.lock().unwrap().clone();
        // Best effort: a hook record that cannot be written must not stop a restore.
        let _ = write_json(&self.root.join("isolation.json"), &rec);
    }

    fn run_one(&self, phase: &str, hook: &HookCommand) -> HookRun {
        // `Isolation::check` refuses such hooks up front; a record beats a panic mid-restore.
        let Some(argv) = hook.argv() else {
            return HookRun {
                phase: phase.into(),
                argv: Vec::new(),
                ok: false,
                status: format!("cannot split {hook:?} into a program and arguments"),
                ms: 0.0,
                output: String::new(),
                at: chrono::Local::now().to_rfc3339(),
            };
        };
        let n = self.record.lock().unwrap().runs.len() + 1;
        let rel = format!("isolation/{n:04}-{phase}.log");
        let out_path = self.root.join(&rel);
        let _ = std::fs::create_dir_all(out_path.parent().unwrap());
        let at = chrono::Local::now().to_rfc3339();
        let t0 = Instant::now();
        let status = match std::fs::File::create(&out_path).and_then(|f| Ok((f.try_clone()?, f))) {
            Err(e) => format!("cannot create {rel}: {e}"),
            Ok((out, err)) => match Command::new(&argv[0])
                .args(&argv[1..])
                .stdin(Stdio::null())
                .stdout(out)
                .stderr(err)
                .process_group(0)
                .spawn()
            {
                Err(e) => format!("could not start: {e}"),
                Ok(mut child) => {
                    let deadline = t0 + Duration::from_secs(self.iso.timeout_s);
                    loop {
                        if let Ok(Some(s)) = child.try_wait() {
                            break match (s.code(), s.signal()) {
                                (Some(0), _) => "ok".to_string(),
                                (Some(c), _) => format!("exit {c}"),
                                (_, Some(sig)) => format!("signal {sig}"),
                                _ => "ended".into(),
                            };
                        }
                        if Instant::now() >= deadline {
                            // Our own child's group only.
                            let _ = killpg(Pid::from_raw(child.id() as i32), Signal::SIGKILL);
                            let _ = child.wait();
                            break format!("timed out after {} s", self.iso.timeout_s);
                        }
                        std::thread::sleep(Duration::from_millis(2));
                    }
                }
            },
        };
        HookRun {
            phase: phase.into(),
            argv,
            ok: status == "ok",
            status,
            ms: t0.elapsed().as_secs_f64() * 1e3,
            output: rel,
            at,
        }
    }

    fn run_phase(&self, phase: &str, hooks: &[HookCommand], stop_at_failure: bool) -> bool {
        let mut all_ok = true;
        for h in hooks {
            let run = self.run_one(phase, h);
            all_ok &= run.ok;
            self.record.lock().unwrap().runs.push(run);
            self.save();
            if !all_ok && stop_at_failure {
                break;
            }
        }
        all_ok
    }

    /// The `before` hooks, stopping at the first failure (which is then the returned error).
    pub(crate) fn before(&self) -> Result<(), String> {
        if self.run_phase("before", &self.iso.before, true) {
            Ok(())
        } else {
            let rec = self.record.lock().unwrap();
            let r = rec.before_failed().expect("a failed before hook was recorded");
            Err(format!("isolation hook {:?} failed ({}): see {}", r.argv.join(" "), r.status, r.output))
        }
    }

    /// A guard that restores when dropped (or when `finish` is called).
    pub(crate) fn restore_guard(self: &Arc<Self>) -> Restore {
        Restore { hooks: Some(self.clone()) }
    }
}

/// Runs `after` (all of them, whatever fails) then `verify`, once.
pub(crate) struct Restore {
    hooks: Option<Arc<Hooks>>,
}

impl Restore {
    /// Restores now and says whether the restore was verified.
    pub(crate) fn finish(mut self) -> bool {
        self.restore()
    }

    fn restore(&mut self) -> bool {
        let Some(h) = self.hooks.take() else { return true };
        let after_ok = h.run_phase("after", &h.iso.after, false);
        let verify_ok = h.run_phase("verify", &h.iso.verify, false);
        h.record.lock().unwrap().restored = Some(after_ok && verify_ok);
        h.save();
        after_ok && verify_ok
    }
}

impl Drop for Restore {
    fn drop(&mut self) {
        self.restore();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hooks(before: Vec<&str>, after: Vec<&str>, verify: Vec<&str>) -> (tempfile::TempDir, Arc<Hooks>) {
        let d = tempfile::tempdir().unwrap();
        let ev = super::super::evidence::Evidence::create(&d.path().join("s")).unwrap();
        let line = |v: Vec<&str>| v.into_iter().map(|s| HookCommand::Line(s.into())).collect();
        let iso = Isolation { before: line(before), after: line(after), verify: line(verify), timeout_s: 2 };
        let h = Arc::new(Hooks::new(&ev.root, &iso));
        (d, h)
    }

    #[test]
    fn restore_runs_on_drop_and_records_everything() {
        let (d, h) = hooks(vec!["true"], vec!["sh -c 'echo restored'", "false"], vec!["true"]);
        h.before().unwrap();
        {
            let _guard = h.restore_guard();
        }
        let rec = h.record.lock().unwrap().clone();
        assert_eq!(
            rec.runs.iter().map(|r| r.phase.as_str()).collect::<Vec<_>>(),
            ["before", "after", "after", "verify"]
        );
        assert_eq!(rec.restored, Some(false), "one after hook failed");
        let out = std::fs::read_to_string(d.path().join("s").join(&rec.runs[1].output)).unwrap();
        assert_eq!(out.trim(), "restored");
        let on_disk: IsolationRecord = super::super::evidence::read_json(&d.path().join("s/isolation.json")).unwrap();
        assert_eq!(on_disk, rec);
    }

    #[test]
    fn a_failing_before_hook_is_an_error_and_a_hung_one_is_killed() {
        let (_d, h) = hooks(vec!["sh -c 'exit 3'", "true"], vec![], vec![]);
        let err = h.before().unwrap_err();
        assert!(err.contains("exit 3"), "{err}");
        assert_eq!(h.record.lock().unwrap().runs.len(), 1, "stops at the first failure");
        let (_d, h) = hooks(vec!["sleep 30"], vec![], vec![]);
        let t = Instant::now();
        assert!(h.before().unwrap_err().contains("timed out"));
        assert!(t.elapsed() < Duration::from_secs(10));
        let (_d, h) = hooks(vec!["/no/such/tool"], vec![], vec![]);
        assert!(h.before().unwrap_err().contains("could not start"));
        assert!(h.restore_guard().finish(), "nothing declared: restored");
    }
}
