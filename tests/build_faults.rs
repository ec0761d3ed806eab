//! The fault matrix of `abprof build` and `abprof bisect` (issue #19): a build is a child like the
//! server. A signal to abprof stops the build's process group (cmake, ninja, every compiler) and
//! removes its worktree; a SIGKILL of abprof takes the build's group down too, and leaves no
//! worktree registered in the user's repository. Builds are a tiny CMake project whose build runs
//! a slow step, so each test takes seconds; abprof's TMPDIR is the test's own folder, so the build
//! slot, and every process of the build (found by that folder in its command line), is the test's.
mod common;
use common::*;
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const CMAKE: &str =
    "cmake_minimum_required(VERSION 3.14)\nproject(tiny LANGUAGES C)\nadd_executable(llama-server main.c)\n";
const MAIN: &str = "int main(void) { return 0; }\n";

/// A repository: a commit that builds at once, then one whose build runs a two-minute step.
struct Tiny {
    dir: tempfile::TempDir,
    repo: PathBuf,
    fast: String,
    slow: String,
}

fn tiny() -> Tiny {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir(&repo).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    std::fs::write(repo.join("CMakeLists.txt"), CMAKE).unwrap();
    std::fs::write(repo.join("main.c"), MAIN).unwrap();
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-q", "-m", "fast"]);
    let fast = git(&repo, &["rev-parse", "HEAD"]).trim().to_string();
    let slow = format!(
        "{CMAKE}add_custom_command(TARGET llama-server PRE_BUILD COMMAND sh ${{CMAKE_SOURCE_DIR}}/abprof-test-slow-build.sh)\n"
    );
    std::fs::write(repo.join("CMakeLists.txt"), slow).unwrap();
    std::fs::write(repo.join("abprof-test-slow-build.sh"), "sleep 120\n").unwrap();
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-q", "-m", "slow"]);
    let slow = git(&repo, &["rev-parse", "HEAD"]).trim().to_string();
    std::fs::create_dir(dir.path().join("tmp")).unwrap();
    Tiny { dir, repo, fast, slow }
}

impl Tiny {
    /// Where abprof's TMPDIR points: its build slots live here.
    fn tmp(&self) -> PathBuf {
        self.dir.path().join("tmp")
    }
    fn spawn(&self, args: &[String]) -> Child {
        Command::new(assert_cmd::cargo::cargo_bin("abprof"))
            .env("XDG_DATA_HOME", self.dir.path().join("data"))
            .env("TMPDIR", self.tmp())
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }
    /// The build's processes: every process naming the test's TMPDIR (the slot's worktree).
    fn build_processes(&self) -> Vec<u32> {
        processes_naming(&self.tmp())
    }
    fn wait_for_the_slow_step(&self, child: &mut Child) {
        let t0 = Instant::now();
        while !self.build_processes().iter().any(|&p| cmdline(p).contains("abprof-test-slow-build.sh")) {
            assert!(t0.elapsed() < Duration::from_secs(120), "the slow build step never started");
            assert!(child.try_wait().unwrap().is_none(), "abprof ended before the slow build step");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    /// The worktrees the repository has registered besides its own checkout.
    fn extra_worktrees(&self) -> Vec<String> {
        let list = git(&self.repo, &["worktree", "list", "--porcelain"]);
        list.lines().filter(|l| l.starts_with("worktree ")).skip(1).map(String::from).collect()
    }
}

fn cmdline(pid: u32) -> String {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|b| String::from_utf8_lossy(&b).replace('\0', " "))
        .unwrap_or_default()
}

fn signal(child: &Child, sig: Signal) {
    kill(Pid::from_raw(child.id() as i32), sig).unwrap();
}

/// Waits up to `limit` for `done`.
fn within(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let t0 = Instant::now();
    while !done() {
        if t0.elapsed() > limit {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    true
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

#[test]
fn sigint_to_build_stops_its_group_removes_the_worktree_and_exits_130() {
    let t = tiny();
    let out = t.dir.path().join("artifacts");
    let repo = t.repo.display().to_string();
    let args = strings(&["build", "--repo", &repo, "--commit", &t.slow, "--jobs", "1", "--out", out.to_str().unwrap()]);
    let mut child = t.spawn(&args);
    t.wait_for_the_slow_step(&mut child);
    assert_eq!(t.extra_worktrees().len(), 1, "the build's worktree is registered while it builds");
    let sent = Instant::now();
    signal(&child, Signal::SIGINT);
    let done = child.wait_with_output().unwrap();
    let took = sent.elapsed();
    eprintln!("SIGINT to build: exited {:.2} s after the signal", took.as_secs_f64());
    assert_eq!(done.status.code(), Some(130), "{}", String::from_utf8_lossy(&done.stderr));
    assert!(took < Duration::from_secs(10), "{took:?}");
    assert!(String::from_utf8_lossy(&done.stderr).contains("interrupted by signal 2"));
    assert_eq!(t.build_processes(), Vec::<u32>::new(), "no cmake, ninja or compiler of the build is left");
    assert_eq!(t.extra_worktrees(), Vec::<String>::new(), "the worktree was removed and pruned");
    assert!(!out.join(format!("llama-server-{}", &t.slow[..12])).exists(), "no artifact of an interrupted build");
}

#[test]
fn sigkill_to_bisect_during_a_build_takes_the_build_down_and_leaves_no_worktree() {
    let t = tiny();
    let tb = testbed();
    let d = t.dir.path();
    let (root, out) = (d.join("bisect"), d.join("artifacts"));
    let args = strings(&[
        "bisect",
        "--root",
        root.to_str().unwrap(),
        "--repo",
        t.repo.to_str().unwrap(),
        "--good",
        &t.fast,
        "--bad",
        &t.slow,
        "--out",
        out.to_str().unwrap(),
        "--model",
        tb.target.to_str().unwrap(),
        "--prompt-tokens",
        "300",
        "--tokens",
        "16",
        "--ignore-eos",
        "--jobs",
        "1",
    ]);
    let mut child = t.spawn(&args);
    t.wait_for_the_slow_step(&mut child);
    signal(&child, Signal::SIGKILL);
    let _ = child.wait();
    let t0 = Instant::now();
    let gone = within(Duration::from_secs(5), || t.build_processes().is_empty());
    eprintln!("SIGKILL to bisect: the build's processes gone after {:.2} s", t0.elapsed().as_secs_f64());
    assert!(
        gone,
        "the build outlived abprof: {:?}",
        t.build_processes().iter().map(|&p| cmdline(p)).collect::<Vec<_>>()
    );
    assert!(within(Duration::from_secs(5), || t.extra_worktrees().is_empty()), "{:?}", t.extra_worktrees());
    assert!(!Path::new(&root.join("worktree")).exists(), "the bisect's own worktree is gone too");
}
