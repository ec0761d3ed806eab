//! `abprof parse-log --json` on real logs from public threads (their sources are in
//! tests/fixtures/llama-server-wild/README.md): every number is the one printed in that log.
mod common;

use common::{abprof, stderr_lines};
use serde_json::{json, Value};
use std::path::PathBuf;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/llama-server-wild").join(name)
}

fn parse_log(path: &std::path::Path) -> Value {
    let out = abprof().args(["parse-log", "--json"]).arg(path).output().unwrap();
    assert!(out.status.success(), "{:?}", stderr_lines(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The one `abprof: error:` line of a failed command.
fn one_error_line(cmd: &mut assert_cmd::Command) -> String {
    let out = cmd.output().unwrap();
    assert!(!out.status.success());
    let lines = stderr_lines(&out);
    let errors: Vec<_> = lines.iter().filter(|l| l.starts_with("abprof: error:")).cloned().collect();
    assert_eq!(errors.len(), 1, "{lines:?}");
    errors[0].clone()
}

/// slot, task, prompt (tokens, ms, tok/s), eval (tokens, ms, tok/s), total ms, draft.
fn printed(b: &Value) -> Value {
    json!({
        "slot": b["slot"], "task": b["task"],
        "prompt": [b["prompt_tokens"], b["prompt_ms"], b["prompt_tps"]],
        "eval": [b["eval_tokens"], b["eval_ms"], b["eval_tps"]],
        "total_ms": b["total_ms"],
        "draft": b["draft"],
    })
}

#[test]
fn every_wild_log_parses_to_its_printed_numbers() {
    let cases = [
        (
            "server-text-2024-08.log",
            json!({"slot": 0, "task": 0, "prompt": [12, 15.62, 768.49], "eval": [783, 3194.22, 245.13],
                   "total_ms": 3209.84, "draft": null}),
        ),
        (
            "server-json-2024-05.log",
            json!({"slot": 0, "task": 19, "prompt": [27, 2684.39, 10.06], "eval": [25, 3559.27, 7.02],
                   "total_ms": 6243.66, "draft": null}),
        ),
        (
            "one-call-block.log",
            json!({"slot": 0, "task": 124, "prompt": [1360, 5093.47, 267.01], "eval": [10, 319.58, 31.29],
                   "total_ms": 5413.05, "draft": null}),
        ),
        (
            "router-one-call-2026.log",
            json!({"slot": 0, "task": 388, "prompt": [27, 789.03, 34.22], "eval": [192, 16112.50, 11.92],
                   "total_ms": 16901.53, "draft": null}),
        ),
        (
            "mean-acceptance-length-2026-06.log",
            json!({"slot": 1, "task": 0, "prompt": [20, 300.11, 66.64], "eval": [256, 2296.72, 111.46],
                   "total_ms": 2596.83,
                   "draft": {"rate": 0.64479, "accepted": 167, "generated": 259, "mean_len": 2.92,
                             "per_position": [0.805, 0.632, 0.483]}}),
        ),
        (
            "mean-len-2026.log",
            json!({"slot": 0, "task": 160, "prompt": [4, 252.01, 15.87], "eval": [96, 5729.20, 16.58],
                   "total_ms": 5981.21,
                   "draft": {"rate": 0.46218, "accepted": 55, "generated": 119, "mean_len": 2.38}}),
        ),
    ];
    for (file, want) in cases {
        let b = parse_log(&fixture(file));
        assert_eq!(printed(&b), want, "{file}");
        // The derived rates are numbers, never NaN (null in JSON).
        assert!(b["decode_tps_n_minus_1"].is_f64() && b["decode_ms_per_token"].is_f64(), "{file}: {b}");
    }
}

#[test]
fn a_llama_cli_print_is_refused_in_one_line() {
    let line = one_error_line(abprof().arg("parse-log").arg(fixture("llama-cli-print-2024-09.log")));
    assert!(line.contains("`llama_print_timings` summary"), "{line}");
    assert!(line.contains("not a llama-server request timing block"), "{line}");
}

#[test]
fn a_zero_token_block_is_refused_and_invalid_utf8_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let log = std::fs::read_to_string(fixture("mean-len-2026.log")).unwrap();
    let zero = dir.path().join("zero.log");
    std::fs::write(&zero, log.replace("/    96 tokens", "/     0 tokens")).unwrap();
    let line = one_error_line(abprof().arg("parse-log").arg(&zero));
    assert!(line.contains("reports 0 generated tokens") && !line.contains("NaN"), "{line}");

    let bad = dir.path().join("bad-utf8.log");
    let mut bytes = b"0.00.001.000 I main: \xff\xfe a stray byte\n".to_vec();
    bytes.extend_from_slice(log.as_bytes());
    std::fs::write(&bad, bytes).unwrap();
    assert_eq!(parse_log(&bad)["eval_tokens"], 96);
}

/// Issue #35: a block with a negative eval time is named as such (it was "no request timing
/// block"), and a path that never ends (`/dev/zero`) is refused after a bound, in one line.
#[test]
fn a_negative_time_and_an_endless_file_are_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let log = std::fs::read_to_string(fixture("mean-len-2026.log")).unwrap();
    let at = log.find("eval time =").expect("an eval line") + "eval time =".len();
    let ms = log[at..].trim_start();
    let negative = dir.path().join("negative.log");
    std::fs::write(&negative, format!("{}-{ms}", &log[..log.len() - ms.len()])).unwrap();
    let line = one_error_line(abprof().arg("parse-log").arg(&negative));
    assert!(line.contains("negative") && line.contains("damaged or was edited"), "{line}");
    let line = one_error_line(abprof().arg("parse-log").arg("/dev/zero"));
    assert!(line.contains("more than 256 MiB"), "{line}");
}

#[test]
fn two_router_requests_name_their_tasks() {
    let dir = tempfile::tempdir().unwrap();
    let log = std::fs::read_to_string(fixture("router-one-call-2026.log")).unwrap();
    let two = dir.path().join("two.log");
    std::fs::write(&two, format!("{log}{log}")).unwrap();
    let line = one_error_line(abprof().arg("parse-log").arg(&two));
    assert!(line.contains("2 request timing blocks") && line.contains("(tasks 388, 388)"), "{line}");
}

#[test]
fn a_rocprof_v1_stats_file_is_named() {
    let line = one_error_line(abprof().arg("attribute").arg(fixture("rocprof-v1-results.stats.csv")));
    assert!(line.contains("a rocprof (v1) --stats summary") && line.contains("rocprofv3 --kernel-trace"), "{line}");
}
