//! A load with a tracer attached to its server for the timed work only: `rocprofv3 --attach PID`
//! once the server is loaded and healthy, detached (a newline on the tracer's stdin, as AMD's
//! docs say) right after the timed work, before the server stops (docs/methodology.md §10
//! "attached traces"). The server then stops like an untraced one: no tracer finalizes at its
//! exit, so the shutdown hang a tracer-wrapped server can show is not in the way.
use super::files::SampleFiles;
use super::load::{Load, LoadRun};
use super::record::Sample;
use crate::client::Client;
use crate::server::log::TimingBlock;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// What the server needs in its environment for a tracer to attach (ROCprofiler-SDK's
/// `rocprofiler-register` reads it at start).
pub(crate) const ATTACH_ENV: (&str, &str) = ("ROCP_TOOL_ATTACH", "1");

/// How long the tracer is given to attach before the timed work starts: it injects its library
/// through ptrace and reports nothing abprof could wait on, so a traced sample waits this long
/// and checks that the tracer still runs.
const SETTLE: Duration = Duration::from_secs(2);

/// The attaching tracer of one traced sample.
pub(crate) struct AttachSpec {
    pub(crate) program: PathBuf,
    /// The tracer's output folder (`-d`).
    pub(crate) out: PathBuf,
    /// Where its stdout and stderr go (the "Opened result file" line is read there).
    pub(crate) console: PathBuf,
    /// How long to wait for it to write its output and exit once detached; never killed.
    pub(crate) detach_timeout: Duration,
}

impl AttachSpec {
    /// The tracer's argv for the server `pid`: kernel trace, rocpd output, and detach only once the
    /// output is written (`--attach-sync-output`).
    pub(crate) fn argv(&self, pid: u32) -> Vec<String> {
        let out = self.out.display().to_string();
        [
            "--attach",
            &pid.to_string(),
            "--kernel-trace",
            "--output-format",
            "rocpd",
            "-d",
            &out,
            "-o",
            "trace",
            "--attach-sync-output",
        ]
        .map(String::from)
        .to_vec()
    }
}

/// `L` with a tracer attached around its timed work when `tracer` is set; `L` itself otherwise.
pub(crate) struct AttachedLoad<L> {
    inner: L,
    tracer: Option<AttachSpec>,
    pid: Option<u32>,
    child: Option<Child>,
    error: Option<String>,
}

impl<L: Load> AttachedLoad<L> {
    pub(crate) fn new(inner: L, tracer: Option<AttachSpec>) -> AttachedLoad<L> {
        AttachedLoad { inner, tracer, pid: None, child: None, error: None }
    }

    fn attach(&mut self) -> Result<(), String> {
        let (Some(t), Some(pid)) = (&self.tracer, self.pid) else { return Ok(()) };
        let console = std::fs::File::create(&t.console)
            .map_err(|e| format!("cannot create the tracer's log {}: {e}", t.console.display()))?;
        let err = console.try_clone().map_err(|e| e.to_string())?;
        let mut child = Command::new(&t.program)
            .args(t.argv(pid))
            .stdin(Stdio::piped())
            .stdout(console)
            .stderr(err)
            .spawn()
            .map_err(|e| format!("cannot start {} --attach {pid}: {e}", t.program.display()))?;
        std::thread::sleep(SETTLE);
        if let Ok(Some(status)) = child.try_wait() {
            return Err(format!(
                "{} --attach {pid} ended before the request ({status}): see {} (the server needs {}={} in its environment, and ptrace rights: kernel.yama.ptrace_scope)",
                t.program.display(),
                t.console.display(),
                ATTACH_ENV.0,
                ATTACH_ENV.1
            ));
        }
        self.child = Some(child);
        Ok(())
    }

    /// A newline on the tracer's stdin detaches it; it exits once its output is written.
    fn detach(&mut self) -> Result<(), String> {
        let (Some(t), Some(mut child)) = (&self.tracer, self.child.take()) else { return Ok(()) };
        if let Some(mut stdin) = child.stdin.take() {
            let _ = stdin.write_all(b"\n");
        }
        let t0 = Instant::now();
        loop {
            match child.try_wait() {
                Ok(Some(status)) if status.success() => return Ok(()),
                Ok(Some(status)) => {
                    return Err(format!("the attached tracer ended {status} on detach: see {}", t.console.display()))
                }
                Ok(None) if t0.elapsed() < t.detach_timeout => std::thread::sleep(Duration::from_millis(20)),
                Ok(None) => {
                    return Err(format!(
                        "the attached tracer (pid {}) did not finish writing within {} s of its detach; it is left running, never killed (that would lose the trace): see {}",
                        child.id(),
                        t.detach_timeout.as_secs(),
                        t.console.display()
                    ))
                }
                Err(e) => return Err(format!("waiting for the attached tracer: {e}")),
            }
        }
    }
}

/// A sample cut short after the attach (an idle gate that failed, a stop signal) still detaches
/// its tracer: the newline is sent and the tracer left to finish on its own, never killed.
impl<L> Drop for AttachedLoad<L> {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            if let Some(mut stdin) = child.stdin.take() {
                let _ = stdin.write_all(b"\n");
            }
        }
    }
}

impl<L: Load> Load for AttachedLoad<L> {
    fn prepare(&mut self, files: &SampleFiles, base_url: &str) -> std::io::Result<()> {
        self.inner.prepare(files, base_url)
    }

    fn server_started(&mut self, pid: u32) {
        self.pid = Some(pid);
        self.inner.server_started(pid);
    }

    /// The inner warm-up, then the attach: the tracer sees the loaded server, not its start.
    async fn warm_up(&mut self, client: &Client) -> Result<(), String> {
        self.inner.warm_up(client).await?;
        tokio::task::block_in_place(|| self.attach())
    }

    async fn run(&mut self, client: &Client, files: &SampleFiles) -> LoadRun {
        self.inner.run(client, files).await
    }

    /// Detached right after the timed work, while the server still runs.
    async fn before_stop(&mut self) {
        self.inner.before_stop().await;
        if let Err(e) = tokio::task::block_in_place(|| self.detach()) {
            self.error.get_or_insert(e);
        }
    }

    fn timing_blocks(&self) -> usize {
        self.inner.timing_blocks()
    }

    fn timed_blocks<'b>(&self, blocks: &'b [TimingBlock]) -> &'b [TimingBlock] {
        self.inner.timed_blocks(blocks)
    }

    fn finish(&mut self, sample: &mut Sample, files: &SampleFiles) {
        self.inner.finish(sample, files);
        if let Some(e) = self.error.take() {
            sample.error.get_or_insert(e);
        }
    }
}
