use crate::client::Client;
use crate::clock::Stamp;
use nix::errno::Errno;
use nix::sys::signal::{kill, killpg, Signal};
use nix::unistd::Pid;
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::Duration;
use thiserror::Error;

/// How often `/health` is polled while the model loads. A ready server is noticed at most this
/// late (plus one loopback round trip); the issue bound is 50 ms.
pub const HEALTH_POLL: Duration = Duration::from_millis(10);

/// Everything needed to start one server: the exact argv (a tracer wrapper may come first), the
/// environment overrides, and where its output goes.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LaunchSpec {
    pub program: PathBuf,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    pub host: String,
    pub port: u16,
    /// Passed as `--log-file`: the log the timing block is parsed from.
    pub log_file: PathBuf,
    /// The process's stdout and stderr together.
    pub console_file: PathBuf,
    /// When `program` is a launcher that keeps the server as a child (Nsight Systems), the
    /// server's process name: the one SIGTERM then goes to that descendant, so the server exits
    /// cleanly and the launcher finishes its own work before exiting.
    #[serde(default)]
    pub signal_descendant: Option<String>,
    /// The CPUs the server is placed on (`--server-cpus`, docs/methodology.md §2.1); None: where
    /// the kernel puts it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<super::placement::CpuList>,
    /// What `program` is: a server abprof talks to, or llama-bench, which measures by itself.
    #[serde(default, skip_serializing_if = "Engine::is_server")]
    pub engine: Engine,
}

/// What a sample's process is (docs/methodology.md §4.4): a llama-server, started, asked for
/// `/health` and sent the load; or a llama-bench run, held at its start until the idle gate
/// passes, then left to measure its tests and exit. `log_file` is then llama-bench's stdout (its
/// JSONL results) and `console_file` its stderr.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Engine {
    #[default]
    Server,
    LlamaBench,
}

impl Engine {
    fn is_server(&self) -> bool {
        *self == Engine::Server
    }
}

/// How a llama-bench process waits for the idle gate: the shell stops itself, and once continued
/// (SIGCONT) becomes llama-bench by `exec`, with the same pid and process group, so the gate,
/// the quiet-host wait and the death signal all see the one process.
const HELD_AT_START: &str = "kill -STOP $$ && exec \"$@\"";

impl LaunchSpec {
    /// A variant's own server on loopback `port`, its log file and console output at `logs`
    /// (where the study's layout puts them: src/study/layout.rs).
    pub(crate) fn for_variant(
        v: &crate::variant::Variant,
        default_model: &Path,
        common: &[String],
        port: u16,
        logs: (PathBuf, PathBuf),
    ) -> LaunchSpec {
        let (log_file, console_file) = logs;
        LaunchSpec {
            program: v.binary.clone(),
            args: v.server_args(default_model, common),
            env: v.env.clone(),
            host: "127.0.0.1".into(),
            port,
            log_file,
            console_file,
            signal_descendant: None,
            cpus: None,
            engine: Engine::Server,
        }
    }

    /// The full argv: abprof owns host, port and log file, so it appends them last; a server asked
    /// for `--backend-sampling` that sets no verbosity runs at `-lv 4`, where each request's
    /// sampler chain is printed, the proof that the device sampled (docs/methodology.md §7.20).
    pub(crate) fn argv(&self) -> Vec<String> {
        let mut v = vec![self.program.display().to_string()];
        v.extend(self.args.iter().cloned());
        if self.engine == Engine::LlamaBench {
            return v;
        }
        if asks_backend_sampling(&self.args) && !sets_verbosity(&self.args) {
            v.extend(["-lv".into(), "4".into()]);
        }
        v.extend([
            "--host".into(),
            self.host.clone(),
            "--port".into(),
            self.port.to_string(),
            "--log-file".into(),
            self.log_file.display().to_string(),
        ]);
        v
    }

    pub fn base_url(&self) -> String {
        format!("http://{}:{}", self.host, self.port)
    }
}

#[derive(Debug, Error)]
pub enum ServerError {
    #[error("server binary {0} does not exist: pass the path of a built llama-server (scripts/testbed prints one as LLAMA_SERVER)")]
    BinaryMissing(PathBuf),
    #[error(
        "server binary {0} is not an executable file: pass the llama-server binary itself, with its execute bit set"
    )]
    NotExecutable(PathBuf),
    #[error("port {port} on {host} is already in use by another process: stop it, or pass another --port (`port` in a study file)")]
    PortInUse { host: String, port: u16 },
    #[error("no free port on {0}: {1}")]
    NoFreePort(String, #[source] std::io::Error),
    #[error("server arguments set {0} themselves, which abprof owns: remove it from the server args")]
    OwnedArgument(String),
    #[error("could not start {program}: {source} (is it a llama-server built for this machine?)")]
    Spawn { program: PathBuf, source: std::io::Error },
    #[error("could not create {path}: {source}")]
    Output { path: PathBuf, source: std::io::Error },
    #[error("llama-server {status} while loading{}: see {log}", .first_error.as_ref().map(|l| format!(": `{l}`")).unwrap_or_default())]
    DiedDuringLoad { status: String, first_error: Option<String>, log: PathBuf },
    #[error("llama-server was not healthy after {secs} s: see {log} (raise --health-timeout for a large model)")]
    HealthTimeout { secs: u64, log: PathBuf },
    #[error("could not signal the server: {0}")]
    Signal(Errno),
    #[error("{program} (pid {pid}) is still running {secs} s after its SIGTERM, probably still writing its trace: abprof left it alone; wait for it to exit, then read its output")]
    StillFinalizing { program: PathBuf, pid: u32, secs: u64 },
}

/// How a stop went.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StopReport {
    /// SIGTERM to exit, in ms.
    pub(crate) stop_ms: f64,
    pub(crate) exit: String,
    /// True when the server outlived the timeout and its process group got SIGKILL.
    pub(crate) killed: bool,
}

/// A server abprof started. Dropping it stops the server, so no error path leaks one.
pub struct RunningServer {
    child: Option<Child>,
    pub(crate) spec: LaunchSpec,
    pub(crate) pid: u32,
    pub(crate) started: Stamp,
}

/// A process's state letter in `/proc/PID/stat` (`R`, `S`, `T` stopped, `Z` exited and not yet
/// reaped); None once it is gone.
pub(crate) fn process_state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat[stat.rfind(')')? + 1..].trim_start().chars().next()
}

/// Whether server arguments ask for backend sampling (llama.cpp's `-bs` / `--backend-sampling`).
pub(crate) fn asks_backend_sampling(args: &[String]) -> bool {
    args.iter().any(|a| a == "--backend-sampling" || a == "-bs")
}

/// Whether server arguments set the log's verbosity themselves.
fn sets_verbosity(args: &[String]) -> bool {
    const FLAGS: [&str; 6] = ["-lv", "--verbosity", "--log-verbosity", "-v", "--verbose", "--log-verbose"];
    args.iter().any(|a| FLAGS.contains(&a.as_str()) || a.starts_with("--log-verbosity=") || a.starts_with("-lv="))
}

fn describe(status: &ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (Some(c), _) => format!("exited with status {c}"),
        (_, Some(s)) => format!("was killed by signal {s}"),
        _ => "ended".to_string(),
    }
}

fn check_binary(path: &Path) -> Result<(), ServerError> {
    let meta = std::fs::metadata(path).map_err(|_| ServerError::BinaryMissing(path.to_path_buf()))?;
    if !meta.is_file() || meta.permissions().mode() & 0o111 == 0 {
        return Err(ServerError::NotExecutable(path.to_path_buf()));
    }
    Ok(())
}

/// Refuses a port something else already listens on: the server would fail to bind it, or a
/// request would reach the other process.
pub(crate) fn check_port_free(host: &str, port: u16) -> Result<(), ServerError> {
    match std::net::TcpListener::bind((host, port)) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => {
            Err(ServerError::PortInUse { host: host.to_string(), port })
        }
        // Other bind failures (a host that is not local, say) are the server's to report.
        Err(_) => Ok(()),
    }
}

/// Refuses the flags abprof sets itself on every server (its port, host and log file).
pub(crate) fn check_owned_args(args: &[String]) -> Result<(), ServerError> {
    for a in args {
        let flag = a.split('=').next().unwrap_or(a);
        if matches!(flag, "--host" | "--port" | "--log-file") {
            return Err(ServerError::OwnedArgument(flag.to_string()));
        }
    }
    Ok(())
}

impl RunningServer {
    /// Spawns the server in a new process group (so a terminal's Ctrl-C reaches abprof, not the
    /// server, and abprof can stop it in order). It gets SIGKILL if abprof dies.
    pub fn spawn(spec: &LaunchSpec) -> Result<RunningServer, ServerError> {
        Self::spawn_with_death_signal(spec, Signal::SIGKILL)
    }

    /// Like [`spawn`](Self::spawn), with the signal the kernel sends the spawned process when
    /// abprof dies, however it dies (SIGKILL included): a server must never outlive the study
    /// that measures it (docs/methodology.md §2). A plain server gets SIGKILL: nothing of it is
    /// worth keeping once abprof cannot record it. A tracer wrapper gets SIGTERM: it then stops
    /// the server and writes what it traced (§10), where a SIGKILL would leave nsys's server child
    /// orphaned (the death signal reaches only the direct child) and destroy the output.
    ///
    /// `PR_SET_PDEATHSIG` fires when the *thread* that forked exits, not the process. Servers are
    /// spawned from `run_sample`, which runs inside `Runtime::block_on` on the thread that called
    /// it (abprof's main thread in every command), and the server is stopped before that call
    /// returns; so the forking thread outlives the server. A watchdog process would cover a
    /// spawn from a short-lived thread too, but costs a process per sample and a pipe to poll;
    /// nothing spawns that way.
    pub(crate) fn spawn_with_death_signal(
        spec: &LaunchSpec,
        on_abprof_death: Signal,
    ) -> Result<RunningServer, ServerError> {
        check_binary(&spec.program)?;
        if spec.engine == Engine::Server {
            check_owned_args(&spec.args)?;
            check_port_free(&spec.host, spec.port)?;
        }
        for p in [&spec.log_file, &spec.console_file] {
            if let Some(dir) = p.parent() {
                std::fs::create_dir_all(dir).map_err(|e| ServerError::Output { path: dir.into(), source: e })?;
            }
        }
        // A log left by an earlier run would add its timing blocks to this one's.
        let _ = std::fs::remove_file(&spec.log_file);
        let console = File::create(&spec.console_file)
            .map_err(|e| ServerError::Output { path: spec.console_file.clone(), source: e })?;
        let (stdout, argv) = match spec.engine {
            Engine::Server => {
                let copy = console.try_clone();
                (copy.map_err(|e| ServerError::Output { path: spec.console_file.clone(), source: e })?, spec.argv())
            }
            Engine::LlamaBench => {
                let out = File::create(&spec.log_file)
                    .map_err(|e| ServerError::Output { path: spec.log_file.clone(), source: e })?;
                let held = ["/bin/sh", "-c", HELD_AT_START, "llama-bench"].map(String::from);
                (out, held.into_iter().chain(spec.argv()).collect())
            }
        };
        let mut cmd = Command::new(&argv[0]);
        cmd.args(&argv[1..])
            .envs(spec.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(stdout)
            .stderr(console)
            .process_group(0);
        let abprof = std::process::id() as i32;
        let affinity = spec.cpus.as_ref().and_then(super::placement::ChildAffinity::of);
        // SAFETY: between fork and exec only async-signal-safe calls: prctl, getppid and
        // sched_setaffinity (its CPU set was built before the fork).
        unsafe {
            cmd.pre_exec(move || {
                if let Some(a) = &affinity {
                    a.apply()?;
                }
                if nix::libc::prctl(nix::libc::PR_SET_PDEATHSIG, on_abprof_death as nix::libc::c_ulong) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // abprof died between fork and prctl: the signal will never come.
                if nix::libc::getppid() != abprof {
                    nix::libc::raise(on_abprof_death as nix::libc::c_int);
                }
                Ok(())
            });
        }
        let started = Stamp::now();
        let child = cmd.spawn().map_err(|e| ServerError::Spawn { program: spec.program.clone(), source: e })?;
        Ok(RunningServer { pid: child.id(), child: Some(child), spec: spec.clone(), started })
    }

    fn pgid(&self) -> Pid {
        // process_group(0) made the child the leader of a group with its own pid.
        Pid::from_raw(self.pid as i32)
    }

    /// The pid of a live descendant of the spawned process named `name` (its `comm`).
    fn descendant_named(&self, name: &str) -> Option<i32> {
        let comm: String = name.chars().take(15).collect();
        crate::runtime_libraries::process_tree(self.pid).into_iter().skip(1).find_map(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            let (open, close) = (stat.find('(')?, stat.rfind(')')?);
            (stat[open + 1..close] == comm).then_some(pid as i32)
        })
    }

    /// Has the server exited? Reaps it if so.
    pub(crate) fn exited(&mut self) -> Option<ExitStatus> {
        self.child.as_mut().and_then(|c| c.try_wait().ok().flatten())
    }

    fn load_failure(&self, status: &ExitStatus) -> ServerError {
        // The message names the file the line came from: llama-server prints a load error to
        // its console, not always to --log-file (a corrupt GGUF, say).
        let read = |p: &Path| super::log::read_lossy(p).unwrap_or_default();
        let (first_error, log) = match super::log::first_error_line(&read(&self.spec.log_file)) {
            Some(line) => (Some(line), self.spec.log_file.clone()),
            None => match super::log::first_error_line(&read(&self.spec.console_file)) {
                Some(line) => (Some(line), self.spec.console_file.clone()),
                None => (None, self.spec.log_file.clone()),
            },
        };
        ServerError::DiedDuringLoad { status: describe(status), first_error, log }
    }

    /// Polls `/health` every [`HEALTH_POLL`] until it answers 200, failing fast when the process
    /// exits. Returns the moment health was first seen.
    pub async fn wait_healthy(&mut self, client: &Client, timeout: Duration) -> Result<Stamp, ServerError> {
        if self.spec.engine == Engine::LlamaBench {
            return self.wait_held(timeout).await;
        }
        let deadline = tokio::time::Instant::now() + timeout;
        let mut tick = tokio::time::interval(HEALTH_POLL);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            if let Some(status) = self.exited() {
                return Err(self.load_failure(&status));
            }
            if client.health().await {
                return Ok(Stamp::now());
            }
            if tokio::time::Instant::now() >= deadline {
                return Err(ServerError::HealthTimeout { secs: timeout.as_secs(), log: self.spec.log_file.clone() });
            }
        }
    }

    /// A llama-bench process is ready once its shell has stopped itself, before llama-bench runs.
    async fn wait_held(&mut self, timeout: Duration) -> Result<Stamp, ServerError> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            if let Some(status) = self.exited() {
                return Err(self.load_failure(&status));
            }
            if process_state(self.pid) == Some('T') {
                return Ok(Stamp::now());
            }
            if tokio::time::Instant::now() >= deadline {
                return Err(ServerError::HealthTimeout {
                    secs: timeout.as_secs(),
                    log: self.spec.console_file.clone(),
                });
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }

    /// One SIGTERM to the server's pid, then wait; SIGKILL to its process group only after
    /// `timeout`. Afterwards the group must be empty: stragglers of our own group are killed.
    pub fn stop(&mut self, timeout: Duration) -> Result<StopReport, ServerError> {
        self.stop_with(timeout, true)
    }

    /// Like [`stop`](Self::stop); with `kill_on_timeout` false a process still running after
    /// `timeout` is left alone (a tracer writing its output must not be killed) and reported.
    pub(crate) fn stop_with(&mut self, timeout: Duration, kill_on_timeout: bool) -> Result<StopReport, ServerError> {
        let Some(mut child) = self.child.take() else {
            return Ok(StopReport { stop_ms: 0.0, exit: "already stopped".into(), killed: false });
        };
        let t0 = Stamp::now();
        let mut killed = false;
        let status = match child.try_wait() {
            Ok(Some(s)) => s,
            _ => {
                let target = self
                    .spec
                    .signal_descendant
                    .as_deref()
                    .and_then(|name| self.descendant_named(name))
                    .map_or(self.pgid(), Pid::from_raw);
                match kill(target, Signal::SIGTERM) {
                    Ok(()) | Err(Errno::ESRCH) => {}
                    Err(e) => return Err(ServerError::Signal(e)),
                }
                // A stopped server (SIGSTOP, a debugger; the usual cause of a stalled stream)
                // would hold its SIGTERM pending until the SIGKILL deadline: let it run to
                // handle it. SIGCONT to a running process changes nothing.
                let _ = kill(target, Signal::SIGCONT);
                let deadline = std::time::Instant::now() + timeout;
                loop {
                    if let Ok(Some(s)) = child.try_wait() {
                        break s;
                    }
                    if std::time::Instant::now() >= deadline {
                        if !kill_on_timeout {
                            // Dropping a Child neither signals nor waits: the process runs on.
                            return Err(ServerError::StillFinalizing {
                                program: self.spec.program.clone(),
                                pid: self.pid,
                                secs: timeout.as_secs(),
                            });
                        }
                        killed = true;
                        let _ = killpg(self.pgid(), Signal::SIGKILL);
                        break child.wait().map_err(|_| ServerError::Signal(Errno::ECHILD))?;
                    }
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
        };
        // Children the server may have left in its group (none in llama-server today).
        if killpg(self.pgid(), None).is_ok() {
            std::thread::sleep(Duration::from_millis(50));
            if killpg(self.pgid(), None).is_ok() {
                let _ = killpg(self.pgid(), Signal::SIGKILL);
            }
        }
        Ok(StopReport { stop_ms: t0.ms_until(&Stamp::now()), exit: describe(&status), killed })
    }
}

impl Drop for RunningServer {
    fn drop(&mut self) {
        if self.child.is_some() {
            let _ = self.stop(Duration::from_secs(10));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(program: &str, dir: &Path) -> LaunchSpec {
        LaunchSpec {
            program: program.into(),
            args: vec![],
            env: vec![],
            host: "127.0.0.1".into(),
            port: 1,
            log_file: dir.join("server.log"),
            console_file: dir.join("console.log"),
            signal_descendant: None,
            cpus: None,
            engine: Engine::Server,
        }
    }

    #[test]
    fn refuses_missing_and_non_executable_binaries() {
        let dir = tempfile::tempdir().unwrap();
        let err = RunningServer::spawn(&spec("/nonexistent/llama-server", dir.path())).err().unwrap();
        assert!(matches!(err, ServerError::BinaryMissing(_)), "{err}");
        let f = dir.path().join("not-exec");
        std::fs::write(&f, "x").unwrap();
        let err = RunningServer::spawn(&spec(f.to_str().unwrap(), dir.path())).err().unwrap();
        assert!(matches!(err, ServerError::NotExecutable(_)), "{err}");
    }

    #[test]
    fn refuses_arguments_abprof_owns_and_a_busy_port() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = spec("/bin/true", dir.path());
        s.args = vec!["--port=9".into()];
        assert!(matches!(RunningServer::spawn(&s).err().unwrap(), ServerError::OwnedArgument(_)));
        let held = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
        let mut s = spec("/bin/true", dir.path());
        s.port = held.local_addr().unwrap().port();
        let err = RunningServer::spawn(&s).err().unwrap();
        assert!(matches!(err, ServerError::PortInUse { .. }), "{err}");
    }

    #[test]
    fn stop_sends_one_sigterm_and_reaps_the_group() {
        let dir = tempfile::tempdir().unwrap();
        // A stand-in that logs each SIGTERM it receives and exits on the first.
        let script = dir.path().join("srv.sh");
        let marks = dir.path().join("terms");
        std::fs::write(
            &script,
            format!("#!/bin/sh\ntrap 'echo term >> {}; exit 0' TERM\nwhile :; do sleep 0.01; done\n", marks.display()),
        )
        .unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let mut s = spec(script.to_str().unwrap(), dir.path());
        s.port = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap().local_addr().unwrap().port();
        let mut srv = RunningServer::spawn(&s).unwrap();
        std::thread::sleep(Duration::from_millis(100));
        let report = srv.stop(Duration::from_secs(5)).unwrap();
        assert!(!report.killed);
        assert_eq!(std::fs::read_to_string(&marks).unwrap().lines().count(), 1);
        assert!(killpg(srv.pgid(), None).is_err(), "no process of the server's group is alive");
    }
}
