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
    let out = trace_cmd(&root, &tracer, &[format!("base={}", tb.server.display())], 32, 2).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let folder = root.join("base");
    let m = read_json(&folder.join("trace.json"));
    assert_eq!(m["trace_file"], "tracer-out/stand_in_kernel_trace.csv");
    assert_eq!(m["output_tokens"], 32);
    assert_eq!(m["prompt_tokens"], 300);
    // The floor of a complete decode (docs/methodology.md §10): the test bed's 4 layers, from the
    // traced server's own log; a GPU-less host has no runtime to name.
    assert_eq!(m["model_layers"], 4, "{m}");
    assert!(m.get("runtime").is_none(), "{m}");
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

/// `--attach` (docs/methodology.md §10 "attached traces"): the server starts unwrapped with
/// ROCP_TOOL_ATTACH=1, the tracer attaches to that pid once it is loaded, detaches after the
/// request (before the stop) and its trace is found and paired as the classic launch's is.
#[test]
fn an_attached_tracer_traces_the_loaded_server_and_detaches_before_the_stop() {
    let _g = serial();
    let tb = testbed();
    let d = tempfile::tempdir().unwrap();
    let tracer = stand_in_attach_tracer(d.path());
    let root = d.path().join("tr");
    let mut args = trace_args(&root, &tracer, &[format!("base={}", tb.server.display())], 32, 2);
    let at = args.iter().position(|a| a == "--tracer-cmd").unwrap();
    args.truncate(at);
    args.extend(["--tracer", "rocprofv3", "--tracer-bin"].map(String::from));
    args.extend([tracer.display().to_string(), "--attach".into()]);
    let out = abprof().args(&args).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let folder = root.join("base");
    let m = read_json(&folder.join("trace.json"));
    assert_eq!(m["trace_file"], "tracer-out/stand_in_kernel_trace.csv", "{m}");
    assert_eq!(m["untraced"]["ms_per_token"].as_array().unwrap().len(), 2);
    let traced = read_json(&folder.join("traced/sample.json"));
    let pid = traced["server_pid"].as_i64().unwrap();
    let log = std::fs::read_to_string(folder.join("tracer-out/attach.log")).unwrap();
    assert!(log.contains(&format!("attached to {pid}")) && log.contains(&format!("detached from {pid}")), "{log}");
    let env = std::fs::read_to_string(folder.join("tracer-out/server-env.txt")).unwrap();
    assert_eq!(env.trim(), "ROCP_TOOL_ATTACH=1");
    // The server itself was started (no tracer wrapping it) and stopped like an untraced one.
    assert_eq!(traced["stop"]["exit"], "exited with status 0", "{traced:#}");
    let study = std::fs::read_to_string(root.join("study.toml")).unwrap();
    assert!(study.contains("attach = true"), "{study}");
    let a = abprof().arg("attribute").arg(&folder).arg("--json").output().unwrap();
    assert!(a.status.success(), "{}", String::from_utf8_lossy(&a.stderr));
    // nsys has no attach mode: one line, exit 2, nothing created.
    let mut nsys = trace_args(&d.path().join("nsys"), &tracer, &[format!("base={}", tb.server.display())], 8, 1);
    nsys.truncate(at);
    nsys.extend(["--tracer", "nsys", "--tracer-bin", "/bin/true", "--attach"].map(String::from));
    let out = abprof().args(&nsys).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--attach is rocprofv3's"));
    assert!(!d.path().join("nsys").exists());
}

#[test]
fn a_tracer_that_writes_nothing_is_a_clear_error() {
    let _g = serial();
    let tb = testbed();
    let d = tempfile::tempdir().unwrap();
    let lazy = d.path().join("lazy-tracer");
    std::fs::write(&lazy, "#!/bin/sh\nshift\nexec \"$@\"\n").unwrap();
    std::fs::set_permissions(&lazy, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out =
        trace_cmd(&d.path().join("tr"), &lazy, &[format!("base={}", tb.server.display())], 8, 1).output().unwrap();
    assert!(!out.status.success());
    let err = error_lines(&out);
    assert_eq!(err.len(), 1, "{err:?}");
    assert!(err[0].contains("wrote no trace"), "{}", err[0]);
}

/// Another workload that begins during the first untraced sample's request (real busy loops,
/// this test's own children; one already running is waited out by the idle gate, §9.1) spoils
/// its block `other-workload`; the block is retaken after the traced one, so the trace is still
/// scaled by the planned two untraced samples (docs/methodology.md §7.19).
#[test]
fn an_untraced_block_spoiled_by_another_workload_is_retaken() {
    let _g = serial();
    let tb = testbed();
    let d = tempfile::tempdir().unwrap();
    let tracer = stand_in_tracer(d.path());
    let root = d.path().join("tr");
    // Long enough a request for the loops, started once it runs, to cover most of it.
    let mut args = trace_args(&root, &tracer, &[format!("base={}", tb.server.display())], 128, 2);
    set_foreign_limit(&mut args, foreign_limit());
    let order = root.join("order.jsonl");
    let lines = || std::fs::read_to_string(&order).map_or(0, |t| t.lines().count());
    let mut child = spawn_abprof(&args);
    let t0 = std::time::Instant::now();
    let wait = |n: usize, child: &mut std::process::Child| {
        while lines() < n && child.try_wait().unwrap().is_none() {
            assert!(t0.elapsed().as_secs() < 300, "{n} sample(s) not taken within 300 s");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    };
    wait(1, &mut child);
    server_mid_request(&root, 2);
    // Loops crowding every core (one a core took from 98% of a core down to under a 50% limit
    // beside the server's threads, a CI run), over a limit just above the host's background.
    let busy = BusyLoops::crowding();
    wait(2, &mut child);
    drop(busy);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));

    let summary = read_json(&root.join("summary.json"));
    let rejected = summary["rejected"].as_array().unwrap();
    assert!(rejected.iter().any(|r| r["reasons"][0]["rule"] == "other-workload"), "{rejected:?}");
    let plan = read_json(&root.join("plan.json"));
    let taken = plan["retakes"].as_u64().unwrap_or(0);
    assert!(taken >= 1, "{plan}");
    assert_eq!(summary["retakes"]["taken"], taken, "{summary}");
    assert_eq!(plan["traced"], serde_json::json!([0]), "the traced sample stays first");
    assert_eq!(lines() as u64, 3 + taken, "every attempt is in order.jsonl");
    let m = read_json(&root.join("base/trace.json"));
    assert_eq!(m["untraced"]["ms_per_token"].as_array().unwrap().len(), 2, "{m}");
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
    let out = trace_cmd(&root, &tracer, &[format!("base={}|expect=NEVER_IN_A_SERVER_LOG", tb.server.display())], 16, 2)
        .args(["--before", &hook("before"), "--after", &hook("after")])
        .output()
        .unwrap();
    let err = error_lines(&out);
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

/// `--traced 2`: two traced samples per variant, interleaved with the untraced ones (a traced
/// block first, the second after the first untraced block), each recorded in the manifest with
/// its own trace; the tracer's overhead is printed, and each category's delta says 2 traced
/// samples are too few for a verdict, in the capture and in `compare-traces` alike.
#[test]
fn two_traced_samples_per_variant_give_the_tracers_overhead_and_too_few_for_a_category_verdict() {
    let _g = serial();
    let tb = testbed();
    let d = tempfile::tempdir().unwrap();
    let tracer = stand_in_tracer(d.path());
    let root = d.path().join("tr");
    let variants = [format!("f16={}|kv=f16", tb.server.display()), format!("q8={}|kv=q8_0", tb.server.display())];
    let out = trace_cmd(&root, &tracer, &variants, 16, 2).args(["--traced", "2"]).output().unwrap();
    // This test is not about the other-workload rule, and other builds share this host: where
    // they rejected the untraced samples, the study file's own knob lifts the limit and the
    // finished capture is summarized again.
    let out = if out.status.success() {
        out
    } else {
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        assert!(err.contains("other-workload"), "{err}");
        let path = root.join("study.toml");
        let mut file: toml::Table = std::fs::read_to_string(&path).unwrap().parse().unwrap();
        let idle = file.entry("idle").or_insert(toml::Value::Table(Default::default()));
        idle.as_table_mut().unwrap().insert("foreign_cpu_max_pct".into(), toml::Value::Float(1e4));
        std::fs::write(&path, toml::to_string(&file).unwrap()).unwrap();
        abprof().args(["trace", "--resume"]).arg(&root).output().unwrap()
    };
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(out.status.success(), "{}\n{text}", String::from_utf8_lossy(&out.stderr));

    // The order: a traced block, an untraced one, the second traced block (reversed), the rest.
    let plan = read_json(&root.join("plan.json"));
    let traced: Vec<u64> = plan["traced"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).collect();
    assert_eq!(traced, vec![0, 1, 4, 5]);
    for label in ["f16", "q8"] {
        let folder = root.join(label);
        let m = read_json(&folder.join("trace.json"));
        assert_eq!(m["trace_file"], "tracer-out/stand_in_kernel_trace.csv");
        let more = m["more_traces"].as_array().unwrap();
        assert_eq!(more.len(), 1, "{m}");
        assert_eq!(more[0]["trace_file"], "tracer-out-2/stand_in_kernel_trace.csv");
        assert!(
            more[0]["decode_window"]["end_ns"].as_u64().unwrap()
                > more[0]["decode_window"]["start_ns"].as_u64().unwrap()
        );
        for run in [&m, &more[0]] {
            assert!(run["traced_ms_per_token"].as_f64().unwrap() > 0.0, "{run}");
        }
        assert!(folder.join("traced/sample.json").is_file() && folder.join("traced-2/sample.json").is_file());
    }
    // The traced samples are never medians: 2 untraced samples a side, and a block a rule about
    // the host spoiled (another build on this host) is retaken (docs/methodology.md §7.19).
    let summary = read_json(&root.join("summary.json"));
    let retaken = plan["retakes"].as_u64().unwrap_or(0);
    for v in summary["variants"].as_array().unwrap() {
        assert_eq!(v["planned"], 2 + retaken, "{summary}");
        let m = read_json(&root.join(v["label"].as_str().unwrap()).join("trace.json"));
        assert_eq!(m["untraced"]["ms_per_token"].as_array().unwrap().len() as u64, v["accepted"].as_u64().unwrap());
        assert!(v["accepted"].as_u64().unwrap() >= 2, "{summary}");
    }

    // The capture's own output: intervals, verdicts and the tracer's overhead.
    assert!(text.contains("95% CI") && text.contains("tracer overhead"), "{text}");
    assert!(text.contains("2 traced samples (medians)"), "{text}");

    let cmp = abprof()
        .args(["compare-traces", "--json", "--variant"])
        .arg(format!("f16={}", root.join("f16").display()))
        .arg("--variant")
        .arg(format!("q8={}", root.join("q8").display()))
        .output()
        .unwrap();
    assert!(cmp.status.success(), "{}", String::from_utf8_lossy(&cmp.stderr));
    let c: serde_json::Value = serde_json::from_slice(&cmp.stdout).unwrap();
    assert_eq!(c["status"], "compared");
    assert_eq!(c["variants"][1]["traced_samples"], 2);
    assert!(c["variants"][1]["tracer_overhead_pct"].as_f64().unwrap().is_finite(), "{c}");
    let deltas = c["category_deltas"].as_array().unwrap();
    assert!(!deltas.is_empty());
    // A category verdict takes 3 traced samples a side (docs/methodology.md §10.1, issue 20): with
    // 2 every delta says so and has no interval (tests/trace_cli.rs checks the intervals of 3).
    for d in deltas {
        assert!(d["ci"][1].is_null(), "{d}");
        assert_eq!(d["verdict"][1], "too-few-samples", "{d}");
        assert!(d["ci"][0].is_null() && d["verdict"][0].is_null(), "{d}");
    }
    assert_eq!(c["variants"][1]["measured_samples"].as_array().unwrap().len(), 2);
    assert_eq!(c["categories"][0]["shares"][1].as_array().unwrap().len(), 2);
}
