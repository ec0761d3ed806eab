//! `abprof calibrate`, `bench` and `parse-log` against the real llama-server of the test bed.
mod common;
use common::*;

fn bench(prompt: &std::path::Path, model: &std::path::Path, server_args: &str, tokens: u32) -> assert_cmd::Command {
    bench_with(&testbed().server, prompt, model, server_args, tokens)
}

fn bench_with(
    server: &std::path::Path,
    prompt: &std::path::Path,
    model: &std::path::Path,
    server_args: &str,
    tokens: u32,
) -> assert_cmd::Command {
    let mut c = abprof();
    c.args(["bench", "--server-bin"])
        .arg(server)
        .arg("--model")
        .arg(model)
        .args(["--server-args", server_args, "--prompt"])
        .arg(prompt)
        .args(["--tokens", &tokens.to_string(), "--ignore-eos", "--json"]);
    c
}

#[test]
fn calibration_reaches_the_exact_count_and_a_sample_honours_it() {
    let prompt = calibrated_prompt(1000);
    let cal = read_json(&prompt.with_extension("txt.calibration.json"));
    assert_eq!(cal["prompt_tokens"], 1000);
    let dir = tempfile::tempdir().unwrap();
    let out = bench(&prompt, &testbed().target, COMMON, 128).arg("--evidence").arg(dir.path()).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let s: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(s["usage"]["prompt_tokens"], 1000);
    assert_eq!(s["usage"]["completion_tokens"], 128);
    assert_eq!(s["finish_reason"], "length");
    assert_eq!(s["timing_blocks"], 1);
    assert_eq!(s["server"]["decode_tokens"], 128);
    assert_eq!(s["server"]["prompt_tokens"], 1000);
    assert!(s["stream"]["strict_tps"].as_f64().unwrap() > 0.0);
    assert!(s["stream"]["ttft_ms"].as_f64().unwrap() > 0.0);
    // The evidence keeps the log, the request and the raw SSE.
    for f in ["server.log", "request.json", "response.sse", "sample.json"] {
        assert!(dir.path().join(f).is_file(), "{f} missing");
    }
    let req = read_json(&dir.path().join("request.json"));
    assert_eq!((req["temperature"].as_f64(), req["seed"].as_u64()), (Some(0.0), Some(42)));
    assert_eq!(req["cache_prompt"], false);
    assert_eq!(req["ignore_eos"], true);
}

#[test]
fn speculative_run_reports_draft_acceptance() {
    let tb = testbed();
    let prompt = calibrated_prompt(300);
    let args = format!("{COMMON} -md {} --spec-type draft-simple --spec-draft-n-max 4", tb.draft.display());
    let out = bench(&prompt, &tb.target, &args, 64).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let s: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let d = &s["draft"];
    assert!(d["generated"].as_u64().unwrap() > 0, "{s}");
    assert!(d["accepted"].as_u64().unwrap() > 0, "the shared-weight draft should be accepted sometimes");
    assert_eq!(s["usage"]["completion_tokens"], 64);
}

fn one_line_error(cmd: &mut assert_cmd::Command, needle: &str) {
    let out = cmd.output().unwrap();
    assert!(!out.status.success());
    let lines = stderr_lines(&out);
    let errors: Vec<_> = lines.iter().filter(|l| l.starts_with("abprof: error:")).collect();
    assert_eq!(errors.len(), 1, "{lines:?}");
    assert!(errors[0].contains(needle), "{:?} lacks {needle:?}", errors[0]);
}

#[test]
fn bad_inputs_give_one_clear_line() {
    let tb = testbed();
    let prompt = calibrated_prompt(300);
    let dir = tempfile::tempdir().unwrap();
    let missing = std::path::Path::new("/no/such/llama-server");
    one_line_error(&mut bench_with(missing, &prompt, &tb.target, COMMON, 8), "does not exist");

    let not_exec = dir.path().join("llama-server");
    std::fs::write(&not_exec, "plain file").unwrap();
    one_line_error(&mut bench_with(&not_exec, &prompt, &tb.target, COMMON, 8), "not an executable");

    one_line_error(
        &mut bench(&prompt, std::path::Path::new("/no/such/model.gguf"), COMMON, 8),
        "model /no/such/model.gguf does not exist",
    );

    let corrupt = dir.path().join("corrupt.gguf");
    let bytes = std::fs::read(&tb.target).unwrap();
    std::fs::write(&corrupt, &bytes[..1_000_000]).unwrap();
    one_line_error(&mut bench(&prompt, &corrupt, COMMON, 8), "while loading: `gguf_init_from_reader");

    let held = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
    let port = held.local_addr().unwrap().port().to_string();
    one_line_error(bench(&prompt, &tb.target, COMMON, 8).args(["--port", &port]), "already in use");

    let mut own = bench(&prompt, &tb.target, "--port 9", 8);
    one_line_error(&mut own, "abprof owns");
}

#[test]
fn parse_log_wants_exactly_one_block() {
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/llama-server");
    let ok = abprof().args(["parse-log", "--json"]).arg(fixtures.join("target-300x32.log")).output().unwrap();
    assert!(ok.status.success());
    let b: serde_json::Value = serde_json::from_slice(&ok.stdout).unwrap();
    assert_eq!((b["prompt_tokens"].as_u64(), b["eval_tokens"].as_u64()), (Some(300), Some(32)));

    let dir = tempfile::tempdir().unwrap();
    let two = dir.path().join("two.log");
    let one = std::fs::read_to_string(fixtures.join("target-300x32.log")).unwrap();
    std::fs::write(&two, format!("{one}{one}")).unwrap();
    one_line_error(abprof().arg("parse-log").arg(&two), "2 request timing blocks");
    one_line_error(abprof().arg("parse-log").arg(fixtures.join("corrupt-gguf.log")), "no request timing block");
}

#[test]
fn calibration_refuses_a_prompt_the_context_cannot_hold_before_tokenizing() {
    let dir = tempfile::tempdir().unwrap();
    let t0 = std::time::Instant::now();
    let out = abprof()
        .args(["calibrate", "--server-bin"])
        .arg(&testbed().server)
        .arg("--model")
        .arg(&testbed().target)
        .args(["--server-args", COMMON, "--prompt-tokens", "100000", "--out"])
        .arg(dir.path().join("p.txt"))
        .output()
        .unwrap();
    let took = t0.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    eprintln!("refused after {:.2} s: {stderr}", took.as_secs_f64());
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let lines = stderr_lines(&out);
    assert_eq!(lines.len(), 1, "{stderr}");
    assert!(lines[0].contains("context of 4096 tokens") && lines[0].contains("raise -c"), "{stderr}");
    // Model load (under a second here) plus one /props request, not 50 s of tokenizing.
    assert!(took < std::time::Duration::from_secs(20), "{took:?}");
    assert!(!dir.path().join("p.txt").exists());
}
