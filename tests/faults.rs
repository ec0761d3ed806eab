//! The fault matrix of issue #11 on the real test bed: for each fault, abprof's exit status, its
//! one-line cause, hooks run exactly once, no process of the study left, finished samples intact,
//! and `--resume` completing where the study is resumable. A decoy process named `llama-server`
//! runs through all of it and must be untouched at the end.
mod common;
use common::*;
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Tests in this file: the last one to finish checks the decoy and ends it.
const TESTS: usize = 8;

struct Decoy {
    pid: u32,
    _dir: tempfile::TempDir,
}

/// A process with llama-server's file name that no study started: every test must leave it be.
fn decoy() -> &'static Decoy {
    static DECOY: OnceLock<Decoy> = OnceLock::new();
    DECOY.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("llama-server");
        std::fs::copy("/bin/sleep", &bin).unwrap();
        // 600 s: gone by itself if a filtered run never reaches the last test.
        let child = Command::new(&bin).arg("600").spawn().unwrap();
        let pid = child.id();
        std::mem::forget(child);
        Decoy { pid, _dir: dir }
    })
}

/// Held by every test: the study lock plus the decoy check at the end.
struct Fault {
    _serial: std::sync::MutexGuard<'static, ()>,
    dir: tempfile::TempDir,
}

impl Fault {
    fn new() -> Fault {
        let serial = serial();
        decoy();
        Fault { _serial: serial, dir: tempfile::tempdir().unwrap() }
    }
    fn root(&self) -> PathBuf {
        self.dir.path().join("study")
    }
    fn markers(&self) -> &Path {
        self.dir.path()
    }
    fn hooks(&self) -> [usize; 3] {
        ["before", "after", "verify"].map(|p| marker_lines(&self.markers().join(p)))
    }
}

impl Drop for Fault {
    fn drop(&mut self) {
        static DONE: AtomicUsize = AtomicUsize::new(0);
        let d = decoy();
        let alive_now = alive(d.pid);
        if DONE.fetch_add(1, Ordering::SeqCst) + 1 == TESTS {
            let _ = kill(Pid::from_raw(d.pid as i32), Signal::SIGKILL);
        }
        if !std::thread::panicking() {
            assert!(alive_now, "the decoy llama-server (pid {}) was touched", d.pid);
            assert!(processes_naming(&self.root()).is_empty(), "a process of the study was left running");
        }
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

/// Sample folders with a record.
fn finished(root: &Path) -> usize {
    std::fs::read_dir(root.join("samples"))
        .map(|d| d.flatten().filter(|e| e.path().join("sample.json").is_file()).count())
        .unwrap_or(0)
}

/// A slow-ish pair (one thread, 600 tokens): long enough requests to be hit mid-way.
fn slow_pair() -> [String; 2] {
    [variant("a", "-t 1"), variant("b", "-t 1 --no-warmup")]
}

#[test]
fn sighup_mid_sample_restores_once_and_resumes() {
    let f = Fault::new();
    let root = f.root();
    let child = spawn(&small_study(&root, f.markers(), 600, 1, &slow_pair()));
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
    let child = spawn(&small_study(&root, f.markers(), 600, 1, &slow_pair()));
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
    let child = spawn(&small_study(&root, f.markers(), 600, 1, &vs));
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
    // Every slot measured. Not asserted accepted: behind a wrapper, abprof watches the wrapper's
    // pid, so the server's own CPU counts as another workload (other-workload).
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
    let child = spawn(&small_study(&root, f.markers(), 600, 1, &slow_pair()));
    server_mid_request(&root, 1);
    signal(&child, Signal::SIGINT);
    assert_eq!(child.wait_with_output().unwrap().status.code(), Some(130));
    let first = spawn(&["ab".into(), "--resume".into(), root.display().to_string(), "--json".into()]);
    wait_for_run_of(&root, first.id());
    let second = resume(&root);
    assert_eq!(second.status.code(), Some(1));
    let lines = stderr_lines(&second);
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
    let args = small_study(&root, f.markers(), 8, 1, &[variant("a", "")]);
    let (a, b) = (spawn(&args), spawn(&args));
    let outs = [a.wait_with_output().unwrap(), b.wait_with_output().unwrap()];
    let (won, lost): (Vec<&Output>, Vec<&Output>) = outs.iter().partition(|o| o.status.success());
    assert_eq!((won.len(), lost.len()), (1, 1), "{} / {}", err(&outs[0]), err(&outs[1]));
    assert_eq!(lost[0].status.code(), Some(1));
    let lines = stderr_lines(lost[0]);
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
    let child = spawn(&small_study(&root, f.markers(), 600, 1, &vs));
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
    let lines = stderr_lines(&out);
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
    let mut args = small_study(&root, f.markers(), 8, 1, &[variant("a", "")]);
    let at = args.iter().position(|a| a == "--verify").unwrap();
    args[at + 1] = format!("sh -c 'echo verify >> {}; exit 4'", f.markers().join("verify").display());
    let out = abprof().args(&args).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", err(&out));
    let lines = stderr_lines(&out);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(lines[0].contains("restore/verify hooks failed"), "{}", lines[0]);
    let s: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(s["variants"][0]["accepted"], 0, "every sample rejected as isolation-restored");
    assert_eq!(f.hooks(), [1, 1, 1]);
}

#[test]
fn a_variant_without_an_accepted_sample_exits_1_after_the_summary() {
    let f = Fault::new();
    let root = f.root();
    let vs = [variant("a", ""), format!("{}|expect=no such line in any log", variant("b", ""))];
    let out = abprof().args(small_study(&root, f.markers(), 8, 1, &vs)).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", err(&out));
    let lines = stderr_lines(&out);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(lines[0].contains("variant b has no accepted sample"), "{}", lines[0]);
    let s: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(s["rejected"][0]["reasons"][0]["rule"], "expect", "the summary is still printed");
    assert_eq!(f.hooks(), [2, 1, 1]);
}
