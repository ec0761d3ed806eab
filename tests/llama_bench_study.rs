//! llama-bench as a sample engine on the real test bed (docs/methodology.md §4.4): the pinned
//! tree's llama-bench, built beside the test bed's llama-server, run once cold per sample through
//! the study driver; KV f16 against q8_0 on the generated MoE model.
mod common;
use common::{abprof, read_json, serial, spawn_abprof, testbed, SHARED_HOST};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn variant(label: &str, fields: &str) -> String {
    format!("{label}={}{fields}", testbed().server.display())
}

/// `abprof ab --llama-bench ARGS` of `variants` on the test bed's target model, `samples` a side.
fn bench_args(root: &Path, tests: &str, samples: u32, variants: &[String]) -> Vec<String> {
    let mut a: Vec<String> = vec![
        "ab".into(),
        "--root".into(),
        root.display().to_string(),
        "--model".into(),
        testbed().target.display().to_string(),
        "--llama-bench".into(),
        tests.into(),
        "--samples".into(),
        samples.to_string(),
        "--foreign-cpu-max".into(),
        SHARED_HOST.into(),
    ];
    for v in variants {
        a.extend(["--variant".into(), v.clone()]);
    }
    a
}

fn llama_bench() -> PathBuf {
    testbed().server.with_file_name("llama-bench")
}

#[test]
fn a_kv_study_of_llama_bench_samples_ends_with_a_verdict_per_test_and_the_compare_table() {
    let _g = serial();
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("kv");
    let vs = [variant("f16", "|kv=f16"), variant("q8", "|kv=q8_0")];
    let mut args = bench_args(&root, "-p 64 -n 16 -t 1", 3, &vs);
    args.push("--json".into());
    let out = abprof().args(&args).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let s: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // Each test is a metric with its interval and verdict; no server metric is judged.
    let q8 = &s["variants"][1];
    let names: Vec<&str> = q8["metrics"].as_array().unwrap().iter().map(|m| m["metric"].as_str().unwrap()).collect();
    assert_eq!(names, ["llama-bench-pp64-tps", "llama-bench-tg16-tps"]);
    for m in q8["metrics"].as_array().unwrap() {
        assert_eq!(m["runs"].as_array().unwrap().len(), 3, "{m:#}");
        assert!(m["ci"].is_object() && m["verdict"].is_string(), "{m:#}");
    }
    assert_eq!(q8["llama_bench"]["backends"], "CPU");
    let answers: Vec<&str> = s["answer"].as_array().unwrap().iter().map(|a| a["line"].as_str().unwrap()).collect();
    assert_eq!(answers.len(), 2, "{answers:?}");
    assert!(answers[0].starts_with("q8 vs f16: pp64 ") && answers[1].starts_with("q8 vs f16: tg16 "), "{answers:?}");
    assert_eq!(s["rejected"].as_array().unwrap().len(), 0, "{:#}", s["rejected"]);
    // Every sample one cold llama-bench of one repetition, at the variant's KV type.
    for entry in std::fs::read_dir(root.join("samples")).unwrap().flatten() {
        let rec = read_json(&entry.path().join("sample.json"));
        let argv: Vec<&str> = rec["server_argv"].as_array().unwrap().iter().map(|a| a.as_str().unwrap()).collect();
        assert_eq!(argv[0], llama_bench().display().to_string());
        assert!(argv.ends_with(&["-p", "64", "-n", "16", "-t", "1", "-r", "1", "-o", "jsonl"]), "{argv:?}");
        let results = rec["extra"]["llama_bench"]["results"].as_array().unwrap();
        assert_eq!(results.len(), 2);
        let kv = if entry.file_name().to_string_lossy().ends_with("q8") { "q8_0" } else { "f16" };
        assert!(results.iter().all(|r| r["row"]["settings"]["type_k"] == kv), "{results:#?}");
        assert!(results.iter().all(|r| r["seen_mono_ns"].as_u64().is_some()));
        assert!(entry.path().join("llama-bench.jsonl").is_file() && entry.path().join("telemetry.csv").is_file());
    }
    // compare-llama-bench.py's table with the interval and verdict, in the text, Markdown and page.
    let text = abprof().arg("summarize").arg(&root).output().unwrap();
    let text = String::from_utf8_lossy(&text.stdout).to_string();
    let head = text.lines().find(|l| l.contains("Speedup")).unwrap_or_else(|| panic!("{text}"));
    for col in ["Model", "Test", "t/s f16", "t/s q8", "Speedup", "Change", "95% CI", "Verdict"] {
        assert!(head.contains(col), "{head}");
    }
    assert!(text.contains("llama-bench -p 64 -n 16 -t 1, one repetition a sample"), "{text}");
    let per_variant = text.lines().find(|l| l.contains("llama-bench build")).unwrap_or_else(|| panic!("{text}"));
    assert!(per_variant.contains("backends") && !per_variant.contains("ms/token"), "{per_variant}");
    let md = std::fs::read_to_string(root.join("report.md")).unwrap();
    assert!(md.contains("| Model | Test | t/s f16 | t/s q8 | Speedup | Change | 95% CI | Verdict |"), "{md}");
    let row = md.lines().find(|l| l.contains("| tg16 |")).unwrap_or_else(|| panic!("{md}"));
    assert!(row.contains("qwen3moe") && row.contains("[") && row.contains("%]"), "{row}");
    let page = std::fs::read_to_string(root.join("report.html")).unwrap();
    assert!(page.contains("t/s q8") && page.contains("tg16"), "the page holds the table");
    // The history lists the study with the same table under it.
    let listed = abprof().arg("history").output().unwrap();
    let listed = String::from_utf8_lossy(&listed.stdout).to_string();
    let at = listed.find(&root.display().to_string()).unwrap_or_else(|| panic!("{listed}"));
    let after = &listed[at..];
    assert!(after.contains("llama-bench tests (compare-llama-bench.py's table"), "{after}");
    let row = after
        .lines()
        .find(|l| l.trim_start().starts_with("q8") && l.contains("tg16"))
        .unwrap_or_else(|| panic!("{after}"));
    assert!(row.contains("%]"), "{row}");
}

#[test]
fn a_llama_bench_study_stopped_by_sigint_keeps_its_samples_and_resumes() {
    let _g = serial();
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("int");
    let vs = [variant("f16", "|kv=f16"), variant("q8", "|kv=q8_0")];
    let child = spawn_abprof(&bench_args(&root, "-p 64 -n 48 -t 1", 3, &vs));
    let t0 = Instant::now();
    let done = || {
        std::fs::read_dir(root.join("samples"))
            .map(|r| r.flatten().filter(|e| e.path().join("sample.json").is_file()).count())
            .unwrap_or(0)
    };
    while done() < 2 {
        assert!(t0.elapsed() < Duration::from_secs(300), "two samples never finished");
        std::thread::sleep(Duration::from_millis(20));
    }
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(child.id() as i32), nix::sys::signal::Signal::SIGINT).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--resume"));
    assert!(common::processes_naming(&llama_bench()).is_empty(), "no llama-bench of the study outlives it");
    let kept = done();
    assert!((2..6).contains(&kept), "{kept} samples kept");
    let again = abprof().args(["ab", "--resume"]).arg(&root).arg("--json").output().unwrap();
    assert!(again.status.success(), "{}", String::from_utf8_lossy(&again.stderr));
    let s: serde_json::Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(s["missing"], 0);
    assert_eq!(s["variants"][0]["accepted"], 3, "{:#}", s["rejected"]);
    assert_eq!(s["variants"][1]["accepted"], 3, "{:#}", s["rejected"]);
    assert_eq!(s["answer"].as_array().unwrap().len(), 2);
}

/// Each rule a llama-bench sample adds, made to fire by a real llama-bench: a build refusing a
/// flag prints no result; a variant whose arguments add a test prints one the study did not ask.
#[test]
fn llama_bench_rules_fire_on_a_run_with_no_result_and_on_a_test_not_asked() {
    let _g = serial();
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("rules");
    let vs = [
        variant("ok", "|kv=f16"),
        variant("more", "|kv=f16|extra=-n 8"),
        variant("refused", "|kv=f16|extra=--no-such-flag"),
    ];
    let args = bench_args(&root, "-p 32 -n 4 -t 1", 3, &vs);
    let out = abprof().args(&args).arg("--json").output().unwrap();
    // Two variants have no accepted sample: said in one line, exit 1, everything on disk.
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let s: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rules_of = |label: &str| -> Vec<Vec<String>> {
        s["rejected"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["label"] == label)
            .map(|r| r["reasons"].as_array().unwrap().iter().map(|x| x["rule"].as_str().unwrap().to_string()).collect())
            .collect()
    };
    assert_eq!(s["variants"][0]["accepted"], 3);
    let more = rules_of("more");
    assert_eq!(more.len(), 3, "{:#}", s["rejected"]);
    assert!(more.iter().all(|r| r == &["llama-bench-test-mismatch"]), "{more:?}");
    let reason = s["rejected"].as_array().unwrap().iter().find(|r| r["label"] == "more").unwrap()["reasons"][0]
        ["reason"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(reason, "tg8 printed, not asked");
    let refused = rules_of("refused");
    assert_eq!(refused.len(), 3, "{:#}", s["rejected"]);
    assert!(refused.iter().all(|r| r == &["incomplete", "llama-bench-no-result"]), "{refused:?}");
}

/// Refused before anything exists: a variant whose build has no llama-bench, and arguments that
/// cannot be one variant's tests.
#[test]
fn a_llama_bench_study_refuses_what_it_cannot_run_before_the_folder_exists() {
    let d = tempfile::tempdir().unwrap();
    let lone = d.path().join("bin/llama-server");
    std::fs::create_dir_all(lone.parent().unwrap()).unwrap();
    std::fs::copy(&testbed().server, &lone).unwrap();
    for (variants, tests, says) in [
        (vec![format!("a={}", lone.display()), format!("b={}|kv=q8_0", lone.display())], "-p 32", "there is none at"),
        (vec![variant("a", ""), variant("b", "|kv=q8_0")], "-fa 0,1", "a variant is one configuration"),
        (vec![variant("a", ""), variant("b", "|kv=q8_0")], "-r 5", "abprof's"),
    ] {
        let root = d.path().join("never");
        let out = abprof().args(bench_args(&root, tests, 3, &variants)).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{tests}: {}", String::from_utf8_lossy(&out.stderr));
        let lines = common::error_lines(&out);
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(lines[0].contains(says), "{}", lines[0]);
        assert!(!root.exists(), "nothing created");
    }
}

/// A sweep of llama-bench studies: an environment axis crossed with the KV axis, each point a
/// whole study of llama-bench samples, the sweep's tables its tests.
#[test]
fn a_sweep_of_llama_bench_studies_crosses_an_env_axis_with_kv_and_tabulates_each_test() {
    let _g = serial();
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("sweep");
    let vs = [variant("a", ""), variant("b", "|extra=-ub 256")];
    let mut args = bench_args(&root, "-p 32 -n 4 -t 1", 3, &vs);
    args.extend(["--sweep", "kv=f16,q8_0", "--sweep", "env=OMP_WAIT_POLICY=active,passive"].map(String::from));
    let out = abprof().args(&args).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(text.contains("pp32 (t/s) — Holm family of 4 comparisons"), "{text}");
    assert!(text.contains("tg4 (t/s) — Holm family of 4 comparisons"), "{text}");
    assert!(!text.contains("server decode"), "a llama-bench sweep has no server metric: {text}");
    let points: Vec<PathBuf> = std::fs::read_dir(root.join("points")).unwrap().flatten().map(|e| e.path()).collect();
    assert_eq!(points.len(), 4);
    // Each point's samples ran at its KV type and environment.
    for p in &points {
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        let kv = if name.contains("kv=q8_0") { "q8_0" } else { "f16" };
        let env = if name.contains("passive") { "passive" } else { "active" };
        let sample = std::fs::read_dir(p.join("samples")).unwrap().flatten().next().unwrap().path();
        let rec = read_json(&sample.join("sample.json"));
        assert_eq!(rec["extra"]["llama_bench"]["results"][0]["row"]["settings"]["type_k"], kv, "{name}");
        let variants = read_json(&p.join("variants.json"));
        assert!(variants.to_string().contains(&format!("OMP_WAIT_POLICY\",\"{env}")), "{name}: {variants}");
    }
}
