//! `abprof pi` with the real Pi coding agent against the real llama-server of the test bed, and
//! the answer checks on real Pi transcripts recorded for the purpose (tests/fixtures/pi/).
mod common;
use abprof::study::pi::{judge_answer, parse_transcript, CodeOutcome, CodeRun};
use common::*;
use std::path::{Path, PathBuf};
use std::time::Duration;

fn fixture(name: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pi").join(name)).unwrap()
}

/// `~/.pi` as it is now: abprof must leave the user's own Pi configuration alone.
fn users_pi_dir() -> Vec<(PathBuf, std::time::SystemTime)> {
    let Some(home) = std::env::var_os("HOME") else { return vec![] };
    let dir = Path::new(&home).join(".pi");
    let mut seen = vec![];
    let mut stack = vec![dir];
    while let Some(d) = stack.pop() {
        if let Ok(meta) = std::fs::metadata(&d) {
            seen.push((d.clone(), meta.modified().unwrap()));
        }
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            stack.push(e.path());
        }
    }
    seen.sort();
    seen
}

#[test]
fn a_pi_run_against_the_test_bed_completes_with_the_real_pi() {
    let tb = testbed();
    let root = tempfile::tempdir().unwrap();
    let markers = tempfile::tempdir().unwrap();
    let before = users_pi_dir();
    let s = tb.server.display();
    let out = abprof()
        .args([
            "pi",
            "--foreign-cpu-max",
            SHARED_HOST,
            "--variant",
            &format!("a={s}"),
            "--variant",
            &format!("b={s}"),
            "--samples",
            "1",
            "--model",
        ])
        .arg(&tb.smollm2)
        .args(["--server-args", "-c 8192 -t 2 -np 1", "--max-tokens", "24", "--timeout", "300", "--json", "--root"])
        .arg(root.path())
        .args(hook_args(markers.path()))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {stderr}"));
    assert!(r["pi_version"].as_str().unwrap().contains("0.73"), "{}", r["pi_version"]);
    assert_eq!(r["mode"], "decode");
    assert!(r["prompt"].as_str().unwrap().contains("stable merge sort"));
    assert_eq!(r["order"], serde_json::json!(["a", "b"]));
    let samples = r["samples"].as_array().unwrap();
    assert_eq!(samples.len(), 2);
    for smp in samples {
        // Pi ran to the end, its JSONL was parsed, and the server saw exactly its one request.
        assert_eq!(smp["pi_exit"], serde_json::json!({"exited": 0}), "{smp}");
        assert_eq!(smp["assistant_messages"], 1, "{smp}");
        assert_eq!(smp["timing_blocks"], 1, "{smp}");
        assert_eq!(smp["tool_calls"], serde_json::json!([]));
        let decoded = smp["server"]["decode_tokens"].as_u64().unwrap();
        assert!(decoded > 0 && decoded <= 24, "{smp}");
        assert_eq!(smp["pi_output_tokens"].as_u64(), Some(decoded), "pi's and the server's counts agree");
        assert_eq!(smp["pi_input_tokens"], smp["server"]["prompt_tokens"]);
        assert!(smp["pi_wall_ms"].as_f64().unwrap() > smp["server"]["decode_ms"].as_f64().unwrap());
        // 24 tokens of SmolLM2 are no working merge sort: the sample must fail on its code.
        assert_eq!(smp["valid"], false, "{smp}");
        let why = smp["failures"].to_string();
        assert!(why.contains("extracted Python") || why.contains("no ```python block"), "{why}");
        let dir = PathBuf::from(smp["evidence"].as_str().unwrap());
        for f in ["pi.jsonl", "pi.stderr", "server.log", "pi-models.json", "pi-settings.json", "pi-sample.json"] {
            assert!(dir.join(f).is_file(), "{f} missing in {}", dir.display());
        }
        let models = read_json(&dir.join("pi-models.json"));
        let base = models["providers"]["abprof"]["baseUrl"].as_str().unwrap().to_string();
        let argv: Vec<String> = serde_json::from_value(smp["server_argv"].clone()).unwrap();
        let port = &argv[argv.iter().position(|a| a == "--port").unwrap() + 1];
        assert_eq!(base, format!("http://127.0.0.1:{port}/v1"), "pi talked to this sample's server");
        assert_eq!(models["providers"]["abprof"]["models"][0]["maxTokens"], 24);
        assert_eq!(read_json(&dir.join("pi-settings.json"))["compaction"]["enabled"], false);
        // The same conditions as an A/B sample: an idle gate (GPU-less here: the server's CPU)
        // between health and pi, and a telemetry series over the run.
        let gate = &smp["idle_gate"];
        assert!(gate["source"].as_str().unwrap().contains("CPU"), "{gate}");
        assert!(gate["waited_ms"].as_f64().unwrap() >= 0.0, "{gate}");
        assert_eq!(gate["consecutive"], 10);
        assert!(smp["telemetry"]["samples"].as_u64().unwrap() > 0, "{}", smp["telemetry"]);
        assert!(dir.join("telemetry.csv").is_file());
    }
    assert_eq!(lines(&markers.path().join("before")), 2, "the before hook runs before every sample");
    assert_eq!((lines(&markers.path().join("after")), lines(&markers.path().join("verify"))), (1, 1));
    assert_eq!(r["restored"], true);
    assert!(r["interrupted_by"].is_null());
    assert_eq!(r["variants"][0]["valid"], 0);
    assert!(r["variants"][0]["median_pi_wall_ms"].is_null(), "no medians from failed samples");
    assert_eq!(out.status.code(), Some(3), "a failed sample is exit 3: {stderr}");
    assert_eq!(read_json(&root.path().join("pi.json"))["samples"].as_array().unwrap().len(), 2);
    assert_eq!(users_pi_dir(), before, "~/.pi was touched");
}

/// The users' stack (#21): the real Pi agent against the qwen35moe MTP twin, MTP off and on. Both
/// runs end (Pi exits 0, one request each); the MTP side drafted and had its drafts accepted (the
/// twin's head always agrees with its trunk). 16 tokens of ` the` are no merge sort: exit 3.
#[test]
fn pi_on_the_mtp_model_with_and_without_draft_mtp() {
    let tb = testbed();
    let root = tempfile::tempdir().unwrap();
    let model = std::env::var("MTP_PREDICTABLE_MODEL")
        .ok()
        .or_else(|| tb.vars.get("MTP_PREDICTABLE_MODEL").cloned())
        .expect("MTP_PREDICTABLE_MODEL");
    let s = tb.server.display();
    let on = format!("on={s}|extra=--spec-type draft-mtp --spec-draft-n-max 3");
    let out = abprof()
        .args([
            "pi",
            "--foreign-cpu-max",
            SHARED_HOST,
            "--variant",
            &format!("off={s}"),
            "--variant",
            &on,
            "--samples",
            "1",
            "--model",
            &model,
        ])
        .args(["--server-args", "-c 8192 -t 2 -np 1", "--max-tokens", "16", "--timeout", "300", "--json", "--root"])
        .arg(root.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {stderr}"));
    let samples = r["samples"].as_array().unwrap();
    assert_eq!(samples.len(), 2, "{r:#}");
    for smp in samples {
        assert_eq!(smp["pi_exit"], serde_json::json!({"exited": 0}), "{smp}");
        assert_eq!(smp["timing_blocks"], 1, "{smp}");
        assert_eq!(smp["server"]["decode_tokens"], 16, "{smp}");
    }
    let of = |label: &str| samples.iter().find(|x| x["label"] == label).unwrap();
    assert!(of("off")["draft"].is_null(), "{}", of("off"));
    let d = &of("on")["draft"];
    assert!(d["generated"].as_u64().unwrap() > 0 && d["rate"].as_f64().unwrap() > 0.9, "{d}");
    assert_eq!(out.status.code(), Some(3), "no valid answer: {stderr}");
}

/// Isolation hooks that append a line to MARKERS/{before,after,verify}.
fn hook_args(markers: &Path) -> Vec<String> {
    ["before", "after", "verify"]
        .iter()
        .flat_map(|h| [format!("--{h}"), format!("sh -c 'echo x >> {}'", markers.join(h).display())])
        .collect()
}

fn lines(path: &Path) -> usize {
    std::fs::read_to_string(path).map_or(0, |s| s.lines().count())
}

/// Processes whose command line mentions `needle` (the evidence folder is in the server's argv).
fn processes_mentioning(needle: &str) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| *pid != std::process::id())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| String::from_utf8_lossy(&c).contains(needle))
        })
        .collect()
}

/// `abprof pi` on variants a and b of the test bed's server, in the background, with hooks.
fn spawn_pi_study(tb: &Testbed, root: &Path, markers: &Path, samples: u32, max_tokens: u32) -> std::process::Child {
    let s = tb.server.display();
    std::process::Command::new(env!("CARGO_BIN_EXE_abprof"))
        .env("XDG_DATA_HOME", data_home())
        .args([
            "pi",
            "--foreign-cpu-max",
            SHARED_HOST,
            "--variant",
            &format!("a={s}"),
            "--variant",
            &format!("b={s}"),
            "--samples",
        ])
        .arg(samples.to_string())
        .arg("--model")
        .arg(&tb.smollm2)
        .args(["--server-args", "-c 8192 -t 2 -np 1", "--max-tokens"])
        .arg(max_tokens.to_string())
        .args(["--timeout", "300", "--json", "--root"])
        .arg(root)
        .args(hook_args(markers))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

fn wait_for(path: &Path, within: Duration, what: &str) {
    let t0 = std::time::Instant::now();
    while !path.exists() {
        assert!(t0.elapsed() < within, "{what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The pids of `parent`'s children whose environment holds `needle` (Pi may retitle its process,
/// so its command line is not a reliable mark; the environment abprof gives it is).
fn children_of(parent: u32, needle: &str) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let ppid = stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse::<u32>().ok());
            ppid == Some(parent)
                && std::fs::read(format!("/proc/{pid}/environ"))
                    .is_ok_and(|c| String::from_utf8_lossy(&c).contains(needle))
        })
        .collect()
}

/// Whether `pid` is alive (not gone, not a zombie).
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|s| s.rsplit_once(')').is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z')))
}

/// Issue #35: `abprof pi` killed with SIGKILL (no chance to clean up) takes the Pi agent with it
/// within 2 s, as it takes its servers: the agent dies with abprof (its death signal) and its
/// process group is ended by a leash.
#[test]
fn sigkill_takes_the_pi_agent_down_within_2_s() {
    let tb = testbed();
    let root = tempfile::tempdir().unwrap();
    let markers = tempfile::tempdir().unwrap();
    let mut child = spawn_pi_study(tb, root.path(), markers.path(), 2, 2000);
    let kill = |child: &std::process::Child| {
        let _ =
            nix::sys::signal::kill(nix::unistd::Pid::from_raw(child.id() as i32), nix::sys::signal::Signal::SIGKILL);
    };
    wait_for(&root.path().join("pi/a-1/pi.jsonl"), Duration::from_secs(120), "pi never started");
    // The agent, once it runs under abprof (its JSONL file is created just before the spawn).
    let t0 = std::time::Instant::now();
    let agent = loop {
        let agent = children_of(child.id(), "PI_CODING_AGENT_DIR=");
        if !agent.is_empty() || t0.elapsed() > Duration::from_secs(30) {
            break agent;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    if agent.len() != 1 {
        // Nothing of this study may outlive the test and load the host of the next one.
        kill(&child);
        let _ = child.wait();
        panic!("one Pi agent runs under abprof: {agent:?}");
    }
    std::thread::sleep(Duration::from_millis(1000));
    kill(&child);
    let _ = child.wait();
    let killed = std::time::Instant::now();
    while alive(agent[0]) {
        assert!(killed.elapsed() < Duration::from_secs(2), "the Pi agent {} outlived abprof by 2 s", agent[0]);
        std::thread::sleep(Duration::from_millis(20));
    }
    eprintln!("the Pi agent was gone {:?} after abprof's SIGKILL", killed.elapsed());
    let t0 = std::time::Instant::now();
    while !processes_mentioning(&root.path().display().to_string()).is_empty() {
        assert!(t0.elapsed() < Duration::from_secs(5), "a server outlived abprof");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn sigint_during_a_pi_run_stops_it_and_restores() {
    let tb = testbed();
    let root = tempfile::tempdir().unwrap();
    let markers = tempfile::tempdir().unwrap();
    let child = spawn_pi_study(tb, root.path(), markers.path(), 2, 2000);
    // Wait until the first sample's pi is running (its JSONL file is created just before spawn).
    wait_for(&root.path().join("pi/a-1/pi.jsonl"), Duration::from_secs(120), "pi never started");
    std::thread::sleep(Duration::from_millis(1500));
    let signalled = std::time::Instant::now();
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(child.id() as i32), nix::sys::signal::Signal::SIGINT).unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(signalled.elapsed() < Duration::from_secs(20), "abprof took {:?} to stop", signalled.elapsed());
    assert!(stderr.contains("interrupted by signal 2"), "{stderr}");
    assert_eq!((lines(&markers.path().join("after")), lines(&markers.path().join("verify"))), (1, 1));
    let r = read_json(&root.path().join("pi.json"));
    assert_eq!(r["interrupted_by"], 2);
    assert_eq!(r["restored"], true);
    assert_eq!(r["samples"].as_array().unwrap().len(), 0, "the sample in flight is discarded");
    assert_eq!(
        processes_mentioning(&root.path().display().to_string()),
        Vec::<u32>::new(),
        "a server was left running"
    );
}

#[test]
fn an_interrupted_pi_study_is_finished_by_resume() {
    let tb = testbed();
    let root = tempfile::tempdir().unwrap();
    let markers = tempfile::tempdir().unwrap();
    let child = spawn_pi_study(tb, root.path(), markers.path(), 1, 400);
    // Stop it while b's pi runs: a is finished and must be kept, b must be measured again.
    wait_for(&root.path().join("pi/b-1/pi.jsonl"), Duration::from_secs(300), "b's pi never started");
    std::thread::sleep(Duration::from_millis(500));
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(child.id() as i32), nix::sys::signal::Signal::SIGINT).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", String::from_utf8_lossy(&out.stderr));
    let first = read_json(&root.path().join("pi.json"));
    assert_eq!(first["samples"].as_array().unwrap().len(), 1, "a was measured, b was in flight");
    let a_wall = first["samples"][0]["pi_wall_ms"].clone();

    let out = abprof().args(["pi", "--resume"]).arg(root.path()).args(["--json"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {stderr}"));
    let samples = r["samples"].as_array().unwrap();
    assert_eq!(samples.len(), 2, "{r}");
    assert_eq!((samples[0]["label"].as_str(), samples[1]["label"].as_str()), (Some("a"), Some("b")));
    assert_eq!(samples[0]["pi_wall_ms"], a_wall, "a's sample is kept, not re-measured");
    assert!(samples[1]["pi_exit"] == serde_json::json!({"exited": 0}), "{}", samples[1]);
    assert!(root.path().join("pi/b-1.attempt-1").is_dir(), "the interrupted attempt is kept aside");
    assert_eq!(r["interrupted_by"], serde_json::Value::Null);
    assert_eq!(r["restored"], true);
    // The resumed run re-ran its hooks: before for b, and the restore once more.
    assert_eq!(lines(&markers.path().join("after")), 2);
    assert_ne!(out.status.code(), Some(130), "{stderr}");
}

#[test]
fn a_pi_run_whose_server_stalls_is_ended_at_the_stall_timeout() {
    use std::os::unix::fs::PermissionsExt;
    let tb = testbed();
    let root = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    // Becomes the real server, leaving its pid behind (its --version and --help probes do not
    // count).
    let pid_file = dir.path().join("server.pid");
    let wrapper = dir.path().join("server");
    let body = format!(
        "#!/bin/sh\ncase \"$1\" in --version|--help) ;; *) echo $$ > {} ;; esac\nexec {} \"$@\"\n",
        pid_file.display(),
        tb.server.display()
    );
    std::fs::write(&wrapper, body).unwrap();
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("abprof"))
        .args([
            "pi",
            "--foreign-cpu-max",
            SHARED_HOST,
            "--variant",
            &format!("a={}", wrapper.display()),
            "--samples",
            "1",
            "--model",
        ])
        .arg(&tb.smollm2)
        .args(["--server-args", "-c 8192 -t 2 -np 1", "--max-tokens", "24", "--timeout", "300"])
        .args(["--stall-timeout", "3", "--json", "--root"])
        .arg(root.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // pi is being started: stop its server (abprof's grandchild), so pi's request never answers.
    wait_for(&root.path().join("pi/a-1/pi.jsonl"), Duration::from_secs(120), "pi never started");
    let pid: i32 = std::fs::read_to_string(&pid_file).unwrap().trim().parse().unwrap();
    let server = nix::unistd::Pid::from_raw(pid);
    nix::sys::signal::kill(server, nix::sys::signal::Signal::SIGSTOP).unwrap();
    let stopped = std::time::Instant::now();
    let out = child.wait_with_output().unwrap();
    let took = stopped.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    // Whatever happened, the stopped server must not outlive the test.
    let _ = nix::sys::signal::kill(server, nix::sys::signal::Signal::SIGCONT);
    eprintln!("pi stalled: abprof done {:.1} s after the server stopped", took.as_secs_f64());
    assert_eq!(out.status.code(), Some(3), "the sample failed: {stderr}");
    assert!(took < Duration::from_secs(20), "{took:?}: the stall timeout did not end pi");
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {stderr}"));
    let smp = &r["samples"][0];
    assert_eq!(smp["pi_exit"], serde_json::json!({"stalled": 3}), "{smp}");
    assert!(smp["failures"].to_string().contains("wrote nothing for 3 s"), "{smp}");
    assert!(std::fs::metadata(root.path().join("pi/a-1/pi.jsonl")).unwrap().len() > 0, "pi's partial output is kept");
    assert_eq!(processes_mentioning(&root.path().display().to_string()), Vec::<u32>::new(), "left running");
}

fn code_run(evidence: &Path) -> Option<CodeRun<'static>> {
    let (code, output) = (evidence.join("answer.py"), evidence.join("answer.out"));
    Some(CodeRun { python: Path::new("python3"), timeout: Duration::from_secs(30), code, output })
}

#[test]
fn a_recorded_decode_run_is_parsed_and_its_cut_off_code_fails() {
    // The merge-sort prompt through the real pi, maxTokens 24: the answer stops mid-function.
    let t = parse_transcript(&fixture("decode-merge-sort-24.jsonl")).unwrap();
    assert_eq!(t.assistant_messages, 1);
    assert_eq!(t.stop_reason.as_deref(), Some("length"));
    assert_eq!(t.output_tokens, Some(24));
    assert!(t.tool_calls.is_empty());
    assert!(t.text.contains("```python\ndef merge_sort(arr):"), "{}", t.text);
    let ev = tempfile::tempdir().unwrap();
    let v = judge_answer(&fixture("decode-merge-sort-24.jsonl"), code_run(ev.path()));
    let code = v.code.unwrap();
    assert!(code.unterminated && !code.passed());
    assert_eq!(v.failures.len(), 1, "{:?}", v.failures);
    assert!(v.failures[0].contains("IndentationError"), "{:?}", v.failures);
}

#[test]
fn a_recorded_valid_answer_passes_and_the_same_answer_broken_fails() {
    let jsonl = fixture("square-valid.jsonl");
    let ev = tempfile::tempdir().unwrap();
    let ok = judge_answer(&jsonl, code_run(ev.path()));
    assert!(ok.failures.is_empty(), "{:?}", ok.failures);
    assert_eq!(ok.transcript.unwrap().stop_reason.as_deref(), Some("stop"));
    assert_eq!(ok.code.unwrap().blocks, 1);
    assert_eq!(std::fs::read_to_string(ev.path().join("answer.out")).unwrap(), "64\n");

    // The same transcript with its program deliberately broken: a call left unclosed.
    let broken = jsonl.replace("print(square_4x4(4))", "print(square_4x4(4)");
    assert_ne!(broken, jsonl);
    let bad = judge_answer(&broken, code_run(ev.path()));
    assert!(matches!(bad.code.unwrap().outcome, CodeOutcome::Failed { .. }));
    assert_eq!(bad.failures.len(), 1);
    assert!(bad.failures[0].contains("SyntaxError"), "{:?}", bad.failures);

    // And with a failing test in place of the print: it runs, and fails.
    let wrong = jsonl.replace("print(square_4x4(4))", "assert square_4x4(4) == 16");
    let bad = judge_answer(&wrong, code_run(ev.path()));
    assert!(bad.failures.iter().any(|f| f.contains("AssertionError")), "{:?}", bad.failures);

    // A tool call in the answer fails the sample even when its code is fine.
    let tool = jsonl.replacen(
        r#""content":[{"type":"text""#,
        r#""content":[{"type":"toolCall","id":"call-1","name":"bash","arguments":{"command":"ls"}},{"type":"text""#,
        usize::MAX,
    );
    let bad = judge_answer(&tool, code_run(ev.path()));
    assert!(bad.failures.iter().any(|f| f.contains("called tools (bash)")), "{:?}", bad.failures);
}

#[test]
fn a_hook_that_cannot_be_split_is_one_clear_line() {
    let tb = testbed();
    let root = tempfile::tempdir().unwrap();
    let out = abprof()
        .args(["pi", "--variant", &format!("a={}", tb.server.display()), "--before", "\"unclosed", "--model"])
        .arg(&tb.smollm2)
        .arg("--root")
        .arg(root.path())
        .output()
        .unwrap();
    // Bad input of the study: exit 2, as every study-file error (the fault matrix's rule).
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    let errors: Vec<String> = String::from_utf8_lossy(&out.stderr).lines().map(String::from).collect();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].contains("cannot be split"), "{}", errors[0]);
}

#[test]
fn a_missing_pi_is_one_clear_line() {
    let tb = testbed();
    let out = abprof()
        .args(["pi", "--variant", &format!("a={}", tb.server.display()), "--pi-bin", "/no/such/pi", "--model"])
        .arg(&tb.smollm2)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let errors: Vec<_> = stderr_lines(&out).into_iter().filter(|l| l.starts_with("abprof: error:")).collect();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].contains("npm install -g @mariozechner/pi-coding-agent@0.73.1"), "{}", errors[0]);
}
