//! Isolation hooks: commands the study declares (stop other GPU services, set a power profile,
//! restore them, verify the restore). They run without a shell, each in its own process group with
//! a timeout, their output kept in the evidence folder. `Restore` runs `after` + `verify` exactly
//! once on every exit path — success, error, panic, or a signal — because it also runs on drop.
use super::evidence::{read_json, write_json, Evidence, EvidenceError};
use super::file::{HookCommand, Isolation};
use super::layout::ISOLATION_DIR;
use crate::child::TimedExit;
use serde::{Deserialize, Serialize};
use std::process::{Command, Stdio};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub(crate) struct HookRun {
    pub(crate) phase: String,
    pub(crate) argv: Vec<String>,
    pub(crate) ok: bool,
    pub(crate) status: String,
    pub(crate) ms: f64,
    /// Output file, relative to the evidence folder.
    pub(crate) output: String,
    /// Why that file holds nothing (it could not be created: a full disk, say). The hook ran
    /// anyway: a restore must never be skipped for want of its log.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) output_lost: Option<String>,
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

// Here rather than in evidence.rs, which sits below the record's type.
impl Evidence {
    /// The isolation record; an error where it is absent or unreadable.
    pub(crate) fn read_isolation(&self) -> Result<IsolationRecord, EvidenceError> {
        read_json(&self.isolation_file())
    }
    fn write_isolation(&self, record: &IsolationRecord) -> Result<(), EvidenceError> {
        write_json(&self.isolation_file(), record)
    }
}

/// Runs hooks and keeps the record on disk after every run.
pub(crate) struct Hooks {
    /// The evidence folder: `isolation.json` and `isolation/` go here.
    ev: Evidence,
    iso: Isolation,
    record: Arc<Mutex<IsolationRecord>>,
}

impl Hooks {
    pub(crate) fn new(ev: &Evidence, iso: &Isolation) -> Hooks {
        let previous = ev.read_isolation().unwrap_or_default();
        Hooks { ev: ev.clone(), iso: iso.clone(), record: Arc::new(Mutex::new(previous)) }
    }

    fn save(&self) {
        let rec = self.record.lock().unwrap().clone();
        // Best effort: a hook record that cannot be written must not stop a restore.
        let _ = self.ev.write_isolation(&rec);
    }

    /// Runs one hook to its end or its timeout. With `cancel`, a signal to abprof ends it early
    /// (its group gets SIGTERM, then SIGKILL): a `before` hook must not hold up a stop, while the
    /// restore hooks always run to their end.
    fn run_one(&self, phase: &str, hook: &HookCommand, cancel: Option<&AtomicBool>) -> HookRun {
        let at = chrono::Local::now().to_rfc3339();
        // `Isolation::check` refuses such hooks up front; a record beats a panic mid-restore.
        let Some(argv) = hook.argv() else {
            return HookRun {
                phase: phase.into(),
                argv: Vec::new(),
                ok: false,
                status: format!("cannot split {hook:?} into a program and arguments"),
                ms: 0.0,
                output: String::new(),
                output_lost: None,
                at,
            };
        };
        let n = self.record.lock().unwrap().runs.len() + 1;
        let rel = format!("{ISOLATION_DIR}/{n:04}-{phase}.log");
        let out_path = self.ev.root.join(&rel);
        let _ = std::fs::create_dir_all(out_path.parent().unwrap());
        let (stdout, stderr, output_lost) = match std::fs::File::create(&out_path).and_then(|f| Ok((f.try_clone()?, f)))
        {
            Ok((out, err)) => (Stdio::from(out), Stdio::from(err), None),
            Err(e) => (Stdio::null(), Stdio::null(), Some(format!("cannot create {rel}: {e}"))),
        };
        let never = AtomicBool::new(false);
        let mut cmd = Command::new(&argv[0]);
        cmd.args(&argv[1..]).stdin(Stdio::null()).stdout(stdout).stderr(stderr);
        // Our own child's group only: a timeout or a signal to abprof ends the hook's group
        // (SIGTERM, then SIGKILL), as every timed process of abprof is ended.
        let run = crate::child::run_timed(&mut cmd, Duration::from_secs(self.iso.timeout_s), cancel.unwrap_or(&never));
        let (status, ms) = match run {
            Err(e) => (format!("could not start: {e}"), 0.0),
            Ok(r) => {
                let status = match r.exit {
                    TimedExit::Exited(0) => "ok".to_string(),
                    TimedExit::Exited(c) => format!("exit {c}"),
                    TimedExit::Signaled(sig) => format!("signal {sig}"),
                    TimedExit::TimedOut | TimedExit::Stalled(_) => format!("timed out after {} s", self.iso.timeout_s),
                    TimedExit::Interrupted => "stopped: abprof was interrupted".into(),
                };
                (status, r.wall_ms)
            }
        };
        HookRun { phase: phase.into(), argv, ok: status == "ok", status, ms, output: rel, output_lost, at }
    }

    fn run_phase(
        &self,
        phase: &str,
        hooks: &[HookCommand],
        stop_at_failure: bool,
        cancel: Option<&AtomicBool>,
    ) -> bool {
        let mut all_ok = true;
        for h in hooks {
            let run = self.run_one(phase, h, cancel);
            all_ok &= run.ok;
            self.record.lock().unwrap().runs.push(run);
            self.save();
            if !all_ok && stop_at_failure {
                break;
            }
        }
        all_ok
    }

    /// The `before` hooks, stopping at the first failure (which is then the returned error), or
    /// as soon as `cancel` is set (the hook in flight is ended).
    pub(crate) fn before(&self, cancel: &AtomicBool) -> Result<(), String> {
        if self.run_phase("before", &self.iso.before, true, Some(cancel)) {
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
        let after_ok = h.run_phase("after", &h.iso.after, false, None);
        let verify_ok = h.run_phase("verify", &h.iso.verify, false, None);
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
    use std::sync::atomic::Ordering;
    use std::time::Instant;

    fn hooks(before: Vec<&str>, after: Vec<&str>, verify: Vec<&str>) -> (tempfile::TempDir, Arc<Hooks>) {
        let d = tempfile::tempdir().unwrap();
        let ev = super::super::evidence::Evidence::create(&d.path().join("s")).unwrap();
        let line = |v: Vec<&str>| v.into_iter().map(|s| HookCommand::Line(s.into())).collect();
        let iso = Isolation { before: line(before), after: line(after), verify: line(verify), timeout_s: 2 };
        let h = Arc::new(Hooks::new(&ev, &iso));
        (d, h)
    }

    #[test]
    fn restore_runs_on_drop_and_records_everything() {
        let (d, h) = hooks(vec!["true"], vec!["sh -c 'echo restored'", "false"], vec!["true"]);
        h.before(&AtomicBool::new(false)).unwrap();
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
        let err = h.before(&AtomicBool::new(false)).unwrap_err();
        assert!(err.contains("exit 3"), "{err}");
        assert_eq!(h.record.lock().unwrap().runs.len(), 1, "stops at the first failure");
        let (_d, h) = hooks(vec!["sleep 30"], vec![], vec![]);
        let t = Instant::now();
        assert!(h.before(&AtomicBool::new(false)).unwrap_err().contains("timed out"));
        assert!(t.elapsed() < Duration::from_secs(10));
        let (_d, h) = hooks(vec!["/no/such/tool"], vec![], vec![]);
        assert!(h.before(&AtomicBool::new(false)).unwrap_err().contains("could not start"));
        assert!(h.restore_guard().finish(), "nothing declared: restored");
    }

    #[test]
    fn an_interrupted_before_hook_is_ended_and_the_restore_still_runs() {
        let (_d, h) = hooks(vec!["sleep 30"], vec!["true"], vec![]);
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(200));
            flag.store(true, Ordering::SeqCst);
        });
        let t = Instant::now();
        let err = h.before(&stop).unwrap_err();
        assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
        assert!(err.contains("interrupted"), "{err}");
        assert!(h.restore_guard().finish(), "the restore ignores the stop");
    }

    #[test]
    fn a_hook_whose_log_cannot_be_created_still_runs() {
        let (d, h) = hooks(vec![], vec!["true"], vec![]);
        // A file where the log folder goes: no log can be created, as on a full disk.
        let iso = d.path().join("s/isolation");
        let _ = std::fs::remove_dir_all(&iso);
        std::fs::write(&iso, "").unwrap();
        assert!(h.restore_guard().finish(), "the restore ran and passed");
        let rec = h.record.lock().unwrap().clone();
        assert_eq!(rec.runs.len(), 1);
        assert!(rec.runs[0].ok);
        assert!(rec.runs[0].output_lost.as_deref().is_some_and(|w| w.contains("cannot create")), "{:?}", rec.runs[0]);
    }
}
