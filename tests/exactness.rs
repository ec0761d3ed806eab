//! `abprof exactness` against the real llama-server of the test bed, with the real SmolLM2-135M
//! (its logits mean something, unlike the random target's).
mod common;
use common::*;
use std::path::{Path, PathBuf};

/// A 300-token prompt calibrated for SmolLM2 (its tokenizer is not the random target's).
fn smollm2_prompt() -> PathBuf {
    calibrated_prompt_for(&testbed().smollm2, "smollm2", 300)
}

fn exactness(a: &str, b: &str, root: &Path, prompt: &Path) -> std::process::Output {
    let tb = testbed();
    abprof()
        .arg("exactness")
        .args(["--variant", a, "--variant", b, "--model"])
        .arg(&tb.smollm2)
        .args(["--server-args", COMMON, "--tokens", "32", "--ignore-eos", "--prompt"])
        .arg(prompt)
        .arg("--root")
        .arg(root)
        .output()
        .unwrap()
}

fn server() -> String {
    testbed().server.display().to_string()
}

#[test]
fn a_variant_against_itself_is_exact() {
    let root = tempfile::tempdir().unwrap();
    let s = server();
    let out = exactness(&format!("a={s}"), &format!("b={s}"), root.path(), &smollm2_prompt());
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}{}", String::from_utf8_lossy(&out.stderr));
    let verdict = text.lines().find(|l| l.starts_with("verdict ")).map(|l| l.split_whitespace().collect::<Vec<_>>());
    assert_eq!(verdict, Some(vec!["verdict", "exact"]), "{text}");
    let r = read_json(&root.path().join("exactness.json"));
    assert_eq!(r["verdict"]["kind"], "exact");
    assert_eq!(r["gate"], "exact");
    assert_eq!(r["compared_positions"], 32);
    assert_eq!(r["cosine"]["overall"], 1.0);
    // The yardstick of a same-weights change: every top-1 the same, no divergence.
    let y = &r["yardstick"];
    assert_eq!(
        (y["class"].as_str(), y["same_top1_pct"].as_f64(), y["kl_max"].as_f64()),
        (Some("same-weights"), Some(100.0), Some(0.0))
    );
    assert_eq!(y["pass"], true);
    assert!(text.contains("same top-1 100.0%"), "{text}");
    assert_eq!(r["request"]["temperature"], 0.0);
    assert_eq!(r["request"]["seed"], 42);
    assert_eq!(r["request"]["cache_prompt"], false);
    assert_eq!(r["request"]["top_logprobs"], 5);
    for side in ["a", "b"] {
        let dir = root.path().join("exactness").join(side);
        let doc = read_json(&dir.join("tokens.json"));
        assert_eq!(doc["schema_version"], 3, "a list document stands under items (docs/methodology.md §13)");
        let tokens = &doc["items"];
        assert_eq!(tokens.as_array().unwrap().len(), 32);
        assert_eq!(tokens[0]["top"].as_array().unwrap().len(), 5);
        assert_eq!(read_json(&dir.join("sample.json"))["timing_blocks"], 1);
        let req = read_json(&dir.join("request.json"));
        assert_eq!((req["logprobs"].as_bool(), req["top_logprobs"].as_u64()), (Some(true), Some(5)));
    }
}

/// f16 against q8_0 KV (quantized V needs flash attention on this build, so both get `-fa on`):
/// on the test bed the near-tie at some position flips, and the report must say where and show
/// both continuations; whatever happens, it must not claim exactness.
#[test]
fn kv_f16_against_q8_0_gets_an_honest_verdict() {
    let root = tempfile::tempdir().unwrap();
    let s = server();
    let out = exactness(
        &format!("f16={s}|extra=-fa on"),
        &format!("q8={s}|kv=q8_0|extra=-fa on"),
        root.path(),
        &smollm2_prompt(),
    );
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let r = read_json(&root.path().join("exactness.json"));
    assert_ne!(r["verdict"]["kind"], "exact", "{text}");
    let want_code = match r["gate"].as_str().unwrap() {
        "cosine_pass" => 3,
        "fail" => 4,
        g => panic!("gate {g} for a non-exact verdict"),
    };
    assert_eq!(out.status.code(), Some(want_code), "{text}");
    let v = &r["verdict"];
    match v["kind"].as_str().unwrap() {
        "diverged" => {
            let at = v["at"].as_u64().unwrap();
            assert!(text.contains(&format!("diverged at token {at}")), "{text}");
            let first = |side: &str| v[side]["tokens"][0]["id"].as_u64().unwrap();
            assert_ne!(first("baseline"), first("candidate"), "the shown continuations start at the divergence");
            assert_eq!(v["baseline"]["tokens"][0]["index"], at);
            assert_eq!(v["baseline"]["top_at"].as_array().unwrap().len(), 5);
            assert_eq!(r["compared_positions"], at + 1);
            // Both continuations are printed, each under its label.
            assert!(text.lines().any(|l| l.trim_start().starts_with("f16 ")), "{text}");
            assert!(text.lines().any(|l| l.trim_start().starts_with("q8 ")), "{text}");
        }
        "equal_tokens" => assert!(v["max_abs_delta"].as_f64().unwrap() > 0.0, "{text}"),
        k => panic!("verdict {k}"),
    }
    let per_position = r["cosine"]["per_position"].as_array().unwrap();
    assert_eq!(per_position.len() as u64, r["compared_positions"].as_u64().unwrap());
    assert!(r["cosine"]["fill"].as_str().unwrap().contains("k-th"));
    // kv=q8_0 against the default f16: the 8-bit KV class, a KL per compared position, and a
    // divergence (a top-1 disagreement) below 100% same top-1.
    let y = &r["yardstick"];
    assert_eq!(y["class"], "kv-8-bit-or-wider");
    assert_eq!(y["thresholds"]["max_mean_kl"], 1e-2);
    let kl = y["per_position_kl"].as_array().unwrap();
    assert_eq!(kl.len() as u64, r["compared_positions"].as_u64().unwrap());
    assert!(kl.iter().all(|k| k.as_f64().unwrap() >= 0.0 && k.as_f64().unwrap().is_finite()), "{y}");
    if v["kind"] == "diverged" {
        assert!(y["same_top1_pct"].as_f64().unwrap() < 100.0, "{y}");
    }
    assert!(text.contains("class kv-8-bit-or-wider"), "{text}");
}

#[test]
fn bad_inputs_give_one_clear_line() {
    let s = server();
    let root = tempfile::tempdir().unwrap();
    let one_error = |out: std::process::Output, needle: &str| {
        assert_eq!(out.status.code(), Some(2), "a usage error, refused before any server starts");
        let errors: Vec<_> = stderr_lines(&out).into_iter().filter(|l| l.starts_with("abprof: error:")).collect();
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert!(errors[0].contains(needle), "{:?} lacks {needle:?}", errors[0]);
    };
    let one = abprof()
        .args(["exactness", "--variant", &format!("a={s}"), "--model"])
        .arg(&testbed().smollm2)
        .output()
        .unwrap();
    one_error(one, "exactly two variants");
    let no_model = abprof()
        .args(["exactness", "--variant", &format!("a={s}"), "--variant", &format!("b={s}")])
        .arg("--root")
        .arg(root.path())
        .output()
        .unwrap();
    one_error(no_model, "has no model: pass --model");
}

/// The users' stack (#21): exactness runs on the qwen35moe MTP model (plain decoding against
/// itself is exact), and a `draft-mtp` side ends with one line naming what the pinned server does:
/// its speculative steps stream no logprobs (only the tokens of a plain step carry them), so a
/// logit comparison cannot be made, and abprof says so rather than comparing what is missing.
#[test]
fn exactness_on_the_mtp_model_and_what_draft_mtp_leaves_out() {
    let tb = testbed();
    let model = std::env::var("MTP_MODEL").ok().or_else(|| tb.vars.get("MTP_MODEL").cloned()).expect("MTP_MODEL");
    let model = PathBuf::from(model);
    let prompt = calibrated_prompt_for(&model, "mtp", 300);
    let s = server();
    let run = |a: &str, b: &str, root: &Path| {
        abprof()
            .arg("exactness")
            .args(["--variant", a, "--variant", b, "--model"])
            .arg(&model)
            .args(["--server-args", COMMON, "--tokens", "16", "--ignore-eos", "--prompt"])
            .arg(&prompt)
            .arg("--root")
            .arg(root)
            .output()
            .unwrap()
    };
    let root = tempfile::tempdir().unwrap();
    let out = run(&format!("a={s}"), &format!("b={s}"), root.path());
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(read_json(&root.path().join("exactness.json"))["verdict"]["kind"], "exact", "{text}");
    let root = tempfile::tempdir().unwrap();
    let mtp = format!("on={s}|extra=--spec-type draft-mtp --spec-draft-n-max 3");
    let out = run(&format!("off={s}"), &mtp, root.path());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let line: Vec<&str> = stderr.lines().filter(|l| l.contains("variant on: malformed or missing logprobs")).collect();
    assert_eq!(line.len(), 1, "{stderr}");
    assert!(line[0].contains("of its 16 generated tokens"), "{}", line[0]);
}
