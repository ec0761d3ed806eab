//! Shell completions and the man page are generated from the clap definitions and parse in the
//! real shells and in groff (scripts/system-deps installs zsh, fish and groff).
mod common;
use common::*;
use std::io::Write;
use std::process::{Command, Stdio};

fn generated(args: &[&str]) -> Vec<u8> {
    let out = abprof().args(args).output().unwrap();
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    assert!(!out.stdout.is_empty());
    out.stdout
}

/// Runs `program args…` with `input` on stdin; returns its exit success and stderr.
fn check(program: &str, args: &[&str], input: &[u8]) -> (bool, String) {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{program}: {e} (scripts/system-deps installs it)"));
    child.stdin.take().unwrap().write_all(input).unwrap();
    let out = child.wait_with_output().unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stderr).to_string())
}

#[test]
fn completions_parse_in_bash_zsh_and_fish() {
    for (shell, program, args) in
        [("bash", "bash", &["-n"][..]), ("zsh", "zsh", &["-n"][..]), ("fish", "fish", &["--no-execute"][..])]
    {
        let script = generated(&["completions", shell]);
        let text = String::from_utf8_lossy(&script);
        assert!(text.contains("compare-traces") && text.contains("telemetry-hz"), "{shell}: not abprof's");
        let (ok, err) = check(program, args, &script);
        assert!(ok && err.is_empty(), "{shell} rejects the completions: {err}");
    }
}

#[test]
fn the_man_page_renders_without_errors() {
    let page = generated(&["man"]);
    let text = String::from_utf8_lossy(&page);
    for section in [".TH abprof 1", ".TH abprof-ab 1", ".TH abprof-trace 1", ".TH abprof-pi 1"] {
        assert!(text.contains(section), "{section} missing");
    }
    // -k: UTF-8 input through preconv, as man does; -z: parse and lay out, print nothing.
    let (ok, err) = check("groff", &["-k", "-man", "-Tutf8", "-z", "-ww"], &page);
    let errors: Vec<&str> = err.lines().filter(|l| l.contains("error")).collect();
    assert!(ok && errors.is_empty(), "groff: {err}");
}

/// How `abprof ARGS` ended with its stdout read for `lines` lines and then closed (0: closed
/// before it started, so its first write meets a reader that is gone): its exit and stderr.
fn into_a_closed_pipe(args: &[&str], lines: usize) -> (std::process::ExitStatus, String) {
    use std::io::BufRead;
    let (reader, writer) = std::io::pipe().unwrap();
    let reader = (lines > 0).then_some(reader);
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("abprof"));
    cmd.args(args).env("XDG_DATA_HOME", data_home()).stdin(Stdio::null()).stdout(writer).stderr(Stdio::piped());
    let child = cmd.spawn().unwrap();
    drop(cmd); // its copy of the pipe's write end
    if let Some(reader) = reader {
        let mut out = std::io::BufReader::new(reader);
        for _ in 0..lines {
            let mut line = String::new();
            assert!(out.read_line(&mut line).unwrap() > 0, "{args:?}: fewer than {lines} lines");
        }
    }
    let done = child.wait_with_output().unwrap();
    (done.status, String::from_utf8_lossy(&done.stderr).to_string())
}

/// As `abprof … | head -1`: exit 0 or 141 (128 + SIGPIPE, the shell's convention), no backtrace
/// and no error line — a reader that stopped reading is not abprof's failure.
fn a_closed_pipe_is_no_error(args: &[&str], lines: usize) {
    use std::os::unix::process::ExitStatusExt;
    let (status, stderr) = into_a_closed_pipe(args, lines);
    let ok = status.code() == Some(0) || status.code() == Some(141) || status.signal() == Some(13);
    assert!(ok, "{args:?} into a closed pipe: {status:?}\n{stderr}");
    for bad in ["panicked", "error", "Broken pipe", "backtrace"] {
        assert!(!stderr.contains(bad), "{args:?} into a closed pipe printed {bad:?}:\n{stderr}");
    }
}

#[test]
fn completions_and_the_man_page_into_a_pipe_closed_after_one_line() {
    // After one line, as `| head -1` (a write may still fit the pipe's buffer); closed before
    // the start, every write finds the reader gone.
    for args in [&["completions", "bash"][..], &["man"]] {
        a_closed_pipe_is_no_error(args, 1);
        a_closed_pipe_is_no_error(args, 0);
    }
}

#[test]
fn a_summary_and_the_monitor_into_a_closed_pipe() {
    let d = tempfile::tempdir().unwrap();
    let study = d.path().join("study");
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/evidence-today-ab/study");
    assert!(Command::new("cp").arg("-r").arg(&src).arg(&study).status().unwrap().success());
    let dir = study.to_str().unwrap();
    for format in ["text", "json", "jsonl", "csv", "md"] {
        a_closed_pipe_is_no_error(&["summarize", dir, "--format", format], 0);
    }
    a_closed_pipe_is_no_error(&["summarize", dir], 1);
    // A live view: a line a second off a terminal; the second write finds the reader gone, and
    // the run ends there as on a stop signal, its files written.
    let sysfs = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sysfs/apu-v3_0");
    let csv = d.path().join("m.csv");
    let args = ["monitor", "--telemetry", "amdgpu-sysfs", "--hz", "50", "--duration", "20s"];
    let started = std::time::Instant::now();
    let sysfs = sysfs.to_str().unwrap();
    a_closed_pipe_is_no_error(&[&args[..], &["--sysfs-root", sysfs, "--csv", csv.to_str().unwrap()]].concat(), 1);
    assert!(started.elapsed().as_secs() < 10, "the monitor ran on after its reader left");
    assert!(std::fs::read_to_string(&csv).unwrap().lines().count() > 1, "the CSV was not written");
}
