//! The idle gate's last wait (docs/methodology.md §9.1): right before the request, until the
//! processes other than the server and abprof used at most the study's `other-workload` limit of
//! CPU over the last second, measured as that rule measures the request (§7.7: `/proc/stat` minus
//! the server's process group and abprof's own threads). A busy host then delays a sample
//! instead of spoiling it, and `other-workload` rejects only a load that began during the request.
use crate::measure::GateError;
use crate::telemetry::foreign::{list, Own, ProcTable, ProcessShare};
use crate::telemetry::record::ForeignWaitRecord;
use crate::telemetry::task_cpu::{ForeignLoad, TaskCpu};
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// The window the limit is judged over: a second, as doctor's finding (§21).
pub(crate) const WINDOW: Duration = Duration::from_secs(1);
/// Between two readings of `/proc/stat` and the two groups' schedstat.
const POLL: Duration = Duration::from_millis(100);
/// Between two progress lines naming the busiest processes.
const NOTE_EVERY: Duration = Duration::from_secs(10);
/// The busiest processes a line names.
pub(crate) const TOP: usize = 3;
/// Samples in a row whose wait timed out before the study ends (docs/methodology.md §9.1):
/// one busy spell (a build, a backup) may outlast one wait, and a sample taken anyway is retaken
/// (§7.19); three in a row is a host that is not quieting down.
pub(crate) const NEVER_QUIET: u32 = 3;

/// What the wait needs to know.
pub(crate) struct QuietHost<'a> {
    pub(crate) max_pct: f64,
    pub(crate) timeout: Duration,
    /// Set once abprof is told to stop.
    pub(crate) cancelled: &'a dyn Fn() -> bool,
    /// Shows one progress line.
    pub(crate) note: &'a dyn Fn(&str),
    /// Names the sample in the progress line (`sample 3 (b)`).
    pub(crate) what: &'a str,
    /// The busiest processes to name ([`TOP`]).
    pub(crate) top: usize,
}

/// The readings of the last second: the oldest one at least a window before the newest.
struct Window {
    server: TaskCpu,
    me: TaskCpu,
    looks: VecDeque<ForeignLoad>,
}

impl Window {
    /// One more reading; none at all where `/proc/stat` cannot be read (then nothing is judged).
    fn look(&mut self) {
        match ForeignLoad::snapshot(&self.server, &self.me) {
            Some(l) => self.looks.push_back(l),
            None => self.looks.clear(),
        }
        let span = WINDOW.as_nanos() as u64;
        while self.looks.len() > 2 && self.looks[self.looks.len() - 1].at_ns() - self.looks[1].at_ns() >= span {
            self.looks.pop_front();
        }
    }

    /// The most other processes can have used over the last second, % of one core, once a
    /// second has been seen: their CPU time since the oldest reading, over one second. Over a
    /// span of one second that is the rule's own figure; over the longer span from the server's
    /// start it bounds the last second's from above, so a quiet start passes at once.
    fn foreign_pct(&self) -> Option<f64> {
        let (first, last) = (self.looks.front()?, self.looks.back()?);
        let span = (last.at_ns() - first.at_ns()) as f64 / WINDOW.as_nanos() as f64;
        (span >= 0.95).then(|| first.since(last).foreign_pct * span.max(1.0))
    }
}

impl QuietHost<'_> {
    /// Waits, from `since` (the server's start: its health and warm-up count towards the first
    /// second), until the last second's foreign CPU is at most the limit, or the timeout passed
    /// (then the record says so and the request goes ahead). A host with no `/proc/stat` is not
    /// waited for.
    pub(crate) fn wait(&self, server_pid: u32, since: Option<ForeignLoad>) -> Result<ForeignWaitRecord, GateError> {
        let (server, me) = (TaskCpu::group(server_pid), TaskCpu::new(std::process::id()));
        let own = Own { server_pgid: Some(server_pid), abprof: std::process::id() };
        let mut window = Window { server, me, looks: since.into_iter().collect() };
        let start = Instant::now();
        let mut record = ForeignWaitRecord { max_pct: self.max_pct, ..ForeignWaitRecord::default() };
        let (mut table, mut noted): (Option<ProcTable>, Option<Instant>) = (None, None);
        let mut peak = 0.0;
        loop {
            if (self.cancelled)() {
                return Err(GateError::Interrupted);
            }
            window.look();
            if window.looks.is_empty() {
                return Ok(record);
            }
            if let Some(pct) = window.foreign_pct() {
                record.foreign_pct = pct;
                record.waited_ms = start.elapsed().as_secs_f64() * 1e3;
                if pct <= self.max_pct {
                    return Ok(record);
                }
                if start.elapsed() >= self.timeout {
                    if let (true, Some(t)) = (record.top.is_empty(), &table) {
                        record.top = t.top_since(&ProcTable::read(), own, self.top);
                    }
                    record.timed_out = true;
                    return Ok(record);
                }
                // Who: two looks at every process, a second or more apart; a line only while
                // the wait goes on.
                match table.take() {
                    None => table = Some(ProcTable::read()),
                    Some(t) if t.age() < WINDOW => table = Some(t),
                    Some(t) => {
                        let now = ProcTable::read();
                        let top = t.top_since(&now, own, self.top);
                        table = Some(now);
                        if noted.is_none_or(|n| n.elapsed() >= NOTE_EVERY) {
                            (self.note)(&self.line(&record, &top, start.elapsed()));
                            noted = Some(Instant::now());
                        }
                        // The record keeps those of the wait's busiest second: the processes
                        // that delayed the sample, not the stragglers as the host quiets down.
                        if pct >= peak {
                            (record.top, peak) = (top, pct);
                        }
                    }
                }
            }
            std::thread::sleep(POLL);
        }
    }

    /// The progress line: who keeps the host busy, against which limit, for how long so far.
    fn line(&self, r: &ForeignWaitRecord, top: &[ProcessShare], waited: Duration) -> String {
        format!(
            "{} waits for other processes to quiet down: {:.0}% of a core over the last second, above the limit of {:.0}% (--foreign-cpu-max); the busiest: {}; waited {:.0} s of {} (docs/methodology.md §9.1)",
            self.what,
            r.foreign_pct,
            r.max_pct,
            list(top),
            waited.as_secs_f64(),
            self.timeout.as_secs()
        )
    }
}

/// The line that ends a study in `root` whose host never quieted (docs/methodology.md §9.1): the
/// cause, the busiest processes, and the fix.
pub(crate) fn never_quiet_line(r: &ForeignWaitRecord, timeout: Duration, root: &std::path::Path) -> String {
    format!(
        "the host never quieted down: before each of the last {NEVER_QUIET} samples other processes used more than {:.0}% of a core (--foreign-cpu-max) for {} s (last {:.0}%; the busiest: {}), so no sample could be judged; stop them (`abprof doctor` names what runs), then `--resume {}` continues the study: every sample taken is kept",
        r.max_pct,
        timeout.as_secs(),
        r.foreign_pct,
        list(&r.top),
        root.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wait(max_pct: f64, timeout: Duration, notes: &std::cell::RefCell<Vec<String>>) -> ForeignWaitRecord {
        let note = |l: &str| notes.borrow_mut().push(l.to_string());
        let host = QuietHost { max_pct, timeout, cancelled: &|| false, note: &note, what: "sample 1 (a)", top: 16 };
        // A pid that does not exist: no server; this process is abprof.
        host.wait(u32::MAX, None).unwrap()
    }

    /// A limit no host can exceed passes after the one second it measures, whatever else runs.
    #[test]
    fn a_limit_above_every_load_passes_after_one_window() {
        let notes = std::cell::RefCell::new(Vec::new());
        let r = wait(1e9, Duration::from_secs(30), &notes);
        assert!(!r.timed_out && r.top.is_empty() && notes.borrow().is_empty(), "{r:?}");
        assert!((900.0..5000.0).contains(&r.waited_ms), "{r:?}");
    }

    /// Beside a busy loop this test starts (a shell's child), a limit of 0 can never be met: the wait times out, and its line names the
    /// busiest processes. Relative facts only: the suite may run beside other busy loops.
    #[test]
    fn a_host_busier_than_the_limit_times_out_naming_the_busiest() {
        let mut busy = std::process::Command::new("sh")
            .args(["-c", "sh -c 'while :; do :; done' & echo $!; wait"])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut pid = String::new();
        std::io::BufRead::read_line(&mut std::io::BufReader::new(busy.stdout.as_mut().unwrap()), &mut pid).unwrap();
        let pid: u32 = pid.trim().parse().unwrap();
        let notes = std::cell::RefCell::new(Vec::new());
        let r = wait(0.0, Duration::from_secs(3), &notes);
        let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), nix::sys::signal::Signal::SIGKILL);
        let _ = busy.kill();
        let _ = busy.wait();
        assert!(r.timed_out && r.foreign_pct > 0.0, "{r:?}");
        // The loop is another process than the server and abprof: foreign, and busy.
        assert!(r.top.iter().any(|p| p.pid == pid), "{r:?}");
        let notes = notes.borrow();
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(
            notes[0].starts_with("sample 1 (a) waits for other processes")
                && notes[0].contains(&format!("pid {pid} (sh)"))
        );
        let end = never_quiet_line(&r, Duration::from_secs(120), std::path::Path::new("/tmp/ab"));
        assert!(end.contains("abprof doctor") && end.contains(&format!("pid {pid} (sh)")), "{end}");
        assert!(end.contains("`--resume /tmp/ab` continues"), "{end}");
    }
}
