//! `abprof bisect` against real git repositories: the real bisect of scripts/bisect-demo (8
//! commits on the test bed's llama.cpp tree, one slows decode, one does not build), and a tiny
//! CMake project for the ways out that must leave the repository as it was (bad input, a good
//! commit that does not build, SIGINT in the middle of a build).
mod common;
use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// Everything about a repository a bisect must not change.
fn state(repo: &Path) -> Vec<String> {
    [
        &["status", "--porcelain=v1", "--untracked-files=all"][..],
        &["rev-parse", "HEAD"],
        &["symbolic-ref", "HEAD"],
        &["branch", "--list"],
        &["worktree", "list", "--porcelain"],
        &["stash", "list"],
        &["diff"],
        &["diff", "--cached"],
        &["for-each-ref"],
    ]
    .iter()
    .map(|a| git(repo, a))
    .collect()
}

#[test]
fn the_demo_bisect_names_the_slow_commit_and_skips_the_broken_one() {
    let _serial = serial();
    testbed();
    let base = tempfile::tempdir().unwrap();
    let t0 = Instant::now();
    // The test runs samples beside other builds: the other-workload rule is not what it checks.
    let out = Command::new(concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/bisect-demo"))
        .args(["--runs", "1"])
        .env("ABPROF_BIN", assert_cmd::cargo::cargo_bin("abprof"))
        .env("ABPROF_DEMO_ROOT", base.path())
        .env("ABPROF_DEMO_FOREIGN_CPU_MAX", "400")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    eprintln!("bisect demo: {:.0} s\n{stdout}", t0.elapsed().as_secs_f64());

    let log = read_json(&base.path().join("run-1/bisect.json"));
    let repo = PathBuf::from(log["repo"].as_str().unwrap());
    let commit_of =
        |grep: &str| git(&repo, &["log", "--format=%H", "-1", &format!("--grep={grep}")]).trim().to_string();
    let (slow, broken) = (commit_of("^sampling: score"), commit_of("does not build"));
    assert_eq!(log["outcome"]["kind"], "first-bad");
    assert_eq!(log["outcome"]["commit"], slow.as_str());
    let steps = log["steps"].as_array().unwrap();
    let convicting = &steps[log["outcome"]["step"].as_u64().unwrap() as usize];
    assert_eq!(convicting["commit"], slow.as_str());
    assert!(matches!(convicting["call"].as_str(), Some("bad") | Some("reference")), "{convicting}");
    let ci = &convicting["reading"]["ci"];
    let t = log["threshold"]["pct"].as_f64().unwrap();
    assert!(t < 0.0 && ci["hi_pct"].as_f64().unwrap() < t, "the convicting interval {ci} lies beyond {t}");
    let broken_step = steps.iter().find(|s| s["commit"] == broken.as_str()).expect("git probed the broken commit");
    assert_eq!(broken_step["call"], "skip");
    assert!(broken_step["build"]["error"].as_str().unwrap().contains("build failed"), "{broken_step}");
    // Every probe that built has its A/B study folder, and git's own log is kept.
    for s in steps.iter().filter(|s| s["call"] != "skip") {
        let dir = base.path().join("run-1").join(s["study"].as_str().unwrap());
        assert!(dir.join("summary.json").is_file(), "{}", dir.display());
    }
    assert!(std::fs::read_to_string(base.path().join("run-1/bisect-log.txt")).unwrap().contains("git bisect skip"));
    assert!(!base.path().join("run-1/worktree").exists());
    assert!(stdout.contains(&format!("first bad {}", &slow[..12])), "{stdout}");
}

const CMAKE: &str =
    "cmake_minimum_required(VERSION 3.14)\nproject(tiny LANGUAGES C)\nadd_executable(llama-server main.c)\n";
const MAIN: &str = "int main(void) { return 0; }\n";

/// A tiny CMake project: good (builds), a commit whose build runs a slow step, one that does not
/// compile, and bad on top; plus uncommitted work the bisect must leave alone.
struct Tiny {
    _dir: tempfile::TempDir,
    path: PathBuf,
    commits: Vec<String>,
}

fn tiny() -> Tiny {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("repo");
    std::fs::create_dir(&path).unwrap();
    git(&path, &["init", "-q", "-b", "main"]);
    let mut commits = Vec::new();
    let mut commit = |files: &[(&str, &str)], msg: &str| {
        for (f, text) in files {
            std::fs::write(path.join(f), text).unwrap();
        }
        git(&path, &["add", "."]);
        git(&path, &["commit", "-q", "-m", msg]);
        commits.push(git(&path, &["rev-parse", "HEAD"]).trim().to_string());
    };
    commit(&[("CMakeLists.txt", CMAKE), ("main.c", MAIN)], "good");
    let slow = format!(
        "{CMAKE}add_custom_command(TARGET llama-server PRE_BUILD COMMAND sh ${{CMAKE_SOURCE_DIR}}/abprof-test-slow-build.sh)\n"
    );
    commit(&[("CMakeLists.txt", &slow), ("abprof-test-slow-build.sh", "sleep 120\n")], "a slow build step");
    commit(&[("main.c", "int main(void) { return ; }}\n")], "does not compile");
    commit(&[("main.c", MAIN)], "bad");
    std::fs::write(path.join("main.c"), "int main(void) { return 1; } /* research */\n").unwrap();
    std::fs::write(path.join("notes.txt"), "untracked\n").unwrap();
    Tiny { _dir: dir, path, commits }
}

fn bisect_args(repo: &Path, root: &Path, out: &Path, good: &str, bad: &str) -> Vec<String> {
    let tb = testbed();
    vec![
        "bisect".into(),
        "--root".into(),
        root.display().to_string(),
        "--repo".into(),
        repo.display().to_string(),
        "--good".into(),
        good.into(),
        "--bad".into(),
        bad.into(),
        "--out".into(),
        out.display().to_string(),
        "--model".into(),
        tb.target.display().to_string(),
        "--prompt-tokens".into(),
        "300".into(),
        "--tokens".into(),
        "16".into(),
        "--ignore-eos".into(),
    ]
}

fn one_error(out: &std::process::Output, needle: &str) {
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let errors: Vec<_> = stderr_lines(out).into_iter().filter(|l| l.starts_with("abprof: error:")).collect();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].contains(needle), "{:?} lacks {needle:?}", errors[0]);
}

#[test]
fn every_way_out_leaves_the_repository_as_it_was() {
    let t = tiny();
    let before = state(&t.path);
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("artifacts");
    let c = &t.commits;

    // Refused before anything is created: the same commit twice, the wrong order, a folder in
    // the repository, a template variant with a binary.
    let root = d.path().join("refused");
    let run = |args: Vec<String>| abprof().args(args).output().unwrap();
    one_error(&run(bisect_args(&t.path, &root, &out, &c[0], &c[0])), "same commit");
    one_error(&run(bisect_args(&t.path, &root, &out, &c[3], &c[0])), "not an ancestor");
    one_error(&run(bisect_args(&t.path, &t.path.join("bis"), &out, &c[0], &c[3])), "inside the repository");
    let mut a = bisect_args(&t.path, &root, &out, &c[0], &c[3]);
    a.extend(["--variant".into(), "x=/bin/true|kv=q8_0".into()]);
    one_error(&run(a), "where each build's binary goes");
    assert!(!root.exists() && !out.exists());
    assert_eq!(state(&t.path), before);

    // A good commit that does not build: nothing to compare against.
    let root = d.path().join("good-broken");
    one_error(&run(bisect_args(&t.path, &root, &out, &c[2], &c[3])), "does not build");
    assert!(!root.join("worktree").exists());
    assert_eq!(
        read_json(&root.join("bisect.json"))["good_build"]["error"].as_str().map(|e| e.contains("build failed")),
        Some(true)
    );
    assert_eq!(state(&t.path), before);

    // SIGINT while the bad commit's build runs its slow step: the build's process group is
    // ended, the worktree removed, exit 130.
    let root = d.path().join("interrupted");
    let mut child = spawn_abprof(&bisect_args(&t.path, &root, &out, &c[0], &c[1]));
    let step = Path::new("abprof-test-slow-build.sh");
    let t0 = Instant::now();
    while processes_naming(step).is_empty() {
        assert!(t0.elapsed() < Duration::from_secs(120), "the slow build step never started");
        assert!(child.try_wait().unwrap().is_none(), "abprof ended before the slow build step");
        std::thread::sleep(Duration::from_millis(50));
    }
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(child.id() as i32), nix::sys::signal::Signal::SIGINT).unwrap();
    let t1 = Instant::now();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    assert!(t1.elapsed() < Duration::from_secs(10), "took {:?} to stop", t1.elapsed());
    assert!(processes_naming(step).is_empty(), "the build's slow step outlived the bisect");
    assert!(!root.join("worktree").exists());
    assert_eq!(read_json(&root.join("bisect.json"))["outcome"]["kind"], "interrupted");
    assert_eq!(state(&t.path), before);
}
