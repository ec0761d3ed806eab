//! A busy host delays a sample instead of spoiling it (docs/methodology.md §9.1): the idle gate
//! waits for other processes' CPU before each request, and a host that never quiets ends the
//! study in one line. On the real test bed, beside busy loops this test starts and kills itself;
//! the limit is the host's background at the start plus half a core ([`foreign_limit`]), so the
//! tests hold beside whatever else the host runs.
mod common;
use common::*;
use std::path::Path;
use std::time::{Duration, Instant};

fn variant(label: &str) -> String {
    format!("{label}={}", testbed().server.display())
}

/// The first sample's record of the study in `root`.
fn first_sample(root: &Path) -> serde_json::Value {
    let dir = std::fs::read_dir(root.join("samples"))
        .unwrap()
        .flatten()
        .find(|e| e.file_name().to_string_lossy().starts_with("001-"))
        .unwrap()
        .path();
    read_json(&dir.join("sample.json"))
}

/// Busy loops crowding every core for the study's first 60 s: its first sample waits at the gate
/// until they end, and the study ends with a verdict. Every sample's request began on a host the
/// gate found quiet, so a sample rejected `other-workload` (other tests' or builds' load on a
/// shared host) is one whose load began during its request.
#[test]
fn a_host_busy_for_a_minute_delays_the_first_sample_and_the_study_still_decides() {
    let _g = serial();
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("ab");
    let mut args = ab_args(&root, 16, 3, &[variant("a"), variant("b")]);
    set_foreign_limit(&mut args, foreign_limit());
    let busy = BusyLoops::crowding();
    let t0 = Instant::now();
    let child = spawn_abprof(&args);
    std::thread::sleep(Duration::from_secs(60).saturating_sub(t0.elapsed()));
    drop(busy);
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let s: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for dir in std::fs::read_dir(root.join("samples")).unwrap().flatten() {
        let Ok(text) = std::fs::read_to_string(dir.path().join("sample.json")) else { continue };
        let rec: serde_json::Value = serde_json::from_str(&text).unwrap();
        let w = &rec["extra"]["idle_gate"]["foreign"];
        let quiet = w["foreign_pct"].as_f64().unwrap() <= w["max_pct"].as_f64().unwrap();
        assert!(w["timed_out"] == false && quiet, "{}: {w}", dir.path().display());
    }
    eprintln!("rejected: {:#}", s["rejected"]);
    let decode = s["variants"][1]["metrics"].as_array().unwrap().iter().find(|m| m["metric"] == "server-decode-tps");
    assert_ne!(decode.unwrap()["verdict"], "too-few-samples", "{:#}", s["variants"][1]);

    let wait = &first_sample(&root)["extra"]["idle_gate"]["foreign"];
    let waited_s = wait["waited_ms"].as_f64().unwrap() / 1e3;
    eprintln!("the gate waited {waited_s:.1} s for other processes before the first sample: {wait}");
    assert!(waited_s > 30.0 && wait["timed_out"] == false, "{wait}");
    assert!(wait["top"].as_array().is_some_and(|t| t.iter().any(|p| p["name"] == "sh")), "{wait}");
    assert!(err.contains("waits for other processes to quiet down") && err.contains("(sh)"), "{err}");
}

/// Busy loops crowding every core for the whole study: each wait times out (`--idle-timeout 2`), and
/// the third in a row ends the study with exit status 1 and one line naming the processes and
/// `abprof doctor`; the samples taken stay in the evidence, `summarize` reads them, and the
/// restore hooks ran.
#[test]
fn a_host_that_never_quiets_ends_the_study_in_one_line() {
    let _g = serial();
    let d = tempfile::tempdir().unwrap();
    let (root, markers) = (d.path().join("ab"), d.path().join("markers"));
    std::fs::create_dir_all(&markers).unwrap();
    let mut args = small_study(&root, &markers, 16, 3, &[variant("a"), variant("b")]);
    args.extend(["--idle-timeout".into(), "2".into()]);
    set_foreign_limit(&mut args, foreign_limit());
    let busy = BusyLoops::crowding();
    let t0 = Instant::now();
    let out = abprof().args(&args).output().unwrap();
    let took = t0.elapsed();
    drop(busy);
    let lines = stderr_lines(&out);
    eprintln!("ended after {:.0} s: {lines:#?}", took.as_secs_f64());
    assert_eq!(out.status.code(), Some(1), "{lines:?}");
    assert!(took < Duration::from_secs(120), "{took:?}");
    let ending: Vec<&String> = lines.iter().filter(|l| !is_progress(l)).collect();
    assert_eq!(ending.len(), 1, "{lines:#?}");
    let line = ending[0];
    assert!(line.contains("never quieted") && line.contains("abprof doctor") && line.contains("(sh)"), "{line}");
    assert!(line.contains(&format!("--resume {}", root.display())), "{line}");

    // Two samples were taken (their requests went ahead after a timeout) and are kept.
    let order = std::fs::read_to_string(root.join("order.jsonl")).unwrap();
    assert_eq!(order.lines().count(), 3, "{order}");
    let wait = &first_sample(&root)["extra"]["idle_gate"]["foreign"];
    assert_eq!(wait["timed_out"], true, "{wait}");
    let summary = abprof().arg("summarize").arg(&root).arg("--json").output().unwrap();
    let s: serde_json::Value = serde_json::from_slice(&summary.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&summary.stderr)));
    let rejected = s["rejected"].as_array().unwrap();
    let busy = |r: &&serde_json::Value| r["reasons"].as_array().unwrap().iter().any(|x| x["rule"] == "other-workload");
    assert_eq!(rejected.iter().filter(busy).count(), 2, "both requests ran beside the loops: {rejected:#?}");
    assert_eq!(marker_lines(&markers.join("after")), 1, "the restore hook ran");
}
