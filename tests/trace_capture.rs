//! `abprof trace` choreography with a stand-in tracer that execs the real llama-server: exactly
//! one SIGTERM, the wait, the output found and validated, the process group gone afterwards, and
//! the trace paired with untraced samples at the same output length.
mod common;
use common::*;
use std::os::unix::fs::PermissionsExt;

#[test]
fn one_sigterm_the_wait_the_output_and_nothing_left_running() {
    let _g = serial();
    let tb = testbed();
    let d = tempfile::tempdir().unwrap();
    let tracer = stand_in_tracer(d.path());
    let root = d.path().join("tr");
    let out = abprof()
        .args(["trace", "--root"])
        .arg(&root)
        .arg("--variant")
        .arg(format!("base={}", tb.server.display()))
        .args(["--tokens", "32", "--untraced", "2", "--ignore-eos", "--server-args", COMMON, "--model"])
        .arg(&tb.target)
        .arg("--prompt")
        .arg(calibrated_prompt(300))
        .arg("--tracer-cmd")
        .arg(format!("{} {{out}}", tracer.display()))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let folder = root.join("base");
    let m = read_json(&folder.join("trace.json"));
    assert_eq!(m["trace_file"], "tracer-out/stand_in_kernel_trace.csv");
    assert_eq!(m["output_tokens"], 32);
    assert_eq!(m["prompt_tokens"], 300);
    let w = &m["decode_window"];
    assert!(w["end_ns"].as_u64().unwrap() > w["start_ns"].as_u64().unwrap(), "decode window in CLOCK_BOOTTIME");
    assert_eq!(m["untraced"]["output_tokens"], 32);
    assert_eq!(m["untraced"]["ms_per_token"].as_array().unwrap().len(), 2);

    // One SIGTERM: llama-server says so on a second one and then exits with status 1.
    let traced = read_json(&folder.join("traced/sample.json"));
    assert_eq!(traced["stop"]["exit"], "exited with status 0");
    assert_eq!(traced["stop"]["killed"], false);
    let log = std::fs::read_to_string(folder.join("traced/server.log")).unwrap();
    assert!(log.contains("cleaning up before exit"), "a graceful shutdown");
    assert!(!log.contains("second interrupt"));
    // The pid abprof spawned was the server itself (exec), and nothing of its group is left.
    let pid = traced["server_pid"].as_i64().unwrap() as i32;
    assert!(
        nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pid), None).is_err(),
        "process group {pid} still alive"
    );

    // attribute reads the folder (manifest + trace).
    let a = abprof().arg("attribute").arg(&folder).arg("--json").output().unwrap();
    assert!(a.status.success(), "{}", String::from_utf8_lossy(&a.stderr));
}

#[test]
fn a_tracer_that_writes_nothing_is_a_clear_error() {
    let _g = serial();
    let tb = testbed();
    let d = tempfile::tempdir().unwrap();
    let lazy = d.path().join("lazy-tracer");
    std::fs::write(&lazy, "#!/bin/sh\nshift\nexec \"$@\"\n").unwrap();
    std::fs::set_permissions(&lazy, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = abprof()
        .args(["trace", "--root"])
        .arg(d.path().join("tr"))
        .arg("--variant")
        .arg(format!("base={}", tb.server.display()))
        .args(["--tokens", "8", "--untraced", "1", "--ignore-eos", "--server-args", COMMON, "--model"])
        .arg(&tb.target)
        .arg("--prompt")
        .arg(calibrated_prompt(300))
        .arg("--tracer-cmd")
        .arg(format!("{} {{out}}", lazy.display()))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = stderr_lines(&out);
    assert_eq!(err.len(), 1, "{err:?}");
    assert!(err[0].contains("wrote no trace"), "{}", err[0]);
}

/// The untraced samples that scale a trace run under the study's conditions (hooks, idle gate,
/// telemetry) and are judged by the study's rules: here `expect=` never matches, so every
/// untraced sample is rejected and the trace is refused a scale, naming the rule.
#[test]
fn untraced_samples_run_under_the_study_conditions_and_rules() {
    let _g = serial();
    let tb = testbed();
    let d = tempfile::tempdir().unwrap();
    let tracer = stand_in_tracer(d.path());
    let markers = d.path().join("markers");
    std::fs::create_dir_all(&markers).unwrap();
    let root = d.path().join("tr");
    let hook = |h: &str| format!("sh -c 'echo x >> {}'", markers.join(h).display());
    let out = abprof()
        .args(["trace", "--root"])
        .arg(&root)
        .arg("--variant")
        .arg(format!("base={}|expect=NEVER_IN_A_SERVER_LOG", tb.server.display()))
        .args(["--tokens", "16", "--untraced", "2", "--ignore-eos", "--server-args", COMMON, "--model"])
        .arg(&tb.target)
        .arg("--prompt")
        .arg(calibrated_prompt(300))
        .arg("--tracer-cmd")
        .arg(format!("{} {{out}}", tracer.display()))
        .args(["--before", &hook("before"), "--after", &hook("after")])
        .output()
        .unwrap();
    let err = stderr_lines(&out);
    assert_eq!(out.status.code(), Some(1), "{err:?}");
    assert_eq!(err.len(), 1, "{err:?}");
    assert!(err[0].contains("no accepted untraced sample of base") && err[0].contains("expect"), "{}", err[0]);

    // The trace itself was taken; the untraced samples ran like A/B samples and were judged.
    assert!(root.join("base/trace.json").is_file());
    let summary = read_json(&root.join("summary.json"));
    let rejected = summary["rejected"].as_array().unwrap();
    assert_eq!(rejected.len(), 2, "{rejected:?}");
    assert!(rejected.iter().all(|r| r["reasons"][0]["rule"] == "expect"), "{rejected:?}");
    for n in ["002-base", "003-base"] {
        let s = read_json(&root.join("samples").join(n).join("sample.json"));
        let gate = &s["extra"]["idle_gate"];
        assert!(gate["waited_ms"].as_f64().unwrap() >= 0.0 && gate["consecutive"] == 10, "{s}");
        assert!(s["extra"]["telemetry"]["samples"].as_u64().unwrap() > 0, "{s}");
        assert_eq!(s["extra"]["expect"]["matched"], false);
    }
    let lines = |h: &str| std::fs::read_to_string(markers.join(h)).map_or(0, |s| s.lines().count());
    assert_eq!((lines("before"), lines("after")), (3, 1), "hooks before every sample, the restore once");
}
