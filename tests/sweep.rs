//! `abprof ab --sweep` and `--until-ci` on the real llama-server test bed (docs/methodology.md §16,
//! §17): a KV f16 vs q8_0 sweep over two prompt lengths, interrupted by SIGINT in its second point
//! and resumed, and an adaptive study that adds interleaved blocks.
mod common;
use common::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The sweep's study file. Other builds may load this 2-core host: the sweep is not about the
/// other-workload rule, so its limit is lifted (the study's own knob).
fn sweep_file(dir: &Path) -> PathBuf {
    let tb = testbed();
    let server = tb.server.display();
    let text = format!(
        r#"model = "{}"
server_args = "-c 4096 -np 1"
tokens = 4
samples = 3
ignore_eos = true
variants = ["f16={server}|kv=f16", "q8_0={server}|kv=q8_0"]

[idle]
foreign_cpu_max_pct = 100000.0

[sweep]
prompt_tokens = [500, 2000]
"#,
        tb.target.display()
    );
    let path = dir.join("sweep.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// Every file under `dir` with its bytes, but the lock and the summary (a summary is rebuilt from
/// the rest whenever the sweep's summary is).
fn files(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.file_name().is_some_and(|n| n != "abprof.lock" && n != "summary.json") {
                out.insert(p.clone(), std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

fn json(out: &std::process::Output) -> serde_json::Value {
    assert!(out.status.success(), "abprof failed: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn a_kv_sweep_over_two_prompt_lengths_resumes_after_sigint_keeping_the_finished_point() {
    let _g = serial();
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("sweep");
    let study = sweep_file(d.path());
    let args: Vec<String> = vec![
        "ab".into(),
        "--study".into(),
        study.display().to_string(),
        "--root".into(),
        root.display().to_string(),
        "--json".into(),
    ];
    let child = spawn_abprof(&args);
    let (first, second) = (root.join("points/01-prompt-tokens=500"), root.join("points/02-prompt-tokens=2000"));
    // The second point's second sample, mid-request: its first sample is done, the first point
    // is finished.
    server_mid_request(&second, 2);
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(child.id() as i32), nix::sys::signal::Signal::SIGINT).unwrap();
    let out = child.wait_with_output().unwrap();
    // The finished point as the interrupted run left it (its report written on the way out).
    let before = files(&first);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("keeps the finished points"), "{stderr}");
    let record = read_json(&root.join("sweep.json"));
    assert_eq!(record["points"][0]["state"], "done");
    assert_eq!(record["points"][1]["state"], "started");
    // The interrupted sweep's summary says what is left.
    let partial = json(&abprof().arg("summarize").arg(&root).arg("--json").output().unwrap());
    assert_eq!(partial["points"][1]["missing"].as_u64().unwrap(), 5, "{:#}", partial["points"][1]);
    let second_done = files(&second.join("samples/001-f16"));

    let s = json(&abprof().args(["ab", "--resume"]).arg(&root).arg("--json").output().unwrap());
    let after = files(&first);
    let changed: Vec<&PathBuf> =
        before.keys().chain(after.keys()).filter(|p| before.get(*p) != after.get(*p)).collect();
    assert!(changed.is_empty(), "the finished point is kept byte for byte, but these changed: {changed:?}");
    assert!(after.keys().any(|p| p.ends_with("samples/004-f16/sample.json")), "{:?}", after.keys());
    assert!(!second_done.is_empty());
    for (path, bytes) in &second_done {
        assert!(&std::fs::read(path).unwrap() == bytes, "{} was measured again", path.display());
    }
    let record = read_json(&root.join("sweep.json"));
    assert!(record["points"].as_array().unwrap().iter().all(|p| p["state"] == "done"), "{record:#}");
    // One table per metric, one row per point and variant; the candidates' verdicts are
    // Holm-adjusted across the two points.
    let decode = s["tables"].as_array().unwrap().iter().find(|t| t["metric"] == "server-decode-tps").unwrap();
    assert_eq!(decode["family"]["method"], "holm");
    assert_eq!(decode["family"]["comparisons"], 2, "{decode:#}");
    let rows = decode["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 4);
    let points: Vec<&str> = rows.iter().map(|r| r["point"].as_str().unwrap()).collect();
    assert_eq!(points, ["prompt-tokens=500", "prompt-tokens=500", "prompt-tokens=2000", "prompt-tokens=2000"]);
    for r in rows {
        assert_eq!(r["accepted"], 3, "{r:#}");
        if r["variant"] == "q8_0" {
            assert!(r["p_holm"].as_f64().unwrap() >= r["ci"]["p_value"].as_f64().unwrap());
        }
    }
    // Each point is a whole study: its own calibrated prompt, plan, samples and summary.
    for (dir, tokens) in [(&first, 500), (&second, 2000)] {
        let point = read_json(&dir.join("summary.json"));
        assert_eq!(point["expected_prompt_tokens"], tokens);
        assert_eq!(point["missing"], 0);
        assert!(std::fs::read_to_string(dir.join("study.toml")).unwrap().contains("|kv=q8_0"));
    }
    // The sweep's page: each metric drawn against the points, then its table; every point has
    // its own study report.
    let page = std::fs::read_to_string(root.join("report.html")).unwrap();
    assert!(page.contains("<section id=\"sweep\">") && page.contains("<section id=\"points\">"));
    assert_eq!(page.matches("<svg").count(), 4, "one chart per metric");
    assert!(!page.contains("class=\"problem\""), "a chart failed or a point is unfinished");
    assert!(page.contains("prompt-tokens=2000") && page.contains("Holm family of 2 comparisons"));
    assert!(std::fs::read_to_string(root.join("report.md")).unwrap().contains("| metric | point | prompt-tokens |"));
    for dir in [&first, &second] {
        assert!(dir.join("report.html").is_file(), "{}", dir.display());
    }
    // Once the sweep is complete, each point is a study in the history.
    let h = json(&abprof().args(["history", "--json"]).output().unwrap());
    let folders: Vec<&str> = h["rows"].as_array().unwrap().iter().filter_map(|r| r["folder"].as_str()).collect();
    for dir in [&first, &second] {
        assert!(folders.contains(&dir.to_str().unwrap()), "{folders:?}");
    }
    // The table for a pull request, with the axis as a column.
    let md = abprof().arg("summarize").arg(&root).args(["--format", "md"]).output().unwrap();
    let md = String::from_utf8_lossy(&md.stdout);
    assert!(md.starts_with("| metric | point | prompt-tokens | variant |"), "{md}");
}

#[test]
fn until_ci_adds_interleaved_blocks_and_says_why_it_stopped() {
    let _g = serial();
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("adaptive");
    let server = testbed().server.display().to_string();
    // An A/A study from a study file (the other-workload limit lifted, as above); ±0.001% is
    // never reached, so it must stop at max_samples, one block at a time.
    let study = d.path().join("adaptive.toml");
    std::fs::write(
        &study,
        format!(
            "model = \"{}\"\nserver_args = \"-c 4096 -np 1\"\ntokens = 4\nsamples = 2\nuntil_ci_pct = 0.001\nmax_samples = 3\nprompt = \"{}\"\nignore_eos = true\nvariants = [\"base={server}\", \"base-again={server}\"]\n[idle]\nforeign_cpu_max_pct = 100000.0\n",
            testbed().target.display(),
            calibrated_prompt(300).display()
        ),
    )
    .unwrap();
    let s = json(&abprof().args(["ab", "--json", "--study"]).arg(&study).arg("--root").arg(&root).output().unwrap());
    let a = &s["adaptive"];
    assert_eq!(a["blocks"], 3, "{a:#}");
    assert_eq!(a["stopped"], "max-samples", "{a:#}");
    let plan = read_json(&root.join("plan.json"));
    let order: Vec<u64> = plan["slots"].as_array().unwrap().iter().map(|s| s["variant"].as_u64().unwrap()).collect();
    assert_eq!(order, [0, 1, 1, 0, 0, 1], "the added block continues the alternating order");
    assert_eq!(s["variants"][1]["planned"], 3);
    assert_eq!(s["variants"][1]["accepted"], 3, "{:#}", s["rejected"]);
    let text = abprof().arg("summarize").arg(&root).output().unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("adaptive: 3 samples per variant, stopped at max_samples 3"), "{text}");
}

#[test]
fn bad_sweeps_are_refused_before_anything_is_created() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("never");
    let server = testbed().server.display().to_string();
    let model = testbed().target.display().to_string();
    let base = |extra: &[&str]| {
        let mut a: Vec<String> =
            ["ab", "--model", &model, "--prompt-tokens", "300", "--tokens", "4", "--root"].map(String::from).to_vec();
        a.push(root.display().to_string());
        a.extend(["--variant".into(), format!("a={server}|kv=f16"), "--variant".into(), format!("b={server}")]);
        a.extend(["--foreign-cpu-max".into(), SHARED_HOST.into()]);
        a.extend(extra.iter().map(|s| s.to_string()));
        abprof().args(a).output().unwrap()
    };
    let out = base(&["--sweep", "depth=1,2"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown sweep axis \"depth\""));
    let out = base(&["--sweep", "kv=q8_0,q4_0"]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("sets kv= itself"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = base(&["--sweep", "tokens=8,16"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("drop --tokens"));
    let out = base(&["--until-ci", "2", "--max-samples", "1"]);
    assert_eq!(out.status.code(), Some(2), "a cap below 2 samples is a usage error");
    assert!(!root.exists(), "nothing was created");
}

/// `--sweep env=NAME=…` crossed with `--sweep kv=…` (the toolboxes' matrices): every point a
/// study whose servers ran with the point's variable, the table with a column per axis.
/// `LLAMA_ARG_THREADS` is llama-server's own `-t` (common/arg.cpp), so the server's log says
/// which value reached it.
#[test]
fn an_env_axis_crossed_with_kv_gives_every_server_its_value() {
    let _g = serial();
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("env");
    let tb = testbed();
    let server = tb.server.display();
    let args: Vec<String> = [
        "ab",
        "--root",
        root.to_str().unwrap(),
        "--model",
        tb.target.to_str().unwrap(),
        "--server-args",
        "-c 4096 -np 1",
        "--tokens",
        "8",
        "--samples",
        "3",
        "--prompt-tokens",
        "300",
        "--ignore-eos",
        "--foreign-cpu-max",
        SHARED_HOST,
        "--sweep",
        "kv=f16,q8_0",
        "--sweep",
        "env=LLAMA_ARG_THREADS=1,2",
        "--variant",
        &format!("a={server}"),
        "--variant",
        &format!("b={server}|extra=--no-warmup"),
        "--json",
    ]
    .map(String::from)
    .to_vec();
    let s = json(&abprof().args(&args).output().unwrap());
    let points: Vec<&str> = s["points"].as_array().unwrap().iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert_eq!(
        points,
        [
            "kv=f16,env.LLAMA_ARG_THREADS=1",
            "kv=f16,env.LLAMA_ARG_THREADS=2",
            "kv=q8_0,env.LLAMA_ARG_THREADS=1",
            "kv=q8_0,env.LLAMA_ARG_THREADS=2"
        ]
    );
    let decode = s["tables"].as_array().unwrap().iter().find(|t| t["metric"] == "server-decode-tps").unwrap();
    assert_eq!(decode["family"]["comparisons"], 4, "4 points × 1 candidate: {decode:#}");
    for p in s["points"].as_array().unwrap() {
        let dir = root.join(p["dir"].as_str().unwrap());
        let threads = if p["name"].as_str().unwrap().ends_with("=1") { 1 } else { 2 };
        for sample in std::fs::read_dir(dir.join("samples")).unwrap().flatten() {
            let log = std::fs::read_to_string(sample.path().join("server.log")).unwrap();
            assert!(
                log.contains(&format!("threadpool init, n_threads = {threads}\n")),
                "{}: {log}",
                sample.path().display()
            );
        }
    }
    let csv = abprof().arg("summarize").arg(&root).args(["--format", "csv"]).output().unwrap();
    let csv = String::from_utf8_lossy(&csv.stdout);
    assert!(csv.starts_with("metric,point,kv,env.LLAMA_ARG_THREADS,variant,"), "{csv}");
}
