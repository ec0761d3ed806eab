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
