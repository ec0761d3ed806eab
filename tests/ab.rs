//! `abprof ab` and `abprof summarize` on the real llama-server test bed.
mod common;
use common::*;
use std::path::{Path, PathBuf};
use std::process::Child;
use std::time::{Duration, Instant};

fn variant(label: &str, extra: &str) -> String {
    let mut s = format!("{label}={}", testbed().server.display());
    if !extra.is_empty() {
        s.push_str(&format!("|extra={extra}"));
    }
    s
}

fn summary(out: &std::process::Output) -> serde_json::Value {
    assert!(out.status.success(), "abprof failed: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn metric<'a>(s: &'a serde_json::Value, variant: usize, name: &str) -> &'a serde_json::Value {
    s["variants"][variant]["metrics"].as_array().unwrap().iter().find(|m| m["metric"] == name).unwrap()
}

#[test]
fn two_variants_three_samples_interleaved_with_exact_counts() {
    let _g = serial();
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("ab");
    let vs = [variant("t2", "-t 2"), variant("t2b", "-t 2 --no-warmup")];
    // As a CI job runs it (`2>log </dev/null | cat`): stderr and stdout pipes, an empty stdin.
    let out = abprof().args(ab_args(&root, 64, 3, &vs)).write_stdin(Vec::<u8>::new()).output().unwrap();
    let s = summary(&out);
    let order: Vec<&str> = s["order"].as_array().unwrap().iter().map(|o| o["label"].as_str().unwrap()).collect();
    assert_eq!(order, ["t2", "t2b", "t2b", "t2", "t2", "t2b"]);
    // One progress line per sample, in the order taken: which, how long, and how it was judged.
    let progress: Vec<String> = stderr_lines(&out).into_iter().filter(|l| l.starts_with("abprof: sample ")).collect();
    assert_eq!(progress.len(), 6, "{progress:#?}");
    for (i, (line, label)) in progress.iter().zip(&order).enumerate() {
        let head = format!("abprof: sample {}/6 ({label}, block {}): ", i + 1, i / 2 + 1);
        assert!(line.starts_with(&head) && line.ends_with("; accepted"), "{line} (wanted {head}…; accepted)");
    }
    assert_eq!(s["rejected"].as_array().unwrap().len(), 0, "{:#}", s["rejected"]);
    for v in s["variants"].as_array().unwrap() {
        assert_eq!(v["accepted"], 3);
        assert_eq!(v["prompt_tokens"], serde_json::json!([300, 300, 300]));
        assert_eq!(v["output_tokens"], serde_json::json!([64, 64, 64]));
    }
    assert_eq!(s["expected_prompt_tokens"], 300);
    // Every per-sample record agrees and the evidence is complete.
    for f in [
        "study.toml",
        "host.json",
        "variants.json",
        "plan.json",
        "order.jsonl",
        "prompt.txt",
        "summary.json",
        "isolation.json",
    ] {
        assert!(root.join(f).is_file(), "{f} missing");
    }
    let doc = read_json(&root.join("variants.json"));
    assert_eq!(doc["schema_version"], 3, "a list document stands under items (docs/methodology.md §13)");
    let facts = &doc["items"];
    assert_eq!(facts[0]["binary"]["sha256"].as_str().unwrap().len(), 64);
    assert!(facts[0]["version"].as_str().unwrap().contains("0c1e57098"));
    assert!(facts[1]["server_args"].as_array().unwrap().iter().any(|a| a == "--no-warmup"));
    for i in 1..=6 {
        let dir = std::fs::read_dir(root.join("samples"))
            .unwrap()
            .flatten()
            .find(|e| e.file_name().to_string_lossy().starts_with(&format!("{i:03}-")))
            .unwrap()
            .path();
        let rec = read_json(&dir.join("sample.json"));
        assert_eq!(rec["usage"]["prompt_tokens"], 300);
        assert_eq!(rec["usage"]["completion_tokens"], 64);
        // The runtime the server mapped (methodology §2.2): the static CPU build maps OpenMP's.
        let libs = rec["extra"]["runtime"]["libraries"].as_array().unwrap_or_else(|| panic!("{:#}", rec["extra"]));
        assert!(
            libs.iter().any(|l| l["role"] == "OpenMP runtime" && l["path"].as_str().unwrap().contains("libgomp.so")),
            "{libs:#?}"
        );
        assert!(dir.join("response.sse").is_file() && dir.join("server.log").is_file());
    }
    // The study file in the evidence re-runs the study exactly.
    let again = d.path().join("again");
    let out = abprof()
        .args(["ab", "--study"])
        .arg(root.join("study.toml"))
        .arg("--root")
        .arg(&again)
        .arg("--json")
        .output()
        .unwrap();
    let s2 = summary(&out);
    assert_eq!(s2["variants"][1]["accepted"], 3);
    assert_eq!(
        std::fs::read_to_string(again.join("study.toml")).unwrap(),
        std::fs::read_to_string(root.join("study.toml")).unwrap()
    );
    // summarize rebuilds the same numbers from disk.
    let out = abprof().arg("summarize").arg(&root).arg("--json").output().unwrap();
    let s3 = summary(&out);
    assert_eq!(s3["variants"][0]["metrics"], s["variants"][0]["metrics"]);
    let text = abprof().arg("summarize").arg(&root).output().unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    // How to attribute: the study's own folder is what compare-traces reads its ms/token from (the
    // summary no longer prints `--variant t2=<trace_dir>:MS` strings for another parser).
    assert!(text.contains("server decode TPS") && text.contains("compare-traces --study"), "{text}");
    assert!(text.contains("runtime (every variant's server loaded): OpenMP runtime libgomp.so.1"), "{text}");
}

/// §7.20 by a presence: `-bs` servers run at `-lv 4` (abprof adds it), a chain ending `+dist`
/// counts, and DRY's chain, which the device cannot run and which warns nowhere, is rejected
/// `backend-sampling-not-engaged` naming the chain.
#[test]
fn backend_sampling_counts_only_where_the_chain_ended_on_the_device() {
    let _g = serial();
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("ab");
    let vs = [variant("bs", "-t 2 -bs"), variant("dry", "-t 2 -bs --dry-multiplier 0.8")];
    let out = abprof().args(ab_args(&root, 16, 3, &vs)).output().unwrap();
    let s: serde_json::Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    assert_eq!(s["variants"][0]["accepted"], 3, "{:#}", s["rejected"]);
    assert_eq!(s["variants"][1]["accepted"], 0, "{:#}", s["rejected"]);
    let rejected = s["rejected"].as_array().unwrap();
    assert_eq!(rejected.len(), 3, "{rejected:#?}");
    for r in rejected {
        assert_eq!(r["label"], "dry");
        let reason = &r["reasons"][0];
        assert_eq!(reason["rule"], "backend-sampling-not-engaged", "{r:#}");
        assert!(reason["reason"].as_str().unwrap().contains("-> dry ->"), "{r:#}");
        let rec = read_json(&root.join(r["dir"].as_str().unwrap()).join("sample.json"));
        let argv: Vec<&str> = rec["server_argv"].as_array().unwrap().iter().map(|a| a.as_str().unwrap()).collect();
        assert!(argv.windows(2).any(|w| w == ["-lv", "4"]), "{argv:?}");
    }
}

/// An A/A study's 95% interval excludes 0 in 5% of studies by design (docs/methodology.md §8), so
/// one study alone would fail this test 1 run in 20. A verdict is therefore judged over a second,
/// independent study: both false happens by chance in 0.25% of runs, while a real bias between a
/// variant and its copy (the bug this test guards against) gives a verdict in both.
#[test]
fn aa_finds_no_clear_difference() {
    let _g = serial();
    let d = tempfile::tempdir().unwrap();
    let aa = |name: &str| {
        let mut args = ab_args(&d.path().join(name), 64, 3, &[variant("base", "-t 2")]);
        args.push("--aa".into());
        summary(&abprof().args(args).output().unwrap())
    };
    let s = aa("aa");
    assert_eq!(s["variants"][1]["label"], "base-again");
    let m = metric(&s, 1, "server-decode-tps").clone();
    // The t model's interval (docs/methodology.md §8): paired within the 3 blocks.
    assert_eq!(m["ci"]["method"], "paired-t", "{m:#}");
    assert_eq!(m["ci"]["pairs"], 3, "{m:#}");
    let s = if m["verdict"] == "no-clear-difference" { s } else { aa("aa-again") };
    let m = metric(&s, 1, "server-decode-tps");
    assert_eq!(
        m["verdict"],
        "no-clear-difference",
        "two A/A studies in a row gave a verdict: {m:#}\nbaseline: {:#}",
        metric(&s, 0, "server-decode-tps")["runs"]
    );
    let ci = &m["ci"];
    assert!(ci["lo_pct"].as_f64().unwrap() <= 0.0 && ci["hi_pct"].as_f64().unwrap() >= 0.0);
}

/// Two values a side are too few for an interval (docs/methodology.md §8): the study ends with
/// "too few samples", not a verdict, and a gate on it does not pass silently: it exits 1 with one
/// line saying it cannot judge the candidate, how many values each side has, and the fix. A study
/// that plans two a side is refused before it starts (tests/refusals.rs); this one plans three and
/// loses one a side to a rule: its server's first two runs (the first block) use another chat
/// template, so their prompts are not the calibrated length (`calibrated-prompt-tokens`, §7.3).
#[test]
fn two_samples_a_side_end_with_too_few_samples() {
    use std::os::unix::fs::PermissionsExt;
    let _g = serial();
    let d = tempfile::tempdir().unwrap();
    let runs = d.path().join("runs");
    let server = testbed().server.display().to_string();
    let wrapper = d.path().join("llama-server");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\ncase \"$1\" in --version|--help) exec {server} \"$1\";; esac\necho run >> {runs}\nif [ $(wc -l < {runs}) -le 2 ]; then exec {server} \"$@\" --chat-template llama2; fi\nexec {server} \"$@\"\n",
            runs = runs.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    let base = format!("base={}|extra=-t 2", wrapper.display());
    let mut args = ab_args(&d.path().join("two"), 16, 3, &[base]);
    args.extend(["--aa", "--fail-on", "slower"].map(String::from));
    let out = abprof().args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let line: Vec<&str> = stderr.lines().filter(|l| l.contains("the gate cannot judge base-again")).collect();
    assert_eq!(line.len(), 1, "{stderr}");
    assert!(line[0].contains("base 2, base-again 2") && line[0].contains("more --samples"), "{}", line[0]);
    // Exit 1 is the gate's answer, not a lost study: the summary was printed first.
    let s: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let m = metric(&s, 1, "server-decode-tps");
    assert_eq!(m["verdict"], "too-few-samples", "{m:#}");
    assert!(m["ci"].is_null(), "{m:#}");
    let rejected = s["rejected"].as_array().unwrap();
    assert_eq!(rejected.len(), 2, "{rejected:#?}");
    for r in rejected {
        let rules = r["reasons"].as_array().unwrap();
        assert!(rules.iter().any(|x| x["rule"] == "calibrated-prompt-tokens"), "{r:#}");
    }
}

#[test]
fn a_large_effect_gets_the_right_verdict() {
    let _g = serial();
    let d = tempfile::tempdir().unwrap();
    // Speculative decoding with the random draft costs more than it saves (the draft's output
    // matrix dominates): decode is far slower, far beyond the noise. Four samples a side, so one
    // sample rejected by a host rule (seen once in a whole run) still leaves the three an interval
    // needs (docs/methodology.md §8 "Too few samples").
    let draft = format!("-t 2 -md {} --spec-type draft-simple --spec-draft-n-max 4", testbed().draft.display());
    let s = summary(
        &abprof()
            .args(ab_args(&d.path().join("big"), 64, 4, &[variant("plain", "-t 2"), variant("drafted", &draft)]))
            .output()
            .unwrap(),
    );
    let m = metric(&s, 1, "server-decode-tps");
    assert_eq!(m["verdict"], "slower", "{m:#} rejected: {}", s["rejected"]);
    assert!(m["ci"]["hi_pct"].as_f64().unwrap() < 0.0);
    assert!(s["variants"][1]["acceptance_median"].as_f64().unwrap() > 0.0);
}

/// The users' stack on the test bed (#21): `draft-mtp` on the predictable qwen35moe twin is
/// accepted almost always, on the random one almost never. Both drafted, so `no-drafts` (§7.16)
/// keeps every sample, and the acceptance caveat (§7.11) says the random one's decode TPS is no
/// proof of a kernel change.
#[test]
fn draft_mtp_acceptance_of_the_two_regimes() {
    let _g = serial();
    let d = tempfile::tempdir().unwrap();
    let model = |k: &str| std::env::var(k).ok().or_else(|| testbed().vars.get(k).cloned()).expect(k);
    let mtp = "-t 2 --spec-type draft-mtp --spec-draft-n-max 3";
    // The predictable side serves /metrics: its spec-decode counters are read beside the log (§7.18).
    let vs = [
        format!("{}|model={}", variant("predictable", &format!("{mtp} --metrics")), model("MTP_PREDICTABLE_MODEL")),
        format!("{}|model={}", variant("random", mtp), model("MTP_MODEL")),
    ];
    let s = summary(&abprof().args(ab_args(&d.path().join("mtp"), 32, 3, &vs)).output().unwrap());
    for e in std::fs::read_dir(d.path().join("mtp/samples")).unwrap().flatten() {
        let rec = read_json(&e.path().join("sample.json"));
        let m = &rec["extra"]["spec_metrics"];
        if e.file_name().to_string_lossy().ends_with("-predictable") {
            let drafted = m["drafted"].as_u64().unwrap_or(0);
            assert!(drafted > 0 && m["log_drafted"] == m["drafted"] && m["log_accepted"] == m["accepted"], "{m}");
            assert_eq!(m["log_drafted"], rec["draft"]["generated"], "one request, one acceptance line: {rec:#}");
        } else {
            assert!(m.is_null(), "a server without --metrics records none: {m}");
        }
    }
    let acceptance = |i: usize| s["variants"][i]["acceptance_median"].as_f64().unwrap();
    assert!(acceptance(0) > 0.9, "predictable: {}", s["variants"][0]);
    assert!(acceptance(1) < 0.1, "random: {}", s["variants"][1]);
    assert_eq!(s["rejected"], serde_json::json!([]), "every sample drafted: {}", s["rejected"]);
    let caveats = s["variants"][1]["caveats"].to_string();
    assert!(caveats.contains("acceptance differs materially"), "{caveats}");
    // More tokens per decode step where the drafts are accepted: the server's mean acceptance length.
    let per_step = |i: usize| s["variants"][i]["mean_acceptance_length_median"].as_f64().unwrap();
    assert!(per_step(0) > 2.0 && per_step(1) < 1.5, "{} vs {}", per_step(0), per_step(1));
    let ci = |i: usize| {
        s["variants"][i]["acceptance_ci"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect::<Vec<_>>()
    };
    assert!(ci(0)[0] > 0.8 && ci(0)[1] <= 1.0 && ci(1)[1] < 0.2, "{:?} {:?}", ci(0), ci(1));
    let text = abprof().args(["summarize"]).arg(d.path().join("mtp")).output().unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("accept 95% CI") && text.contains("tok/step"), "{text}");
}

/// MTP on against off (#21 must-show), one study per regime. The predictable twin: the MTP side's
/// acceptance > 90% and more tokens per decode step than plain decoding's one. The random one:
/// acceptance near 0. Each MTP side carries the acceptance caveat (§7.11: the baseline drafts
/// nothing), so its decode TPS is never read as a kernel's.
#[test]
fn draft_mtp_on_against_off_of_the_two_regimes() {
    let _g = serial();
    let d = tempfile::tempdir().unwrap();
    let model = |k: &str| std::env::var(k).ok().or_else(|| testbed().vars.get(k).cloned()).expect(k);
    // `-lv 4` on the predictable pair: the pinned server then sizes its buffers and prints the
    // per-position rates (tests/fixtures/llama-server-mtp/README.md).
    let study = |name: &str, key: &str, samples: u32, args: &str| {
        let m = model(key);
        let vs = [
            format!("{}|model={m}", variant("off", args)),
            format!("{}|model={m}", variant("on", &format!("{args} --spec-type draft-mtp --spec-draft-n-max 3"))),
        ];
        // What is asserted is acceptance, memory and which figures exist, none of it a speed: a
        // busy shared host must not reject the samples (§7.7; ab_args's limit). A study file:
        // the random twin's study takes two samples a side, fewer than the flags plan.
        let a = study_file_of(&ab_args(&d.path().join(name), 24, samples, &vs));
        summary(&abprof().args(a).output().unwrap())
    };
    let s = study("pred", "MTP_PREDICTABLE_MODEL", 3, "-t 2 -lv 4");
    let v = |s: &serde_json::Value, i: usize, k: &str| s["variants"][i][k].clone();
    assert_eq!(s["rejected"], serde_json::json!([]), "{}", s["rejected"]);
    assert!(v(&s, 0, "acceptance_median").is_null(), "MTP off drafts nothing: {}", s["variants"][0]);
    assert!(v(&s, 1, "acceptance_median").as_f64().unwrap() > 0.9, "{}", s["variants"][1]);
    let per_step = |s: &serde_json::Value, i: usize| v(s, i, "mean_acceptance_length_median").as_f64().unwrap();
    assert_eq!(per_step(&s, 0), 1.0, "plain decoding: one token a step");
    assert!(per_step(&s, 1) > 2.0, "{}", per_step(&s, 1));
    assert!(v(&s, 1, "acceptance_ci")[0].as_f64().unwrap() > 0.8, "{}", v(&s, 1, "acceptance_ci"));
    assert!(v(&s, 1, "acceptance_per_position_median")[0].as_f64().unwrap() > 0.9, "{}", s["variants"][1]);
    let caveats = v(&s, 1, "caveats").to_string();
    assert!(caveats.contains("the baseline drafts nothing"), "{caveats}");
    // Prefill and decode both measured with an interval on the MTP side.
    for m in ["server-decode-tps", "server-prefill-tps"] {
        assert!(metric(&s, 1, m)["ci"]["lo_pct"].is_number(), "{m}: {:#}", metric(&s, 1, m));
    }
    // Memory: MTP on loads the MTP block and adds its context; off has none.
    let mem = |i: usize, k: &str| v(&s, i, "memory")[k].as_f64().unwrap();
    assert_eq!(mem(0, "speculative_context_mib"), 0.0, "{}", v(&s, 0, "memory"));
    assert!(mem(1, "speculative_context_mib") > 0.0, "{}", v(&s, 1, "memory"));
    assert!(mem(1, "model_mib") > mem(0, "model_mib"), "the MTP block's weights");
    let root = d.path().join("pred");
    // The table formats carry the columns; `--format md` is report.md, with the sections below.
    let csv = abprof().args(["summarize", "--format", "csv"]).arg(&root).output().unwrap();
    let csv = String::from_utf8_lossy(&csv.stdout);
    assert!(csv.contains("acceptance_median") && csv.contains("memory_speculative_context_mib"), "{csv}");
    let md = abprof().args(["summarize", "--format", "md"]).arg(&root).output().unwrap();
    let md = String::from_utf8_lossy(&md.stdout);
    assert!(md.contains("### draft acceptance (accepted samples") && md.contains("### server memory"), "{md}");
    let text = String::from_utf8_lossy(&abprof().arg("summarize").arg(&root).output().unwrap().stdout).to_string();
    assert!(text.contains("draft acceptance (accepted samples") && text.contains("server memory"), "{text}");
    let report = std::fs::read_to_string(root.join("report.md")).unwrap();
    assert!(
        report.contains("### draft acceptance (accepted samples") && report.contains("### server memory"),
        "{report}"
    );
    let s = study("rand", "MTP_MODEL", 2, "-t 2");
    assert_eq!(s["rejected"], serde_json::json!([]), "drafted, none accepted is kept: {}", s["rejected"]);
    assert!(v(&s, 1, "acceptance_median").as_f64().unwrap() < 0.1, "{}", s["variants"][1]);
    assert!(per_step(&s, 1) < 1.5, "{}", per_step(&s, 1));
    let caveats = v(&s, 1, "caveats").to_string();
    assert!(caveats.contains("acceptance differs materially"), "{caveats}");
}

/// `abprof ab` of a sequence `workload` into `root`: MTP off against on, on the predictable twin,
/// `tokens` a request, `samples` a side, `--json`. Acceptance and counts are asserted, no speed:
/// a busy shared host must not reject (§7.7).
fn mtp_off_against_on(root: &Path, workload: &str, tokens: u32, samples: u32) -> Vec<String> {
    let model = std::env::var("MTP_PREDICTABLE_MODEL")
        .ok()
        .or_else(|| testbed().vars.get("MTP_PREDICTABLE_MODEL").cloned())
        .expect("MTP_PREDICTABLE_MODEL");
    let mut a: Vec<String> = ["ab", "--root"].map(String::from).to_vec();
    a.push(root.display().to_string());
    a.extend(["--model".into(), model, "--server-args".into(), "-c 4096 -np 1".into()]);
    a.extend(["--workload".into(), workload.into(), "--tokens".into(), tokens.to_string()]);
    a.extend([
        "--samples".into(),
        samples.to_string(),
        "--foreign-cpu-max".into(),
        SHARED_HOST.into(),
        "--json".into(),
    ]);
    for v in [variant("off", "-t 2"), variant("on", "-t 2 --spec-type draft-mtp --spec-draft-n-max 3")] {
        a.extend(["--variant".into(), v]);
    }
    a
}

/// The community's MTP yardstick (#21 item 6, docs/methodology.md §4.1) taken abprof's way: MTP
/// off against on on the predictable twin, every sample one cold server answering the nine prompts.
/// The aggregate block: acceptance > 90% on the MTP side, nothing drafted on the off side, nine
/// requests a sample, and the responses' counts equal to the log's. 32 tokens a request, not 192:
/// at 192 one sample a side took 3 minutes on the shared 2-core box. `--resume` of the finished
/// study reads the workload back from study.toml (no prompt is asked for) and keeps its block.
#[test]
fn mtp_yardstick_aggregate_block_of_mtp_off_against_on() {
    let _g = serial();
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("yard");
    // One sample a side: a study file (the flags plan at least 3).
    let args = study_file_of(&mtp_off_against_on(&root, "mtp-yardstick", 32, 1));
    let s = summary(&abprof().args(args).output().unwrap());
    assert_eq!(s["rejected"], serde_json::json!([]), "{}", s["rejected"]);
    let y = |i: usize| s["variants"][i]["mtp_yardstick"].clone();
    for i in 0..2 {
        assert_eq!(y(i)["requests"], serde_json::json!([9]), "{}", y(i));
        assert!(y(i)["wall_ms_median"].as_f64().unwrap() > 0.0, "{}", y(i));
        assert!(y(i)["decode_tps_median"].as_f64().unwrap() > 0.0, "{}", y(i));
    }
    assert_eq!(y(0)["drafted"], serde_json::json!([0]), "MTP off drafts nothing: {}", y(0));
    assert!(y(0)["acceptance_median"].is_null(), "{}", y(0));
    assert!(y(1)["drafted"][0].as_u64().unwrap() > 0, "{}", y(1));
    assert!(y(1)["acceptance_median"].as_f64().unwrap() > 0.9, "{}", y(1));
    // The sample: nine requests in the assets' order, nine timing blocks, and the responses'
    // counts equal to the server log's (draft-counts-differ would have rejected it otherwise).
    let on = read_json(&root.join("samples/002-on/sample.json"));
    let off = read_json(&root.join("samples/001-off/sample.json"));
    let record = |x: &serde_json::Value| x["extra"]["mtp_yardstick"].clone();
    let names: Vec<&str> = on["extra"]["mtp_yardstick"]["requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["prompt"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["code", "code-review", "story", "explanation", "summary", "translation", "list", "math", "dialogue"]
    );
    for x in [&on, &off] {
        assert_eq!(x["timing_blocks"], 9);
        assert_eq!(record(x)["totals"]["predicted_tokens"], 9 * 32, "{}", record(x)["totals"]);
    }
    assert_eq!(record(&on)["totals"]["drafted"], on["draft"]["generated"], "{}", on["draft"]);
    assert_eq!(record(&on)["totals"]["accepted"], on["draft"]["accepted"], "{}", on["draft"]);
    // The block beside the verdicts in every summary format.
    let text = String::from_utf8_lossy(&abprof().arg("summarize").arg(&root).output().unwrap().stdout).to_string();
    assert!(text.contains("MTP yardstick") && text.contains("aggregate acceptance"), "{text}");
    let csv = abprof().args(["summarize", "--format", "csv"]).arg(&root).output().unwrap();
    assert!(String::from_utf8_lossy(&csv.stdout).contains("yardstick_acceptance_median"));
    let md = abprof().args(["summarize", "--format", "md"]).arg(&root).output().unwrap();
    assert!(String::from_utf8_lossy(&md.stdout).contains("### MTP yardstick"));
    let report = std::fs::read_to_string(root.join("report.md")).unwrap();
    assert!(report.contains("### MTP yardstick"), "{report}");
    // The study file records the workload, and a resume continues it as that workload.
    let toml = std::fs::read_to_string(root.join("study.toml")).unwrap();
    assert!(toml.contains("workload = \"mtp-yardstick\"") && !toml.contains("prompt"), "{toml}");
    let again = resume(&root);
    assert_eq!(again["variants"][1]["mtp_yardstick"], y(1), "{}", again["variants"][1]);
}

/// SPEED-Bench's shape (#34 item 7, docs/methodology.md §4.3): MTP off against on on the
/// predictable twin, every sample one cold server answering the eleven category prompts. Per
/// variant and category the upstream client's figures (three requests each, nothing drafted on
/// the off side, high acceptance on the predictable MTP side, the responses' counts equal to the
/// log's or the sample would be rejected); per category of the candidate the compare script's two
/// speedups beside the study's paired interval; the block in every summary format. 16 tokens a
/// request keeps six cold samples of eleven requests short on the shared 2-core box.
#[test]
fn speed_bench_reports_each_category_and_the_compare_scripts_speedups() {
    let _g = serial();
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("speed");
    let s = summary(&abprof().args(mtp_off_against_on(&root, "speed-bench", 16, 3)).output().unwrap());
    assert_eq!(s["rejected"], serde_json::json!([]), "{}", s["rejected"]);
    let categories = [
        "coding",
        "humanities",
        "math",
        "multilingual",
        "qa",
        "rag",
        "reasoning",
        "roleplay",
        "stem",
        "summarization",
        "writing",
        "overall",
    ];
    let b = |i: usize| s["variants"][i]["speed_bench"].clone();
    for i in 0..2 {
        let rows = b(i)["categories"].as_array().unwrap().clone();
        let names: Vec<&str> = rows.iter().map(|r| r["category"].as_str().unwrap()).collect();
        assert_eq!(names, categories, "{}", b(i));
        for r in &rows[..11] {
            assert_eq!(r["requests"], 3, "{r}");
            assert!(r["decode_tps_mean"].as_f64().unwrap() > 0.0, "{r}");
            assert!(r["prompt_tps_mean"].as_f64().unwrap() > 0.0, "{r}");
            assert!(r["latency_ms_mean"].as_f64().unwrap() > 0.0, "{r}");
        }
        assert_eq!(rows[11]["requests"], 33, "{}", rows[11]);
    }
    let off_overall = &b(0)["categories"][11];
    assert_eq!(
        (off_overall["drafted"].as_u64(), off_overall["acceptance"].is_null()),
        (Some(0), true),
        "{off_overall}"
    );
    let on_overall = &b(1)["categories"][11];
    assert!(on_overall["drafted"].as_u64().unwrap() > 0, "{on_overall}");
    assert!(on_overall["acceptance"].as_f64().unwrap() > 0.9, "{on_overall}");
    assert!(b(0)["changes"].is_null(), "the baseline has no changes: {}", b(0));
    let changes = b(1)["changes"].as_array().unwrap().clone();
    assert_eq!(changes.len(), 12, "{}", b(1));
    for c in &changes {
        assert!(c["decode_speedup"].as_f64().unwrap() > 0.0, "{c}");
        assert!(c["latency_speedup"].as_f64().unwrap() > 0.0, "{c}");
        let ci = &c["decode_change"];
        assert!(ci["lo_pct"].as_f64().unwrap() <= ci["hi_pct"].as_f64().unwrap(), "three blocks give an interval: {c}");
    }
    // The sample: eleven requests in the assets' order, eleven timing blocks.
    let mut dirs: Vec<_> = std::fs::read_dir(root.join("samples")).unwrap().map(|e| e.unwrap().path()).collect();
    dirs.sort();
    let first_on = dirs.iter().find(|p| p.to_string_lossy().ends_with("-on")).expect("an MTP sample");
    let on = read_json(&first_on.join("sample.json"));
    let names: Vec<&str> = on["extra"]["speed_bench"]["requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["prompt"].as_str().unwrap())
        .collect();
    assert_eq!(names, categories[..11]);
    assert_eq!(on["timing_blocks"], 11);
    // The blocks beside the verdicts in every summary format.
    let text = String::from_utf8_lossy(&abprof().arg("summarize").arg(&root).output().unwrap().stdout).to_string();
    assert!(text.contains("SPEED-Bench (§4.3)") && text.contains("decode speedup"), "{text}");
    let report = std::fs::read_to_string(root.join("report.md")).unwrap();
    assert!(report.contains("### SPEED-Bench (§4.3)") && report.contains("latency speedup"), "{report}");
    let html = std::fs::read_to_string(root.join("report.html")).unwrap();
    assert!(html.contains("SPEED-Bench against the baseline"), "the page has the speedups");
    let toml = std::fs::read_to_string(root.join("study.toml")).unwrap();
    assert!(toml.contains("workload = \"speed-bench\"") && !toml.contains("prompt"), "{toml}");
}

/// The soak (#22 item 4, methodology §4.2): every sample is one cold server answering the
/// study's request `--soak-requests` times back to back. Each request's rate lands in the record
/// and in the summary (per request, and the last against the first with an interval across
/// samples); on the CPU test bed the device readings say "not measured on this host".
#[test]
fn a_soak_keeps_the_rate_of_every_request_of_one_server() {
    let _g = serial();
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("soak");
    let mut a = ab_args(&root, 16, 3, &[variant("a", "-t 2"), variant("b", "-t 2")]);
    let at = a.iter().position(|x| x == "--tokens").unwrap();
    a.drain(at..at + 2);
    a.extend(["--workload", "soak", "--soak-requests", "4", "--tokens", "16"].map(String::from));
    // Counts and shapes are asserted, no speed: ab_args's limit keeps a busy shared host from
    // rejecting (§7.7).
    let s = summary(&abprof().args(&a).output().unwrap());
    assert_eq!(s["rejected"], serde_json::json!([]), "{}", s["rejected"]);
    for i in 0..2 {
        let k = &s["variants"][i]["soak"];
        let requests = k["requests"].as_array().unwrap();
        assert_eq!(requests.len(), 4, "{k}");
        assert!(
            requests
                .iter()
                .all(|r| r["decode_tps"].as_f64().unwrap() > 0.0 && r["prefill_tps"].as_f64().unwrap() > 0.0),
            "{k}"
        );
        assert_eq!(k["drift_pct"].as_array().unwrap().len(), 3, "{k}");
        let ci = k["drift_ci_pct"].as_array().unwrap();
        assert!(ci[0].as_f64().unwrap() <= k["drift_pct_median"].as_f64().unwrap(), "{k}");
    }
    let rec = read_json(&root.join("samples/001-a/sample.json"));
    assert_eq!(rec["timing_blocks"], 4);
    let names: Vec<&str> =
        rec["extra"]["soak"]["requests"].as_array().unwrap().iter().map(|r| r["prompt"].as_str().unwrap()).collect();
    assert_eq!(names, ["request 1", "request 2", "request 3", "request 4"]);
    let starts: Vec<u64> = rec["extra"]["soak"]["requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["start_mono_ns"].as_u64().unwrap())
        .collect();
    assert!(starts.windows(2).all(|w| w[0] < w[1]), "back to back, in order: {starts:?}");
    assert_eq!(rec["usage"]["completion_tokens"], 4 * 16, "{}", rec["usage"]);
    let text = String::from_utf8_lossy(&abprof().arg("summarize").arg(&root).output().unwrap().stdout).to_string();
    assert!(text.contains("Soak (§4.2)") && text.contains("decode drift, request 2 → N"), "{text}");
    assert!(text.contains("not measured on this host"), "{text}");
    let report = std::fs::read_to_string(root.join("report.md")).unwrap();
    assert!(report.contains("### Soak: each request"), "{report}");
    let toml = std::fs::read_to_string(root.join("study.toml")).unwrap();
    assert!(toml.contains("workload = \"soak\"") && toml.contains("soak_requests = 4"), "{toml}");
}

/// Study with hooks that leave marker files, in a background process.
/// Its study file ([`study_file_of`]): these studies take two samples a side, fewer than the flags
/// plan, to reach a fault quickly.
fn spawn_study(root: &Path, markers: &Path, tokens: u32, samples: u32, vs: &[String]) -> Child {
    spawn_abprof(&study_file_of(&small_study(root, markers, tokens, samples, vs)))
}

/// The llama-server child of `parent`, once sample `index` (1-based) is mid-request.
fn server_mid_request(parent: u32, root: &Path, index: usize) -> u32 {
    let t0 = Instant::now();
    loop {
        assert!(t0.elapsed() < Duration::from_secs(120), "sample {index} never reached its request");
        let log = std::fs::read_dir(root.join("samples"))
            .ok()
            .and_then(|d| d.flatten().find(|e| e.file_name().to_string_lossy().starts_with(&format!("{index:03}-"))))
            .and_then(|e| std::fs::read_to_string(e.path().join("server.log")).ok())
            .unwrap_or_default();
        if log.contains("launch_slot_") && !log.contains("print_timing") {
            for p in std::fs::read_dir("/proc").unwrap().flatten() {
                let Ok(pid) = p.file_name().to_string_lossy().parse::<u32>() else { continue };
                let stat = std::fs::read_to_string(p.path().join("stat")).unwrap_or_default();
                let after = stat.rsplit(')').next().unwrap_or("");
                let ppid: u32 = after.split_whitespace().nth(1).and_then(|x| x.parse().ok()).unwrap_or(0);
                if ppid == parent && stat.contains("(llama-server)") {
                    return pid;
                }
            }
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn lines(p: &Path) -> usize {
    std::fs::read_to_string(p).map(|s| s.lines().count()).unwrap_or(0)
}

fn resume(root: &Path) -> serde_json::Value {
    summary(&abprof().args(["ab", "--resume"]).arg(root).arg("--json").output().unwrap())
}

#[test]
fn a_server_killed_mid_request_is_rejected_restored_and_resumable() {
    let _g = serial();
    let d = tempfile::tempdir().unwrap();
    let (root, markers) = (d.path().join("kill"), d.path().to_path_buf());
    // One thread and many tokens: a request long enough to be hit.
    let vs = [variant("a", "-t 1"), variant("b", "-t 1 --no-warmup")];
    let child = spawn_study(&root, &markers, 1500, 2, &vs);
    let victim = server_mid_request(child.id(), &root, 2);
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(victim as i32), nix::sys::signal::Signal::SIGKILL).unwrap();
    let out = child.wait_with_output().unwrap();
    let s = summary(&out);
    assert_eq!(lines(&markers.join("after")), 1, "restore ran once");
    assert_eq!(lines(&markers.join("verify")), 1);
    let rejected = s["rejected"].as_array().unwrap();
    assert_eq!(rejected.len(), 1, "{rejected:#?}");
    assert_eq!(rejected[0]["index"], 1);
    assert_eq!(rejected[0]["reasons"][0]["rule"], "incomplete");
    // The others are on disk and summarized; resume re-measures the broken one.
    assert_eq!(s["variants"][0]["accepted"].as_u64().unwrap() + s["variants"][1]["accepted"].as_u64().unwrap(), 3);
    let s = resume(&root);
    assert_eq!(s["variants"][1]["accepted"], 2);
    assert_eq!(s["missing"], 0);
    assert_eq!(s["rejected"][0]["reasons"][0]["rule"], "superseded-attempt");
    assert_eq!(lines(&markers.join("after")), 2, "a resumed study restores again");
}

/// A crashed sample is `incomplete`, which is never retaken (docs/methodology.md §7.19): a block
/// the same run adds after it (here an adaptive one, as a retake block would) takes new slots
/// only, and the crash stays in the rejected list as what it was, not as a superseded attempt.
#[test]
fn a_block_added_after_a_crash_does_not_measure_the_crashed_sample_again() {
    let _g = serial();
    let d = tempfile::tempdir().unwrap();
    let (root, markers) = (d.path().join("crash"), d.path().to_path_buf());
    let vs = [variant("a", "-t 1"), variant("b", "-t 1 --no-warmup")];
    let mut args = small_study(&root, &markers, 1500, 2, &vs);
    args.extend(["--until-decided".into(), "--max-samples".into(), "3".into()]);
    let child = spawn_abprof(&study_file_of(&args));
    let victim = server_mid_request(child.id(), &root, 2);
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(victim as i32), nix::sys::signal::Signal::SIGKILL).unwrap();
    let s = summary(&child.wait_with_output().unwrap());
    let order: Vec<u64> = s["order"].as_array().unwrap().iter().map(|o| o["index"].as_u64().unwrap()).collect();
    assert_eq!(order, [0, 1, 2, 3, 4, 5], "each slot taken once, the crashed one (1) included: {:#}", s["order"]);
    let rejected = s["rejected"].as_array().unwrap();
    assert_eq!(rejected.len(), 1, "{rejected:#?}");
    assert_eq!((&rejected[0]["index"], &rejected[0]["reasons"][0]["rule"]), (&1.into(), &"incomplete".into()));
}

#[test]
fn sigint_mid_study_restores_keeps_samples_and_resumes() {
    let _g = serial();
    let d = tempfile::tempdir().unwrap();
    let (root, markers) = (d.path().join("int"), d.path().to_path_buf());
    let vs = [variant("a", "-t 1"), variant("b", "-t 1 --no-warmup")];
    let child = spawn_study(&root, &markers, 1500, 2, &vs);
    let server = server_mid_request(child.id(), &root, 3);
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(child.id() as i32), nix::sys::signal::Signal::SIGINT).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--resume"));
    assert_eq!(lines(&markers.join("after")), 1);
    assert_eq!(lines(&markers.join("verify")), 1);
    assert!(!Path::new(&format!("/proc/{server}")).exists(), "the server in flight was stopped");
    let done: Vec<PathBuf> = std::fs::read_dir(root.join("samples"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("sample.json").is_file())
        .collect();
    assert_eq!(done.len(), 2, "two finished samples stay on disk");
    let s = summary(&abprof().arg("summarize").arg(&root).arg("--json").output().unwrap());
    assert_eq!(s["missing"], 2);
    let s = resume(&root);
    assert_eq!(s["missing"], 0);
    assert_eq!(s["variants"][0]["accepted"], 2, "{:#}", s["rejected"]);
    assert_eq!(s["variants"][1]["accepted"], 2, "{:#}", s["rejected"]);
}

#[test]
fn bad_specs_give_one_clear_line_each() {
    let d = tempfile::tempdir().unwrap();
    let srv = testbed().server.display().to_string();
    let cases = [
        ("no-equals".to_string(), "has no '='"),
        (format!("a={srv}|colour=red"), "unknown key \"colour\""),
        ("a=/no/such/llama-server".to_string(), "does not exist"),
        (format!("a={srv}|env=1X=2"), "not a valid environment variable name"),
        (format!("a={srv}|extra=-t 'unclosed"), "cannot split extra="),
    ];
    for (i, (spec, needle)) in cases.iter().enumerate() {
        let out =
            abprof().args(ab_args(&d.path().join(format!("r{i}")), 8, 1, std::slice::from_ref(spec))).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "a usage error: {}", String::from_utf8_lossy(&out.stderr));
        let err = stderr_lines(&out);
        assert_eq!(err.len(), 1, "{err:?}");
        assert!(err[0].contains(needle), "{spec}: {}", err[0]);
    }
    let dup = [variant("a", ""), variant("a", "-t 1")];
    let out = abprof().args(ab_args(&d.path().join("dup"), 8, 1, &dup)).output().unwrap();
    assert!(stderr_lines(&out)[0].contains("used twice"));
}

/// With --pure-decode the prefill and TTFT rows time a one-token re-prefill of a cached prompt:
/// the summary says so beside them instead of presenting them as a prefill.
#[test]
fn pure_decode_labels_what_prefill_and_ttft_measure() {
    let _g = serial();
    let d = tempfile::tempdir().unwrap();
    // 3 samples a side (the fewest `ab` plans): one sample rejected by chance (a 16-token request
    // is short beside the host's CPU accounting ticks) still leaves some to label.
    let mut args = ab_args(&d.path().join("pd"), 16, 3, &[variant("base", "-t 2")]);
    args.extend(["--aa".into(), "--pure-decode".into()]);
    let s = summary(&abprof().args(&args).output().unwrap());
    assert_eq!(s["pure_decode"], true);
    for name in ["server-prefill-tps", "ttft-ms"] {
        let m = metric(&s, 0, name);
        assert!(m["measures"].as_str().unwrap().contains("re-prefill of a cached prompt"), "{m}");
    }
    assert!(metric(&s, 0, "server-decode-tps")["measures"].is_null());
    let text = abprof().arg("summarize").arg(d.path().join("pd")).output().unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("server prefill TPS (tok/s) — pure decode: the one-token re-prefill"), "{text}");
}

/// The CI gate on the real test bed: an A/A study (the same binary twice) passes a
/// `--fail-on changed` gate. The gate's judgement (exit 3 only when an interval excludes 0 and its
/// estimate lies past the threshold, in the failing direction) is unit-tested in `summary/gate.rs`.
#[test]
fn fail_on_changed_passes_an_a_a_study() {
    let _g = serial();
    let d = tempfile::tempdir().unwrap();
    let mut args = ab_args(&d.path().join("aa"), 64, 3, &[variant("t2", "-t 2")]);
    // 15%: an A/A interval reaches past a few percent now and then (docs/methodology.md §8).
    args.extend(["--aa".into(), "--fail-on".into(), "changed".into(), "--threshold".into(), "15".into()]);
    let out = abprof().args(&args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("gate failed"), "{stderr}");
}

/// The CI gate on a real slowdown: a micro-batch of one token (`-ub 1`) makes SmolLM2's prefill
/// process the prompt token by token, about 56% slower on the test bed (measured
/// −56.29% [−57.24%, −55.09%] with these flags), so `--fail-on slower --metric prefill` exits 3
/// and names the variant, whatever other tests load the host with. The study's record stays whole.
#[test]
fn fail_on_slower_exits_3_on_a_real_prefill_slowdown() {
    let _g = serial();
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("slow");
    let srv = testbed().server.display().to_string();
    let mut args = ab_args(&root, 8, 3, &[format!("base={srv}"), format!("ub1={srv}|extra=-ub 1")]);
    let model = args.iter().position(|a| a == "--model").unwrap() + 1;
    args[model] = testbed().smollm2.display().to_string();
    let prompt = args.iter().position(|a| a == "--prompt").unwrap();
    args.splice(prompt..prompt + 2, ["--prompt-tokens".to_string(), "300".to_string()]);
    args.extend(
        // The sequential rule (docs/methodology.md §17): a 3-block paired interval has 2 degrees
        // of freedom, so one sample slowed by the loaded box can keep it from deciding; the gate
        // then takes blocks until it does, as a CI job would.
        ["--fail-on", "slower", "--metric", "prefill", "--threshold", "10", "--until-decided", "--max-samples", "8"]
            .map(String::from),
    );
    let out = abprof().args(&args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    let failed: Vec<&str> = stderr.lines().filter(|l| l.starts_with("abprof: gate failed:")).collect();
    assert_eq!(failed.len(), 1, "{stderr}");
    assert!(failed[0].contains("ub1 server prefill TPS") && failed[0].contains("--fail-on slower"), "{}", failed[0]);
    // Exit 3 is a verdict, not an error: the summary was written and printed first.
    let s = read_json(&root.join("summary.json"));
    let m = metric(&s, 1, "server-prefill-tps");
    assert_eq!(m["verdict"], "slower", "{m}");
    assert!(m["ci"]["hi_pct"].as_f64().unwrap() < -10.0, "{m}");
}

/// The CPU test bed has no power or energy reading and no power state (docs/methodology.md §9.6,
/// §9.7): the summary says so in one line each, has no energy metric, and a gate on J/token says
/// why it cannot judge instead of passing.
#[test]
fn energy_and_the_power_state_say_not_measured_on_the_cpu_test_bed() {
    let _g = serial();
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("energy");
    // 80 tokens: two 32-token decode windows a sample (§9.8), from the streamed tokens alone.
    let mut args = ab_args(&root, 80, 3, &[variant("base", "-t 2")]);
    args.extend(["--aa", "--fail-on", "slower", "--metric", "j-per-token"].map(String::from));
    let out = abprof().args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let line: Vec<&str> = stderr.lines().filter(|l| l.contains("the gate cannot judge base-again")).collect();
    assert_eq!(line.len(), 1, "{stderr}");
    assert!(line[0].contains("decode energy (J/token): not measured on this host"), "{}", line[0]);
    let s: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let why = s["energy_not_measured"].as_str().unwrap();
    assert!(why.starts_with("not measured on this host"), "{why}");
    for name in ["decode-j-per-token", "prefill-j-per-prompt-token", "decode-mean-power-w", "decode-tokens-per-j"] {
        assert!(!s["variants"][0]["metrics"].as_array().unwrap().iter().any(|m| m["metric"] == name), "{name}");
    }
    let power = s["power_state"].as_str().unwrap();
    assert!(power.starts_with("not measured on this host"), "{power}");
    assert!(s["rejected"].as_array().unwrap().is_empty(), "{:#}", s["rejected"]);
    // The windows are a table of the full text (`--full`; report.md and the page always hold it).
    let text = abprof().args(["summarize".as_ref(), root.as_os_str(), "--full".as_ref()]).output().unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("energy and power (J/token, J/prompt token, mean power, tokens/J): not measured on this host"),
        "{text}"
    );
    assert!(text.contains("power state (host.json): not measured on this host"), "{text}");
    assert!(!text.contains("J/token)\n"), "no energy verdict table: {text}");
    // Decode under heat without telemetry: each sample's two windows, their rates and the sag.
    for v in s["variants"].as_array().unwrap() {
        let windows = v["decode_windows"].as_array().unwrap();
        assert_eq!(windows.len(), 3, "one a sample: {v:#}");
        for w in windows {
            let rates: Vec<f64> =
                w["windows"].as_array().unwrap().iter().map(|x| x["tokens_per_s"].as_f64().unwrap()).collect();
            assert!(rates.len() == 2 && rates.iter().all(|r| *r > 0.0), "{w:#}");
            assert!(w["sag_pct"].as_f64().is_some() && w["windows"][0]["gfx_clock_mhz"].is_null(), "{w:#}");
        }
    }
    assert!(text.contains("decode per 32-token window"), "{text}");
    let md = std::fs::read_to_string(root.join("report.md")).unwrap();
    assert!(md.contains("### decode per 32-token window"), "{md}");
}
