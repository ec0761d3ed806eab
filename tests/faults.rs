//! The fault matrix of issue #11 on the real test bed: for each fault, abprof's exit status, its
//! one-line cause, hooks run exactly once, no process of the study left, finished samples intact,
//! and `--resume` completing where the study is resumable. A decoy process named `llama-server`
//! runs through each test and must be untouched at its end; the test then ends it, so no test
//! leaves a process behind.
//!
//! Every study here is a study file that lifts the other-workload rule (`[idle]
//! foreign_cpu_max_pct`): these tests are about faults, and other builds share the host. Faults are
//! injected through wrapper scripts around the real llama-server, the study's own hooks, a tmpfs,
//! or a signal from the test into the process it started.
mod common;
use common::*;
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};
use std::time::{Duration, Instant};

/// A process with llama-server's file name that no study started: every test must leave it be.
struct Decoy {
    child: Child,
    _dir: tempfile::TempDir,
}

impl Decoy {
    fn start() -> Decoy {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("llama-server");
        std::fs::copy("/bin/sleep", &bin).unwrap();
        // 600 s: gone by itself even if this test process is killed before its Drop.
        let child = Command::new(&bin).arg("600").spawn().unwrap();
        Decoy { child, _dir: dir }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Decoy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A tmpfs of the test's own, unmounted when the test ends (however it ends).
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(at: &Path, size: &str) -> Tmpfs {
        std::fs::create_dir_all(at).unwrap();
        let ok = Command::new("mount").args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"]).arg(at).status();
        assert!(ok.is_ok_and(|s| s.success()), "mounting a tmpfs at {} needs root (CAP_SYS_ADMIN)", at.display());
        Tmpfs(at.to_path_buf())
    }

    /// Writes zeros into `filler` until the disk is full.
    fn fill(&self) {
        use std::io::Write;
        let mut f = std::fs::File::create(self.0.join("filler")).unwrap();
        let chunk = vec![0u8; 1 << 20];
        while f.write_all(&chunk).is_ok() {}
        let _ = f.flush();
    }

    fn free(&self) {
        std::fs::remove_file(self.0.join("filler")).unwrap();
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

/// Held by every test: the study lock, and the decoy checked and ended at the end.
struct Fault {
    _serial: std::sync::MutexGuard<'static, ()>,
    decoy: Decoy,
    root: PathBuf,
    /// Before `dir`: unmounted before the folder it lives in goes.
    disk: Option<Tmpfs>,
    dir: tempfile::TempDir,
}

impl Fault {
    fn new() -> Fault {
        let serial = serial();
        let decoy = Decoy::start();
        let dir = tempfile::tempdir().unwrap();
        Fault { _serial: serial, decoy, root: dir.path().join("study"), disk: None, dir }
    }
    /// The study's folder on a tmpfs of `size` (a disk that can fill up).
    fn on_tmpfs(size: &str) -> Fault {
        let mut f = Fault::new();
        let at = f.dir.path().join("disk");
        f.disk = Some(Tmpfs::mount(&at, size));
        f.root = at.join("study");
        f
    }
    fn root(&self) -> PathBuf {
        self.root.clone()
    }
    fn markers(&self) -> &Path {
        self.dir.path()
    }
    fn hooks(&self) -> [usize; 3] {
        ["before", "after", "verify"].map(|p| marker_lines(&self.markers().join(p)))
    }
    /// An executable script in the test's folder.
    fn script(&self, name: &str, body: &str) -> PathBuf {
        let p = self.dir.path().join(name);
        std::fs::write(&p, format!("#!/bin/sh\n{body}")).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        p
    }
    /// A file in the test's folder that exists once `script`'s first run has begun: wrappers
    /// inject their fault into the first run only, so `--resume` meets the plain server.
    fn first_run_mark(&self) -> PathBuf {
        self.dir.path().join("first-run")
    }
}

impl Drop for Fault {
    fn drop(&mut self) {
        // A decoy a study killed is a zombie of this process, which `alive` still sees: try_wait
        // tells it apart.
        let alive_now = alive(self.decoy.pid()) && self.decoy.child.try_wait().is_ok_and(|s| s.is_none());
        if !std::thread::panicking() {
            assert!(alive_now, "the decoy llama-server (pid {}) was touched", self.decoy.pid());
            assert!(processes_naming(&self.root()).is_empty(), "a process of the study was left running");
        }
    }
}

/// A study file of the fault matrix (see the file's comment), and the `ab` argv that runs it.
struct Study<'f> {
    f: &'f Fault,
    top: serde_json::Map<String, serde_json::Value>,
    idle: serde_json::Map<String, serde_json::Value>,
    hooks: [String; 3],
}

impl<'f> Study<'f> {
    /// `tokens` output tokens (ignore_eos), `samples` per variant, the 300-token prompt.
    fn new(f: &'f Fault, tokens: u32, samples: u32, variants: &[String]) -> Study<'f> {
        let top = serde_json::json!({
            "model": testbed().target,
            "server_args": "-c 4096 -np 1",
            "tokens": tokens,
            "samples": samples,
            "variants": variants,
            "prompt": calibrated_prompt(300),
            "ignore_eos": true,
        });
        let hook = |phase: &str| format!("sh -c 'echo {phase} >> {}'", f.markers().join(phase).display());
        Study {
            f,
            top: top.as_object().unwrap().clone(),
            idle: serde_json::json!({ "foreign_cpu_max_pct": 1e9 }).as_object().unwrap().clone(),
            hooks: [hook("before"), hook("after"), hook("verify")],
        }
    }
    fn set(mut self, key: &str, value: impl Into<serde_json::Value>) -> Self {
        self.top.insert(key.into(), value.into());
        self
    }
    fn idle(mut self, key: &str, value: impl Into<serde_json::Value>) -> Self {
        self.idle.insert(key.into(), value.into());
        self
    }
    /// Replaces the hook of `phase` (before, after, verify); it must still append to its marker.
    fn hook(mut self, phase: &str, line: String) -> Self {
        let i = ["before", "after", "verify"].iter().position(|p| *p == phase).unwrap();
        self.hooks[i] = line;
        self
    }
    fn args(&self) -> Vec<String> {
        let mut doc = serde_json::Value::Object(self.top.clone());
        doc["idle"] = serde_json::Value::Object(self.idle.clone());
        doc["isolation"] =
            serde_json::json!({ "before": [self.hooks[0]], "after": [self.hooks[1]], "verify": [self.hooks[2]] });
        let toml_doc: toml::Value = serde_json::from_value(doc).unwrap();
        let path = self.f.dir.path().join("study.toml");
        std::fs::write(&path, toml::to_string(&toml_doc).unwrap()).unwrap();
        let root = self.f.root().display().to_string();
        vec!["ab".into(), "--study".into(), path.display().to_string(), "--root".into(), root, "--json".into()]
    }
}

/// The before hook that, on its `n`th run, touches `ready` and waits for the test to touch `go`.
fn before_hook_pausing_at(f: &Fault, n: usize) -> (String, PathBuf, PathBuf) {
    let (m, ready, go) = (f.markers().join("before"), f.dir.path().join("ready"), f.dir.path().join("go"));
    let hook = format!(
        "sh -c 'echo before >> {m}; if [ $(wc -l < {m}) -eq {n} ]; then touch {r}; while [ ! -e {g} ]; do sleep 0.01; done; fi'",
        m = m.display(),
        r = ready.display(),
        g = go.display()
    );
    (hook, ready, go)
}

fn wait_for(what: &str, limit: Duration, mut ready: impl FnMut() -> bool) {
    let t0 = Instant::now();
    while !ready() {
        assert!(t0.elapsed() < limit, "{what} did not happen within {limit:?}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn variant(label: &str, extra: &str) -> String {
    variant_bin(label, &testbed().server, extra)
}

fn variant_bin(label: &str, bin: &Path, extra: &str) -> String {
    let mut s = format!("{label}={}", bin.display());
    if !extra.is_empty() {
        s.push_str(&format!("|extra={extra}"));
    }
    s
}

fn spawn(args: &[String]) -> Child {
    spawn_abprof(args)
}

fn run(args: &[String]) -> Output {
    abprof().args(args).output().unwrap()
}

fn signal(child: &Child, sig: Signal) {
    kill(Pid::from_raw(child.id() as i32), sig).unwrap();
}

fn err(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).to_string()
}

fn resume(root: &Path) -> Output {
    abprof().args(["ab", "--resume"]).arg(root).arg("--json").output().unwrap()
}

fn summary(out: &Output) -> serde_json::Value {
    assert!(out.status.success(), "abprof failed: {}", err(out));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The one line abprof printed on stderr beside its progress lines.
fn one_line(out: &Output) -> String {
    let lines = error_lines(out);
    assert_eq!(lines.len(), 1, "{lines:?}");
    lines[0].clone()
}

/// Sample folders with a record.
fn finished(root: &Path) -> usize {
    std::fs::read_dir(root.join("samples"))
        .map(|d| d.flatten().filter(|e| e.path().join("sample.json").is_file()).count())
        .unwrap_or(0)
}

fn server_log(root: &Path, sample: &str) -> String {
    std::fs::read_to_string(root.join("samples").join(sample).join("server.log")).unwrap_or_default()
}

/// A slow-ish pair (one thread, 600 tokens): long enough requests to be hit mid-way.
fn slow_pair() -> [String; 2] {
    [variant("a", "-t 1"), variant("b", "-t 1 --no-warmup")]
}

#[test]
fn sighup_mid_sample_restores_once_and_resumes() {
    let f = Fault::new();
    let root = f.root();
    let child = spawn(&Study::new(&f, 600, 1, &slow_pair()).args());
    let server = server_mid_request(&root, 2);
    signal(&child, Signal::SIGHUP);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(129), "{}", err(&out));
    assert!(err(&out).contains("--resume"), "{}", err(&out));
    assert_eq!(f.hooks()[1..], [1, 1], "after and verify ran once");
    assert!(!alive(server), "the server in flight was stopped");
    assert_eq!(finished(&root), 1, "the finished sample stays");
    let s = summary(&resume(&root));
    assert_eq!(s["missing"], 0);
    assert_eq!(f.hooks()[1..], [2, 2], "the resumed run restores once more");
}

#[test]
fn sigkill_takes_the_server_down_and_resume_restores_first() {
    let f = Fault::new();
    let root = f.root();
    let child = spawn(&Study::new(&f, 600, 1, &slow_pair()).args());
    let server = server_mid_request(&root, 1);
    signal(&child, Signal::SIGKILL);
    let t0 = Instant::now();
    let mut child = child;
    child.wait().unwrap();
    while alive(server) && t0.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(1));
    }
    let gone = t0.elapsed();
    eprintln!("SIGKILL to abprof → its server gone in {:.1} ms", gone.as_secs_f64() * 1e3);
    assert!(!alive(server), "the server outlived abprof's SIGKILL");
    assert!(gone < Duration::from_secs(2), "{gone:?}");
    assert_eq!(f.hooks()[1..], [0, 0], "a SIGKILL leaves no chance to restore");
    assert!(root.join("run.json").is_file(), "the dead run's mark stays");
    let out = resume(&root);
    let e = err(&out);
    assert_eq!(e.matches("ended without restoring").count(), 1, "{e}");
    let s = summary(&out);
    assert_eq!(s["missing"], 0);
    assert_eq!(f.hooks()[1..], [2, 2], "the dead run's restore, then this run's");
    assert!(!root.join("run.json").exists(), "a finished run clears its mark");
}

#[test]
fn a_server_that_outlived_a_killed_run_is_stopped_on_resume() {
    let f = Fault::new();
    let root = f.root();
    // A wrapper that does not exec (it forwards the one SIGTERM): the death signal reaches it,
    // not its llama-server child.
    let wrapper = f.dir.path().join("wrapped-server");
    let script = format!(
        "#!/bin/sh\n{} \"$@\" &\npid=$!\ntrap 'kill -TERM $pid; wait $pid; exit 0' TERM\nwait $pid\n",
        testbed().server.display()
    );
    std::fs::write(&wrapper, script).unwrap();
    std::fs::set_permissions(&wrapper, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let vs = [variant_bin("a", &wrapper, "-t 1"), variant_bin("b", &wrapper, "-t 1 --no-warmup")];
    let child = spawn(&Study::new(&f, 600, 1, &vs).args());
    let server = server_mid_request(&root, 1);
    signal(&child, Signal::SIGKILL);
    let mut child = child;
    child.wait().unwrap();
    std::thread::sleep(Duration::from_millis(300));
    assert!(alive(server), "the wrapped server outlives abprof: the case resume must handle");
    let out = resume(&root);
    let e = err(&out);
    assert!(e.contains("ended without restoring"), "{e}");
    assert!(e.contains("stopped 1 leftover server process"), "{e}");
    assert!(!alive(server));
    // Every slot measured. Acceptance is not what this test checks (the wrapper's server counts
    // as the server since its process group does: a_wrapper_script_variant_is_measured_as_…).
    let s: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(s["missing"], 0, "{e}");
    assert_eq!(f.hooks()[1..], [2, 2]);
}

/// The pid a run recorded in `run.json` once it holds the folder's lock.
fn wait_for_run_of(root: &Path, pid: u32) {
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(60) {
        let rec = std::fs::read_to_string(root.join("run.json")).unwrap_or_default();
        if serde_json::from_str::<serde_json::Value>(&rec).is_ok_and(|v| v["abprof_pid"] == pid) {
            return;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    panic!("abprof {pid} never started its run");
}

#[test]
fn two_resumes_at_once_the_second_is_refused_and_nothing_is_measured_twice() {
    let f = Fault::new();
    let root = f.root();
    let child = spawn(&Study::new(&f, 600, 1, &slow_pair()).args());
    server_mid_request(&root, 1);
    signal(&child, Signal::SIGINT);
    assert_eq!(child.wait_with_output().unwrap().status.code(), Some(130));
    let first = spawn(&["ab".into(), "--resume".into(), root.display().to_string(), "--json".into()]);
    wait_for_run_of(&root, first.id());
    let second = resume(&root);
    assert_eq!(second.status.code(), Some(1));
    let lines = error_lines(&second);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(lines[0].contains("in use by another abprof run"), "{}", lines[0]);
    let s = summary(&first.wait_with_output().unwrap());
    assert_eq!(s["missing"], 0);
    let order = std::fs::read_to_string(root.join("order.jsonl")).unwrap();
    assert_eq!(order.matches("\"status\":\"ok\"").count(), 2, "each slot measured once: {order}");
    assert_eq!(f.hooks()[1..], [2, 2], "the interrupted run and the first resume; the refused one none");
}

#[test]
fn two_new_studies_racing_for_one_root_one_wins_the_other_gets_one_line() {
    let f = Fault::new();
    let root = f.root();
    let args = Study::new(&f, 8, 1, &[variant("a", "")]).args();
    let (a, b) = (spawn(&args), spawn(&args));
    let outs = [a.wait_with_output().unwrap(), b.wait_with_output().unwrap()];
    let (won, lost): (Vec<&Output>, Vec<&Output>) = outs.iter().partition(|o| o.status.success());
    assert_eq!((won.len(), lost.len()), (1, 1), "{} / {}", err(&outs[0]), err(&outs[1]));
    assert_eq!(lost[0].status.code(), Some(1));
    let lines = error_lines(lost[0]);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(
        lines[0].contains("already holds files") || lines[0].contains("in use by another abprof run"),
        "{}",
        lines[0]
    );
    assert_eq!(f.hooks(), [1, 1, 1], "only the winner ran hooks");
    assert_eq!(finished(&root), 1);
}

#[test]
fn a_binary_rebuilt_mid_sample_rejects_it_and_stops_the_study() {
    let f = Fault::new();
    let root = f.root();
    let bin = f.dir.path().join("bin").join("llama-server");
    std::fs::create_dir_all(bin.parent().unwrap()).unwrap();
    std::fs::copy(&testbed().server, &bin).unwrap();
    let vs = [variant_bin("a", &bin, "-t 1"), variant("b", "-t 1 --no-warmup")];
    let child = spawn(&Study::new(&f, 600, 1, &vs).args());
    server_mid_request(&root, 1);
    // A rebuild in place: new bytes written beside it, renamed over it (a running binary
    // cannot be opened for writing).
    let new = bin.with_extension("new");
    let mut bytes = std::fs::read(&bin).unwrap();
    bytes.extend_from_slice(b"rebuilt");
    std::fs::write(&new, bytes).unwrap();
    std::fs::set_permissions(&new, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    std::fs::rename(&new, &bin).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", err(&out));
    let lines = error_lines(&out);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(lines[0].contains("changed on disk") && lines[0].contains("variant a"), "{}", lines[0]);
    assert_eq!(f.hooks(), [1, 1, 1], "stopped after the first sample, restored once");
    let rec = read_json(&root.join("samples/001-a/sample.json"));
    assert!(rec["extra"]["binary_changed"]["now"]["inode"].is_u64(), "{rec:#}");
    let s = summary(&abprof().arg("summarize").arg(&root).arg("--json").output().unwrap());
    assert_eq!(s["rejected"][0]["reasons"][0]["rule"], "binary-changed", "{:#}", s["rejected"]);
}

#[test]
fn a_failed_verify_hook_exits_1_after_the_summary() {
    let f = Fault::new();
    let root = f.root();
    let verify = format!("sh -c 'echo verify >> {}; exit 4'", f.markers().join("verify").display());
    let args = Study::new(&f, 8, 1, &[variant("a", "")]).hook("verify", verify).args();
    let out = abprof().args(&args).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", err(&out));
    let lines = error_lines(&out);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(lines[0].contains("restore/verify hooks failed"), "{}", lines[0]);
    let s: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(s["variants"][0]["accepted"], 0, "every sample rejected as isolation-restored");
    assert_eq!(f.hooks(), [1, 1, 1]);
    assert_eq!(read_json(&root.join("summary.json")), s, "the summary is written as printed");
}

#[test]
fn a_variant_without_an_accepted_sample_exits_1_after_the_summary() {
    let f = Fault::new();
    let vs = [variant("a", ""), format!("{}|expect=no such line in any log", variant("b", ""))];
    let out = abprof().args(Study::new(&f, 8, 1, &vs).args()).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", err(&out));
    let lines = error_lines(&out);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(lines[0].contains("variant b has no accepted sample"), "{}", lines[0]);
    let s: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(s["rejected"][0]["reasons"][0]["rule"], "expect", "the summary is still printed");
    assert_eq!(f.hooks(), [2, 1, 1]);
}

// ---- The server's own faults ----

/// `--spec-type draft-mtp` asked of a model without an MTP block (the test bed's qwen3moe): the
/// server refuses the MTP context and exits while loading; the one line names the server's own
/// cause, the warning before its error (#21).
#[test]
fn draft_mtp_on_a_model_without_an_mtp_block_ends_with_the_servers_own_cause() {
    let f = Fault::new();
    let vs = [variant("a", ""), variant("mtp", "--spec-type draft-mtp --spec-draft-n-max 3")];
    let out = run(&Study::new(&f, 8, 1, &vs).args());
    assert_eq!(out.status.code(), Some(1), "{}", err(&out));
    let line = one_line(&out);
    assert!(line.contains("sample 2 (mtp)") && line.contains("while loading"), "{line}");
    assert!(line.contains("doesn't contain MTP layers") && line.contains("failed to create MTP context"), "{line}");
    assert_eq!(finished(&f.root()), 1, "the baseline's sample stays");
}

#[test]
fn a_corrupt_model_ends_the_study_with_its_load_line_and_resume_says_it_again() {
    let f = Fault::new();
    let root = f.root();
    // A truncated GGUF: the header parses, the key-value pairs do not.
    let corrupt = f.dir.path().join("corrupt.gguf");
    let bytes = std::fs::read(&testbed().target).unwrap();
    std::fs::write(&corrupt, &bytes[..300_000]).unwrap();
    let vs = [variant("a", ""), format!("{}|model={}", variant("b", ""), corrupt.display())];
    let args = Study::new(&f, 8, 1, &vs).args();
    let out = run(&args);
    assert_eq!(out.status.code(), Some(1), "{}", err(&out));
    let line = one_line(&out);
    assert!(line.contains("sample 2 (b)") && line.contains("while loading"), "{line}");
    assert!(line.contains("failed to read key-value pairs"), "the server's own first error line: {line}");
    assert!(line.contains("002-b/server.log"), "{line}");
    assert_eq!(f.hooks(), [2, 1, 1]);
    assert_eq!(finished(&root), 1, "the finished sample of a stays");
    let record = std::fs::read(root.join("samples/001-a/sample.json")).unwrap();
    // A corrupt model does not heal: the resume fails the same way, and measures nothing twice.
    let again = resume(&root);
    assert_eq!(again.status.code(), Some(1));
    assert_eq!(one_line(&again), line);
    assert_eq!(std::fs::read(root.join("samples/001-a/sample.json")).unwrap(), record);
    assert_eq!(f.hooks(), [3, 2, 2]);
}

/// `abprof calibrate` on a model that fails to load: its one line names the server's log, and the
/// log is there to read (the server's temporary folder is kept when the calibration fails).
#[test]
fn a_calibration_whose_server_fails_to_load_names_a_log_that_exists() {
    let f = Fault::new();
    let corrupt = f.dir.path().join("corrupt.gguf");
    let bytes = std::fs::read(&testbed().target).unwrap();
    std::fs::write(&corrupt, &bytes[..300_000]).unwrap();
    let out = abprof()
        .args(["calibrate", "--server-bin"])
        .arg(&testbed().server)
        .arg("--model")
        .arg(&corrupt)
        .args(["--server-args", "-c 4096 -np 1", "--prompt-tokens", "300", "--out"])
        .arg(f.dir.path().join("prompt.txt"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", err(&out));
    let line = one_line(&out);
    assert!(line.contains("while loading") && line.contains("failed to read key-value pairs"), "{line}");
    let log = PathBuf::from(line.rsplit("see ").next().unwrap().trim());
    let text = std::fs::read_to_string(&log).unwrap_or_else(|e| panic!("{line}: {} ({e})", log.display()));
    assert!(text.contains("failed to read key-value pairs"), "{text}");
    std::fs::remove_dir_all(log.parent().unwrap()).unwrap();
}

#[test]
fn a_load_failure_printed_only_to_the_console_names_server_console_log() {
    let f = Fault::new();
    let root = f.root();
    // A flag the binary does not have, given only when the server starts and before abprof's
    // --log-file: the same flag in extra= is refused before the folder exists (tests/refusals.rs).
    let flagged = f.script(
        "no-such-flag",
        &format!("{}exec {} --no-such-flag \"$@\"\n", version_as_is(), testbed().server.display()),
    );
    let out = run(&Study::new(&f, 8, 1, &[variant_bin("a", &flagged, "")]).args());
    assert_eq!(out.status.code(), Some(1), "{}", err(&out));
    let line = one_line(&out);
    assert!(line.contains("invalid argument: --no-such-flag"), "{line}");
    assert!(line.ends_with("001-a/server.console.log"), "{line}");
    assert!(!root.join("samples/001-a/server.log").exists(), "the server died before opening its log");
    assert_eq!(f.hooks(), [1, 1, 1]);
}

#[test]
fn a_server_killed_mid_decode_is_recorded_incomplete_and_measured_again_by_resume() {
    let f = Fault::new();
    let root = f.root();
    let child = spawn(&Study::new(&f, 400, 1, &[variant("a", "-t 1")]).args());
    let server = server_mid_request(&root, 1);
    // Past the prefill (a tenth of a second), into decode: tokens have streamed.
    std::thread::sleep(Duration::from_millis(500));
    kill(Pid::from_raw(server as i32), Signal::SIGKILL).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", err(&out));
    assert!(one_line(&out).contains("variant a has no accepted sample"), "{}", err(&out));
    let s: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let why = &s["rejected"][0]["reasons"][0];
    assert_eq!(why["rule"], "incomplete", "{why}");
    let rec = read_json(&root.join("samples/001-a/sample.json"));
    assert!(rec["error"].as_str().is_some_and(|e| !e.is_empty()), "{rec:#}");
    assert!(std::fs::metadata(root.join("samples/001-a/response.sse")).unwrap().len() > 0, "the partial stream");
    assert_eq!(f.hooks(), [1, 1, 1]);
    let s = summary(&resume(&root));
    assert_eq!((s["missing"].as_u64(), s["variants"][0]["accepted"].as_u64()), (Some(0), Some(1)), "{s:#}");
    assert!(root.join("samples/001-a.attempt-1/sample.json").is_file(), "the failed attempt is kept");
    assert_eq!(f.hooks(), [2, 2, 2]);
}

#[test]
fn a_server_that_ignores_sigterm_gets_sigkill_for_its_group_after_the_stop_timeout() {
    let f = Fault::new();
    let root = f.root();
    // The process abprof starts (and signals) ignores SIGTERM and keeps the real server as its
    // child: only a SIGKILL of the whole group ends both.
    let stubborn =
        f.script("stubborn-server", &format!("trap '' TERM\n{} \"$@\" &\nwait $!\n", testbed().server.display()));
    let out = run(&Study::new(&f, 8, 1, &[variant_bin("a", &stubborn, "")]).set("stop_timeout_s", 1).args());
    let s = summary(&out);
    assert_eq!(s["missing"], 0);
    let stop = &read_json(&root.join("samples/001-a/sample.json"))["stop"];
    assert_eq!(stop["killed"], true, "{stop}");
    assert!(stop["stop_ms"].as_f64().unwrap() >= 1000.0, "{stop}");
    assert!(stop["exit"].as_str().unwrap().contains("signal 9"), "{stop}");
    assert_eq!(f.hooks(), [1, 1, 1]);
    assert_eq!(summary(&resume(&root))["missing"], 0, "nothing left to measure");
    assert_eq!(f.hooks(), [1, 2, 2], "a resume with nothing to measure still restores once");
}

// ---- The port ----

#[test]
fn a_fixed_port_in_use_is_one_line_before_anything_is_created() {
    let f = Fault::new();
    let root = f.root();
    let held = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
    let port = held.local_addr().unwrap().port();
    let args = Study::new(&f, 8, 1, &[variant("a", "")]).set("port", port).args();
    let out = run(&args);
    assert_eq!(out.status.code(), Some(2), "a usage error: {}", err(&out));
    let line = one_line(&out);
    assert!(line.contains(&format!("port {port} on 127.0.0.1 is already in use")) && line.contains("--port"), "{line}");
    assert!(!root.exists(), "nothing created");
    assert_eq!(f.hooks(), [0, 0, 0]);
    drop(held);
    assert_eq!(summary(&run(&args))["missing"], 0, "the same command runs once the port is free");
    assert_eq!(f.hooks(), [1, 1, 1]);
}

/// Sample `n`'s server port, from its recorded argv.
fn port_of(root: &Path, sample: &str) -> u16 {
    let argv = read_json(&root.join("samples").join(sample).join("sample.json"))["server_argv"].clone();
    let argv: Vec<String> = serde_json::from_value(argv).unwrap();
    argv[argv.iter().position(|a| a == "--port").unwrap() + 1].parse().unwrap()
}

#[test]
fn a_fixed_port_taken_between_samples_stops_the_study_and_resume_completes() {
    let f = Fault::new();
    let root = f.root();
    let port = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap().local_addr().unwrap().port();
    let (hook, ready, go) = before_hook_pausing_at(&f, 2);
    let child = spawn(&Study::new(&f, 8, 2, &[variant("a", "")]).set("port", port).hook("before", hook).args());
    wait_for("the second before hook", Duration::from_secs(120), || ready.exists());
    let held = std::net::TcpListener::bind(("127.0.0.1", port)).unwrap();
    std::fs::write(&go, "").unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", err(&out));
    let line = one_line(&out);
    assert!(line.contains(&format!("sample 2 (a): port {port} on 127.0.0.1 is already in use")), "{line}");
    assert_eq!(f.hooks(), [2, 1, 1]);
    assert_eq!(finished(&root), 1);
    drop(held);
    assert_eq!(summary(&resume(&root))["missing"], 0);
    assert_eq!(f.hooks(), [3, 2, 2]);
}

#[test]
fn a_picked_port_taken_between_samples_is_replaced_by_another() {
    let f = Fault::new();
    let root = f.root();
    let (hook, ready, go) = before_hook_pausing_at(&f, 2);
    let child = spawn(&Study::new(&f, 8, 2, &[variant("a", "")]).hook("before", hook).args());
    wait_for("the second before hook", Duration::from_secs(120), || ready.exists());
    let first = port_of(&root, "001-a");
    let _held = std::net::TcpListener::bind(("127.0.0.1", first)).unwrap();
    std::fs::write(&go, "").unwrap();
    let s = summary(&child.wait_with_output().unwrap());
    assert_eq!(s["missing"], 0);
    assert_ne!(port_of(&root, "002-a"), first, "abprof picked another free port");
    assert_eq!(f.hooks(), [2, 1, 1]);
}

// ---- Signals in every phase of a sample ----

#[derive(Debug, Clone, Copy)]
enum Phase {
    /// The server is starting: abprof polls /health.
    Health,
    /// Pure decode's prompt-cache warm-up request.
    WarmUp,
    /// The idle gate waits for the server to go idle.
    Gate,
    /// The timed request streams.
    Request,
    /// Between two samples: the next sample's `before` hook runs.
    Between,
}

/// A prompt of about 2,700 tokens: pure decode's warm-up prefills it for over a second on one
/// thread, a window a signal can be aimed at.
fn long_prompt(f: &Fault) -> PathBuf {
    let p = f.dir.path().join("long-prompt.txt");
    std::fs::write(&p, ["the quick brown fox jumps over the lazy dog"; 300].join(" ")).unwrap();
    p
}

/// The first line of a wrapper: the study's `--version` and `--help` probes (made before its folder
/// exists) meet the real server, not the fault.
fn version_as_is() -> String {
    format!("case \"$1\" in --version|--help) exec {} \"$1\";; esac\n", testbed().server.display())
}

/// Signals abprof (the test's child) once its first sample is in `phase`: it must stop that
/// phase at once, restore once, leave nothing running and lose nothing, and `--resume` finishes.
fn signal_in(phase: Phase, sig: Signal) {
    let f = Fault::new();
    let root = f.root();
    let (server, mark) = (testbed().server.display().to_string(), f.first_run_mark().display().to_string());
    let version = version_as_is();
    let (study, samples) = match phase {
        Phase::Health => {
            let w = f.script(
                "slow-start",
                &format!("{version}if [ ! -e {mark} ]; then touch {mark}; sleep 60; fi\nexec {server} \"$@\"\n"),
            );
            (Study::new(&f, 8, 1, &[variant_bin("a", &w, "")]), 1)
        }
        Phase::WarmUp => {
            let s = Study::new(&f, 8, 1, &[variant("a", "-t 1")]).set("pure_decode", true);
            (s.set("prompt", long_prompt(&f).display().to_string()), 1)
        }
        Phase::Gate => {
            // abprof watches the process it started; on the first run that one burns a core.
            let w = f.script(
                "busy-server",
                &format!(
                    "{version}if [ -e {mark} ]; then exec {server} \"$@\"; fi\ntouch {mark}\n{server} \"$@\" &\nwhile :; do :; done\n"
                ),
            );
            // 200 ms gate windows: in 2 ms ones, a busy loop starved by other builds looks idle.
            let s = Study::new(&f, 8, 1, &[variant_bin("a", &w, "")]).idle("timeout_s", 60);
            (s.idle("interval_ms", 200).idle("consecutive", 3), 1)
        }
        Phase::Request => (Study::new(&f, 200, 1, &[variant("a", "-t 1")]), 1),
        Phase::Between => {
            let m = f.markers().join("before").display().to_string();
            let hook = format!("sh -c 'echo before >> {m}; [ $(wc -l < {m}) -ne 2 ] || sleep 60'");
            (Study::new(&f, 8, 2, &[variant("a", "")]).hook("before", hook), 2)
        }
    };
    let child = spawn(&study.args());
    let limit = Duration::from_secs(120);
    match phase {
        Phase::Health => wait_for("the slow start", limit, || f.first_run_mark().exists()),
        Phase::WarmUp => wait_for("the warm-up", limit, || server_log(&root, "001-a").contains("launch_slot_")),
        Phase::Gate => {
            wait_for("health", limit, || server_log(&root, "001-a").contains("listening on"));
            // abprof notices health within a poll (10 ms): by now it waits in the gate.
            std::thread::sleep(Duration::from_millis(300));
        }
        Phase::Request => {
            server_mid_request(&root, 1);
        }
        Phase::Between => wait_for("the second before hook", limit, || f.hooks()[0] == 2),
    }
    let sent = Instant::now();
    signal(&child, sig);
    let out = child.wait_with_output().unwrap();
    let took = sent.elapsed();
    eprintln!("{phase:?} × {sig}: abprof exited {:.2} s after the signal", took.as_secs_f64());
    assert_eq!(out.status.code(), Some(128 + sig as i32), "{phase:?}: {}", err(&out));
    let line = one_line(&out);
    assert!(line.contains(&format!("interrupted by signal {}", sig as i32)) && line.contains("--resume"), "{line}");
    assert!(took < Duration::from_secs(5), "{phase:?}: the signal waited for the phase to end ({took:?})");
    assert_eq!(f.hooks(), [samples, 1, 1], "{phase:?}");
    match phase {
        Phase::Between => {
            assert_eq!(finished(&root), 1, "the finished sample stays");
            assert!(!root.join("samples/002-a").exists(), "no server started after the signal");
        }
        Phase::WarmUp => {
            assert_eq!(server_log(&root, "001-a").matches("launch_slot_").count(), 1, "the request never started")
        }
        Phase::Gate => assert!(!server_log(&root, "001-a").contains("launch_slot_"), "no request passed the gate"),
        Phase::Health | Phase::Request => {}
    }
    if !matches!(phase, Phase::Between) {
        assert_eq!(finished(&root), 0, "an interrupted sample is not recorded");
    }
    let s = summary(&resume(&root));
    assert_eq!(s["missing"], 0, "{phase:?}");
    assert_eq!(finished(&root), samples);
    assert_eq!(f.hooks(), [samples + 1, 2, 2], "{phase:?}");
}

#[test]
fn sigint_while_the_server_starts() {
    signal_in(Phase::Health, Signal::SIGINT);
}
#[test]
fn sigterm_while_the_server_starts() {
    signal_in(Phase::Health, Signal::SIGTERM);
}
#[test]
fn sigint_during_the_warm_up() {
    signal_in(Phase::WarmUp, Signal::SIGINT);
}
#[test]
fn sigterm_during_the_warm_up() {
    signal_in(Phase::WarmUp, Signal::SIGTERM);
}
#[test]
fn sigint_in_the_idle_gate() {
    signal_in(Phase::Gate, Signal::SIGINT);
}
#[test]
fn sigterm_in_the_idle_gate() {
    signal_in(Phase::Gate, Signal::SIGTERM);
}
#[test]
fn sigint_mid_request() {
    signal_in(Phase::Request, Signal::SIGINT);
}
#[test]
fn sigterm_mid_request() {
    signal_in(Phase::Request, Signal::SIGTERM);
}
#[test]
fn sigint_between_samples() {
    signal_in(Phase::Between, Signal::SIGINT);
}
#[test]
fn sigterm_between_samples() {
    signal_in(Phase::Between, Signal::SIGTERM);
}

// ---- Hooks, disk, records ----

#[test]
fn a_failed_restore_hook_still_runs_verify_writes_the_summary_and_exits_1() {
    let f = Fault::new();
    let root = f.root();
    let after = format!("sh -c 'echo after >> {}; exit 3'", f.markers().join("after").display());
    let out = run(&Study::new(&f, 8, 1, &[variant("a", "")]).hook("after", after).args());
    assert_eq!(out.status.code(), Some(1), "{}", err(&out));
    assert!(one_line(&out).contains("restore/verify hooks failed"), "{}", err(&out));
    let printed: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(read_json(&root.join("summary.json")), printed, "the summary is written as printed");
    assert_eq!(f.hooks(), [1, 1, 1], "verify ran after the failed restore");
    let iso = read_json(&root.join("isolation.json"));
    assert_eq!(iso["restored"], false, "{iso:#}");
}

/// Files in `dir` named like a temporary of `atomic_file`.
fn temporaries(dir: &Path) -> Vec<String> {
    let names = std::fs::read_dir(dir).map(|d| d.flatten().map(|e| e.file_name().to_string_lossy().to_string()));
    names.into_iter().flatten().filter(|n| n.starts_with('.') && n.ends_with(".tmp")).collect()
}

#[test]
fn a_full_disk_at_start_is_one_line_and_the_same_command_then_runs() {
    let f = Fault::on_tmpfs("8m");
    let root = f.root();
    let disk = f.disk.as_ref().unwrap();
    disk.fill();
    let args = Study::new(&f, 8, 1, &[variant("a", "")]).args();
    let out = run(&args);
    assert_eq!(out.status.code(), Some(1), "{}", err(&out));
    let line = one_line(&out);
    assert!(line.contains("is full, so the study did not start") && line.contains("No space left"), "{line}");
    assert_eq!(f.hooks(), [0, 0, 0]);
    assert_eq!(temporaries(&root), Vec::<String>::new(), "no half-written temporary is left");
    // No circle: --resume says there is no study to resume, and the same command reuses the folder.
    let r = resume(&root);
    assert_eq!(r.status.code(), Some(1));
    let line = one_line(&r);
    assert!(line.contains("not an abprof study folder") || line.contains("never started"), "{line}");
    disk.free();
    assert_eq!(summary(&run(&args))["missing"], 0);
    assert_eq!(f.hooks(), [1, 1, 1]);
}

#[test]
fn a_disk_that_fills_mid_study_stops_it_with_one_line_and_resume_completes() {
    let f = Fault::on_tmpfs("32m");
    let root = f.root();
    let disk = f.disk.as_ref().unwrap();
    let m = f.markers().join("before").display().to_string();
    let filler = disk.0.join("filler").display().to_string();
    // The second sample's before hook fills the disk the study writes to.
    let hook = format!("sh -c 'echo before >> {m}; [ $(wc -l < {m}) -ne 2 ] || cat /dev/zero > {filler}; true'");
    let out = run(&Study::new(&f, 8, 2, &[variant("a", "")]).hook("before", hook).args());
    assert_eq!(out.status.code(), Some(1), "{}", err(&out));
    let line = one_line(&out);
    assert!(line.contains("is full") && line.contains("--resume") && line.contains("sample 2 (a)"), "{line}");
    assert_eq!(f.hooks(), [2, 1, 1]);
    assert_eq!(finished(&root), 1, "the finished sample stays");
    let first = read_json(&root.join("samples/001-a/sample.json"));
    assert!(first["error"].is_null(), "{first:#}");
    disk.free();
    assert_eq!(summary(&resume(&root))["missing"], 0);
    assert_eq!(read_json(&root.join("samples/001-a/sample.json")), first, "measured once");
    assert_eq!(f.hooks(), [3, 2, 2]);
}

#[test]
fn a_corrupt_sample_record_is_rejected_by_summarize_and_measured_again_by_resume() {
    let f = Fault::new();
    let root = f.root();
    assert_eq!(summary(&run(&Study::new(&f, 8, 1, &[variant("a", "")]).args()))["missing"], 0);
    let record = root.join("samples/001-a/sample.json");
    let text = std::fs::read_to_string(&record).unwrap();
    std::fs::write(&record, &text[..text.len() / 2]).unwrap();
    let out = abprof().arg("summarize").arg(&root).arg("--json").output().unwrap();
    let s: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", err(&out)));
    let why = &s["rejected"][0]["reasons"][0];
    assert_eq!(why["rule"], "corrupt-record", "{:#}", s["rejected"]);
    assert_eq!(s["variants"][0]["accepted"], 0);
    let s = summary(&resume(&root));
    assert_eq!((s["missing"].as_u64(), s["variants"][0]["accepted"].as_u64()), (Some(0), Some(1)), "{s:#}");
    assert!(read_json(&record)["error"].is_null());
    let kept = std::fs::read_to_string(root.join("samples/001-a.attempt-1/sample.json")).unwrap();
    assert_eq!(kept, text[..text.len() / 2], "the corrupt record is kept aside, not deleted");
    assert_eq!(f.hooks(), [2, 2, 2]);
}

/// Issue #35: an evidence folder shows that it is the one abprof wrote. Each sample is sealed
/// (SHA256SUMS, `sha256sum -c`'s format); a sample.json whose server decode_tps was edited ×10 and a
/// sample whose server.log was deleted are named by summarize, rule evidence-changed, and left
/// out of every figure; the untouched sample is still accepted.
#[test]
fn a_tampered_and_a_log_less_sample_are_named_by_summarize() {
    let f = Fault::new();
    let root = f.root();
    let s = summary(&run(&Study::new(&f, 8, 3, &[variant("a", "")]).args()));
    assert_eq!(s["variants"][0]["accepted"], 3, "{s:#}");
    let sums = std::fs::read_to_string(root.join("samples/001-a/SHA256SUMS")).unwrap();
    assert!(sums.contains("  sample.json\n") && sums.contains("  server.log\n"), "{sums}");
    let check = Command::new("sha256sum")
        .arg("-c")
        .arg("--quiet")
        .arg("SHA256SUMS")
        .current_dir(root.join("samples/001-a"))
        .output()
        .unwrap();
    assert!(check.status.success(), "sha256sum -c reads the seal: {}", String::from_utf8_lossy(&check.stdout));

    let record = root.join("samples/001-a/sample.json");
    let mut edited = read_json(&record);
    let tps = edited["server"]["decode_tps"].as_f64().expect("a decode rate");
    edited["server"]["decode_tps"] = serde_json::json!(tps * 10.0);
    std::fs::write(&record, serde_json::to_string_pretty(&edited).unwrap()).unwrap();
    std::fs::remove_file(root.join("samples/002-a/server.log")).unwrap();

    let out = abprof().arg("summarize").arg(&root).arg("--json").output().unwrap();
    let s: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", err(&out)));
    let rejected = s["rejected"].as_array().unwrap();
    let named =
        |dir: &str, what: &str| {
            rejected.iter().any(|r| {
                r["dir"].as_str().is_some_and(|d| d.ends_with(dir))
                    && r["reasons"].as_array().unwrap().iter().any(|w| {
                        w["rule"] == "evidence-changed" && w["reason"].as_str().is_some_and(|t| t.contains(what))
                    })
            })
        };
    assert!(named("001-a", "sample.json changed"), "{:#}", s["rejected"]);
    assert!(named("002-a", "server.log is missing"), "{:#}", s["rejected"]);
    assert_eq!(s["variants"][0]["accepted"], 1, "only the untouched sample counts");
    let text = abprof().arg("summarize").arg(&root).output().unwrap();
    assert!(String::from_utf8_lossy(&text.stdout).contains("evidence-changed"), "the text summary names the rule");
}

// ---- Issue #19's fault cases: bounds, calibration, wrappers, models; issue #20's own CPU ----

/// The flags of a study on the command line, its root `root`.
fn flag_study(root: &Path, extra: &[&str]) -> Vec<String> {
    let mut v: Vec<String> =
        ["ab", "--root", &root.display().to_string(), "--model", &testbed().target.display().to_string()]
            .map(String::from)
            .to_vec();
    v.extend([
        "--variant".into(),
        variant("a", ""),
        "--tokens".into(),
        "8".into(),
        "--prompt-tokens".into(),
        "50".into(),
    ]);
    v.extend(extra.iter().map(|s| s.to_string()));
    v
}

#[test]
fn a_count_duration_or_rate_out_of_bounds_is_one_line_exit_2_and_nothing_created() {
    let f = Fault::new();
    let root = f.root();
    for (bad, names) in [
        (&["--samples", "4294967295"][..], "--samples"),
        (&["--samples", "100000000"][..], "--samples"),
        (&["--until-ci", "2", "--max-samples", "99999999"][..], "--max-samples"),
        (&["--health-timeout", "99999999999"][..], "--health-timeout"),
        (&["--stall-timeout", "18446744073709551615"][..], "--stall-timeout"),
        (&["--telemetry-hz", "100000"][..], "--telemetry-hz"),
        (&["--idle-samples", "4000000000"][..], "--idle-samples"),
    ] {
        let args = flag_study(&root, bad);
        let t0 = Instant::now();
        let out = run(&args);
        assert_eq!(out.status.code(), Some(2), "{bad:?}: {}", err(&out));
        let line = one_line(&out);
        assert!(line.contains(names) && line.contains("abprof's bound"), "{bad:?}: {line}");
        assert!(t0.elapsed() < Duration::from_secs(5), "{bad:?} took {:?}", t0.elapsed());
        assert!(!root.exists(), "{bad:?} created {}", root.display());
    }
    for (key, value, want) in [
        ("samples", serde_json::json!(4294967295u64), "samples = 4294967295 is above 10000"),
        ("stall_timeout_s", serde_json::json!(1_000_000_000_000u64), "stall_timeout_s = 1000000000000 is above 604800"),
        ("telemetry_hz", serde_json::json!(4_000_000u64), "telemetry_hz = 4000000 is above 1000"),
    ] {
        let out = run(&Study::new(&f, 8, 1, &[variant("a", "")]).set(key, value).args());
        assert_eq!(out.status.code(), Some(2), "{key}: {}", err(&out));
        let line = one_line(&out);
        assert!(line.contains(want), "{key}: {line}");
        assert!(!root.exists(), "{key} created {}", root.display());
    }
    assert_eq!(f.hooks(), [0, 0, 0]);
}

/// The first hour's bad inputs (docs/methodology.md §20): a margin or precision that calls any
/// slowdown the same, a zero timeout, a flag abprof owns in a variant, a `--device` the variant's
/// binary does not list, an empty or binary prompt
/// file — each one line naming the cause and the fix, exit 2, before the folder exists; a file
/// given as --root is one line that says it is a file.
#[test]
fn bad_inputs_of_the_first_hour_are_refused_before_anything_is_created() {
    let f = Fault::new();
    let root = f.root();
    for (bad, want) in [
        (&["--until-decided", "--mei", "1e308"][..], "above 50%"),
        (&["--until-ci", "100"][..], "above 50%"),
        (&["--variant", "b=/bin/true|extra=--port 9"][..], "--port"),
    ] {
        let out = run(&flag_study(&root, bad));
        assert_eq!(out.status.code(), Some(2), "{bad:?}: {}", err(&out));
        let line = one_line(&out);
        assert!(line.contains(want), "{bad:?}: {line}");
        assert!(!root.exists(), "{bad:?} created {}", root.display());
    }
    // A GPU the binary does not see (the test bed's CPU build lists none), asked of the binary
    // itself (`llama-server --list-devices`), not left to its first sample's "invalid device".
    let no_such_gpu = format!("b={}|extra=-dev CUDA3", testbed().server.display());
    let out = run(&flag_study(&root, &["--variant", &no_such_gpu]));
    assert_eq!(out.status.code(), Some(2), "{}", err(&out));
    let line = one_line(&out);
    assert!(line.contains("variant b: --device CUDA3 is not a device this llama-server sees"), "{line}");
    assert!(line.contains("lists none") && line.contains("leave out --device"), "{line}");
    assert!(!root.exists(), "-dev CUDA3 created {}", root.display());
    let empty = f.dir.path().join("empty.txt");
    std::fs::write(&empty, "  \n").unwrap();
    let binary = f.dir.path().join("binary.txt");
    std::fs::write(&binary, b"abc\0\x01\x02").unwrap();
    for (key, value, want) in [
        ("stall_timeout_s", serde_json::json!(0), "stall_timeout_s = 0 is below 1"),
        ("prompt", serde_json::json!(empty.display().to_string()), "is empty"),
        ("prompt", serde_json::json!(binary.display().to_string()), "NUL bytes"),
    ] {
        let out = run(&Study::new(&f, 8, 1, &[variant("a", "")]).set(key, value).args());
        assert_eq!(out.status.code(), Some(2), "{key}: {}", err(&out));
        let line = one_line(&out);
        assert!(line.contains(want) && (key != "prompt" || line.contains("abprof calibrate")), "{key}: {line}");
        assert!(!root.exists(), "{key} created {}", root.display());
    }
    let mut args = flag_study(&root, &[]);
    args[2] = "/etc/passwd".into();
    let out = run(&args);
    assert_eq!(out.status.code(), Some(2), "a usage error: {}", err(&out));
    let line = one_line(&out);
    assert!(line.contains("/etc/passwd is a file, not a folder") && !line.contains("--resume"), "{line}");
    assert_eq!(f.hooks(), [0, 0, 0]);
}

#[test]
fn sigint_while_the_baseline_loads_for_calibration_exits_130_at_once() {
    let f = Fault::new();
    let root = f.root();
    let (server, mark) = (testbed().server.display().to_string(), f.first_run_mark().display().to_string());
    // The calibration's server is the first this study starts: it takes a minute to load.
    let slow = f.script(
        "slow-start",
        &format!("{}if [ ! -e {mark} ]; then touch {mark}; sleep 60; fi\nexec {server} \"$@\"\n", version_as_is()),
    );
    let mut study = Study::new(&f, 8, 1, &[variant_bin("a", &slow, "")]);
    study.top.remove("prompt");
    let child = spawn(&study.set("prompt_tokens", 300).args());
    wait_for("the calibration's server", Duration::from_secs(120), || f.first_run_mark().exists());
    let loading = processes_naming(&root);
    assert!(!loading.is_empty(), "the calibration server runs");
    let sent = Instant::now();
    signal(&child, Signal::SIGINT);
    let out = child.wait_with_output().unwrap();
    let took = sent.elapsed();
    eprintln!("SIGINT during calibration: abprof exited {:.2} s after the signal", took.as_secs_f64());
    assert_eq!(out.status.code(), Some(130), "{}", err(&out));
    assert!(took < Duration::from_millis(1500), "the signal waited for the load ({took:?})");
    let line = one_line(&out);
    assert!(line.contains("interrupted by signal 2") && line.contains("--resume"), "{line}");
    assert!(loading.iter().all(|&p| !alive(p)), "the calibration's server was stopped");
    assert_eq!(f.hooks(), [1, 1, 1]);
    assert_eq!(finished(&root), 0);
    let s = summary(&resume(&root));
    assert_eq!(s["missing"], 0, "the resume calibrates and measures");
    assert_eq!(f.hooks(), [2, 2, 2]);
}

/// The host CPU a sample recorded: foreign, server and abprof's own, % of a core.
fn host_cpu(root: &Path, sample: &str) -> serde_json::Value {
    read_json(&root.join("samples").join(sample).join("sample.json"))["extra"]["telemetry"]["host_cpu"].clone()
}

#[test]
fn a_wrapper_script_variant_is_measured_as_the_server_it_starts() {
    let f = Fault::new();
    let root = f.root();
    // As users write one to set an environment: llama-server is the script's child, no exec.
    let wrapper =
        f.script("env-wrapper", &format!("export GGML_SCHED_PRIO=0\n{} \"$@\"\n", testbed().server.display()));
    let vs = [variant("a", "-t 1"), variant_bin("b", &wrapper, "-t 1")];
    let s = summary(&run(&Study::new(&f, 64, 1, &vs).args()));
    assert_eq!(s["missing"], 0);
    let (plain, wrapped) = (host_cpu(&root, "001-a"), host_cpu(&root, "002-b"));
    eprintln!("plain {plain}\nwrapped {wrapped}");
    let (a, b) = (plain["server_pct"].as_f64().unwrap(), wrapped["server_pct"].as_f64().unwrap());
    assert!(b > 25.0 && b > 0.5 * a, "the wrapped server's own CPU ({b:.0}%) counts as the server's (plain: {a:.0}%)");
    let gate = &read_json(&root.join("samples/002-b/sample.json"))["extra"]["idle_gate"]["source"];
    assert!(gate.as_str().unwrap().contains("of its process group"), "the gate watches the group: {gate}");
    assert_eq!(f.hooks(), [2, 1, 1]);
}

#[test]
fn a_model_replaced_mid_sample_rejects_it_and_stops_the_study() {
    let f = Fault::new();
    let root = f.root();
    let model = f.dir.path().join("models").join("model.gguf");
    std::fs::create_dir_all(model.parent().unwrap()).unwrap();
    std::fs::copy(&testbed().target, &model).unwrap();
    let vs = [format!("{}|model={}", variant("a", "-t 1"), model.display()), variant("b", "-t 1 --no-warmup")];
    let child = spawn(&Study::new(&f, 600, 1, &vs).args());
    server_mid_request(&root, 1);
    // Another model put in its place (written beside it, renamed over it).
    let new = model.with_extension("new");
    let mut bytes = std::fs::read(&model).unwrap();
    bytes.extend_from_slice(b"another model");
    std::fs::write(&new, bytes).unwrap();
    std::fs::rename(&new, &model).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", err(&out));
    let line = one_line(&out);
    assert!(line.contains("variant a's model") && line.contains("changed on disk"), "{line}");
    assert_eq!(f.hooks(), [1, 1, 1], "stopped after the first sample, restored once");
    let rec = read_json(&root.join("samples/001-a/sample.json"));
    assert!(rec["extra"]["model_changed"]["now"]["inode"].is_u64(), "{rec:#}");
    let s = summary(&abprof().arg("summarize").arg(&root).arg("--json").output().unwrap());
    assert_eq!(s["rejected"][0]["reasons"][0]["rule"], "model-changed", "{:#}", s["rejected"]);
}

/// Evidence a user may edit (issue 32): a resumed study whose variants.json holds a sha256 cut
/// short is refused in one line (exit 2) before it measures or restores anything; it once panicked
/// slicing the hash.
#[test]
fn a_resumed_study_whose_variants_json_holds_a_short_sha256_is_refused_in_one_line() {
    let f = Fault::new();
    let root = f.root();
    let s = summary(&run(&Study::new(&f, 8, 1, &[variant("a", "")]).args()));
    assert_eq!(s["missing"], 0);
    let path = root.join("variants.json");
    let mut facts = read_json(&path);
    facts["items"][0]["binary"]["sha256"] = "74f115b17eef".into();
    std::fs::write(&path, serde_json::to_string_pretty(&facts).unwrap()).unwrap();
    let hooks = f.hooks();
    let out = resume(&root);
    assert_eq!(out.status.code(), Some(2), "{}", err(&out));
    let line = one_line(&out);
    assert!(
        line.contains("variants.json records variant a's binary sha256 as \"74f115b17eef\", which is not a sha256")
            && line.contains("start a new study"),
        "{line}"
    );
    assert_eq!(f.hooks(), hooks, "no hook ran");
    assert_eq!(finished(&root), 1, "nothing measured");
}

#[test]
fn the_sampler_rate_is_bounded_by_its_source_and_abprofs_own_cpu_is_recorded() {
    let f = Fault::new();
    let root = f.root();
    // The test bed has no GPU: the server's CPU is the source, read over 10 ms windows.
    let out = run(&Study::new(&f, 8, 1, &[variant("a", "")]).set("telemetry_hz", 1000).args());
    assert_eq!(out.status.code(), Some(2), "{}", err(&out));
    let line = one_line(&out);
    assert!(line.contains("telemetry_hz = 1000 is above 100 Hz") && line.contains("--telemetry-hz 100"), "{line}");
    assert!(!root.exists(), "nothing created");
    assert_eq!(f.hooks(), [0, 0, 0]);
    let s = summary(&run(&Study::new(&f, 64, 1, &[variant("a", "")]).args()));
    assert_eq!(s["missing"], 0);
    let cpu = host_cpu(&root, "001-a");
    let own = cpu["abprof_pct"].as_f64().unwrap_or_else(|| panic!("abprof's own CPU is recorded: {cpu}"));
    eprintln!("abprof's own CPU during the request at 100 Hz: {own:.1}% of a core ({cpu})");
    assert!((0.0..20.0).contains(&own), "{cpu}");
    assert_eq!(s["variants"][0]["accepted"], 1, "under the abprof-cpu limit: {:#}", s["rejected"]);
}

/// Another workload that begins during the first request (real busy loops, this test's own
/// children) spoils its block `other-workload` (a load already running before a request is
/// waited out by the idle gate, docs/methodology.md §9.1); the block is retaken at the end of
/// the schedule, every attempt stays in the evidence, and the study ends with its planned
/// accepted samples a side and a verdict (docs/methodology.md §7.19).
#[test]
fn a_block_spoiled_by_another_workload_is_retaken_and_the_study_still_decides() {
    let f = Fault::new();
    let limit = foreign_limit();
    let study = Study::new(&f, 128, 3, &[variant("a", ""), variant("b", "")]).idle("foreign_cpu_max_pct", limit);
    let mut child = spawn(&study.args());
    server_mid_request(&f.root(), 1);
    let other = BusyLoops::crowding();
    let order = f.root().join("order.jsonl");
    let lines = || std::fs::read_to_string(&order).map_or(0, |t| t.lines().count());
    wait_for("the first sample", Duration::from_secs(300), || lines() >= 1 || child.try_wait().unwrap().is_some());
    drop(other);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", err(&out));
    let s: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rejected = s["rejected"].as_array().unwrap();
    assert!(rejected.iter().any(|r| r["reasons"][0]["rule"] == "other-workload"), "{:#}", s["rejected"]);
    let retakes = &s["retakes"];
    let taken = retakes["taken"].as_u64().unwrap();
    assert!(taken >= 1 && taken == retakes["spoiled"].as_array().unwrap().len() as u64, "{retakes:#}");
    assert_eq!(lines() as u64, 2 * (3 + taken), "every attempt is in order.jsonl");
    for v in s["variants"].as_array().unwrap() {
        assert_eq!(v["planned"].as_u64(), Some(3 + taken), "{v:#}");
        assert!(v["accepted"].as_u64().unwrap() >= 3, "{v:#}");
    }
    let decode = s["variants"][1]["metrics"].as_array().unwrap().iter().find(|m| m["metric"] == "server-decode-tps");
    assert_ne!(decode.unwrap()["verdict"], "too-few-samples", "{:#}", s["variants"][1]);
}

#[test]
fn every_sample_rejected_other_workload_names_foreign_cpu_max_and_a_quiet_host() {
    let f = Fault::new();
    // Another workload that really runs: on a quiet host (CI's) the background alone can read
    // 0% foreign CPU, which a 0% limit accepts. The loops are this test's own children. The
    // gate's wait for a quiet host (docs/methodology.md §9.1) times out after 1 s and lets the
    // request go ahead; no retake, so the one sample's rejection is the summary's.
    let other = BusyLoops::crowding();
    let study = Study::new(&f, 64, 1, &[variant("a", "")]).idle("foreign_cpu_max_pct", 0.0).idle("timeout_s", 1);
    let out = run(&study.set("retakes", 0).args());
    drop(other);
    assert_eq!(out.status.code(), Some(1), "{}", err(&out));
    let s: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(s["rejected"][0]["reasons"][0]["rule"], "other-workload", "{:#}", s["rejected"]);
    let lines = error_lines(&out);
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(lines[0].contains("variant a has no accepted sample"), "{}", lines[0]);
    assert!(lines[1].contains("--foreign-cpu-max") && lines[1].contains("quiet host"), "{}", lines[1]);
}
