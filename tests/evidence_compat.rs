//! Evidence folders written by earlier releases still load: the typed sample record reads the
//! untyped `extra` of the release before it, and the summary rebuilt today from that folder
//! gives the numbers that release computed.
mod common;
use common::*;

#[test]
fn a_study_written_before_the_typed_record_summarizes_to_the_same_numbers() {
    let d = tempfile::tempdir().unwrap();
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/evidence-pre-engine/study");
    let dir = d.path().join("study");
    let st = std::process::Command::new("cp").arg("-r").arg(&src).arg(&dir).status().unwrap();
    assert!(st.success());
    let old = read_json(&src.join("summary.json"));
    let out = abprof().arg("summarize").arg(&dir).arg("--json").output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let new: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(new["missing"], 0, "every sample.json of the old release loads");
    assert_eq!(new["rejected"], serde_json::json!([]));
    for (o, n) in old["variants"].as_array().unwrap().iter().zip(new["variants"].as_array().unwrap()) {
        assert_eq!(n["accepted"], 2, "{n}");
        // The interval and verdict are the t model's since issue 20 (docs/methodology.md §8): with
        // 2 values a side there is none, and the verdict says so; every other field the old
        // release wrote has the same value today.
        let mut o = o.clone();
        for (om, nm) in o["metrics"].as_array_mut().unwrap().iter_mut().zip(n["metrics"].as_array().unwrap()) {
            // The printed change is the interval's estimate since issue 33 (docs/methodology.md
            // §8): the old release's change, the ratio of medians, is today's median_change_pct.
            // With 2 values a side there is no estimate since issue 43: the change is null beside
            // "too few samples".
            if om.get("change_pct").is_some_and(|c| !c.is_null()) {
                assert_eq!(nm["median_change_pct"], om["change_pct"], "{nm}");
                assert_eq!(nm["verdict"], "too-few-samples", "{nm}");
                assert!(nm["change_pct"].is_null(), "{nm}");
                om.as_object_mut().unwrap().remove("change_pct");
            }
            if om.get("ci").is_some_and(|c| !c.is_null()) {
                assert_eq!(nm["ci"], serde_json::Value::Null, "{nm}");
                assert_eq!(nm["verdict"], "too-few-samples", "{nm}");
                let m = om.as_object_mut().unwrap();
                m.remove("ci");
                m.remove("verdict");
            }
        }
        for key in ["metrics", "ms_per_token", "idle_gate_ms_median", "prefill", "decode", "throttled"] {
            // Fields added since (each interval's `method` and `p_value`) may stand beside them.
            assert_holds(&n[key], &o[key], &format!("{key} of {}", n["label"]));
        }
    }
    // The typed fields are the old keys: the idle gate and the per-phase server CPU were read.
    assert!(new["variants"][0]["idle_gate_ms_median"].as_f64().unwrap() > 0.0);
    assert!(new["variants"][0]["decode"]["mean_cpu_pct"].as_f64().unwrap() > 0.0);
}

/// `new` holds everything `old` does, equal: every key of every object, every element of every
/// array (same length), every number and string.
fn assert_holds(new: &serde_json::Value, old: &serde_json::Value, at: &str) {
    use serde_json::Value;
    match (new, old) {
        (Value::Object(n), Value::Object(o)) => {
            for (k, v) in o {
                assert_holds(n.get(k).unwrap_or(&Value::Null), v, &format!("{at}.{k}"));
            }
        }
        (Value::Array(n), Value::Array(o)) => {
            assert_eq!(n.len(), o.len(), "{at} changed length");
            for (i, (a, b)) in n.iter().zip(o).enumerate() {
                assert_holds(a, b, &format!("{at}.{i}"));
            }
        }
        _ => assert_eq!(new, old, "{at} changed"),
    }
}

/// Unpacks one of the H200's real evidence tarballs (tests/fixtures/h200-evidence/README.md).
fn h200_unpacked(tarball: &str) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/h200-evidence").join(tarball);
    let st = std::process::Command::new("tar").arg("-xJf").arg(&src).arg("-C").arg(d.path()).status().unwrap();
    assert!(st.success());
    d
}

/// Summarizes `study` from one of the H200's real evidence tarballs.
fn h200_summary(tarball: &str, study: &str) -> serde_json::Value {
    let d = h200_unpacked(tarball);
    let out = abprof().arg("summarize").arg(d.path().join(study)).arg("--json").output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The users' stack on a real H200 (#21): draft-mtp on the predictable qwen35moe twin accepts every
/// draft, almost 4 tokens a step, and decodes faster; on the random one it accepts none and is
/// slower. MTP makes prefill slower in both (its extra pass per ubatch).
#[test]
fn the_h200_mtp_studies_summarize_to_their_regimes() {
    for (study, faster) in [("h200-mtp-pred", true), ("h200-mtp-rand", false)] {
        let s = h200_summary("mtp-off-on.tar.xz", study);
        assert_eq!(s["rejected"], serde_json::json!([]), "{study}");
        let on = &s["variants"][1];
        assert_eq!(on["label"], "on");
        let accepted = on["acceptance_median"].as_f64().unwrap();
        assert!(if faster { accepted > 0.99 } else { accepted < 0.01 }, "{study}: {accepted}");
        let decode = &on["metrics"][0];
        assert_eq!(decode["metric"], "server-decode-tps");
        assert_eq!(decode["verdict"], if faster { "faster" } else { "slower" }, "{study}: {decode}");
        let prefill = on["metrics"].as_array().unwrap().iter().find(|m| m["metric"] == "server-prefill-tps").unwrap();
        assert_eq!(prefill["verdict"], "slower", "{study}: {prefill}");
    }
}

/// Real NVML readings (#22): every decode of KV f16 and q8_0 has its energy split and a J/token,
/// and q8_0's slower decode costs more energy a token.
#[test]
fn the_h200_energy_study_splits_decode_energy_from_real_nvml_readings() {
    let s = h200_summary("energy-f16-q8_0.tar.xz", "h200-energy");
    let j = |i: usize| s["variants"][i]["decode"]["j_per_token"].as_f64().unwrap();
    assert!(j(0) > 0.5 && j(0) < 3.0, "f16 {}", j(0));
    assert!(j(1) > j(0) * 1.3, "q8_0 {} vs f16 {}", j(1), j(0));
    for v in s["variants"].as_array().unwrap() {
        assert_eq!(v["decode"]["samples"], 4, "{v}");
        assert!(v["decode"]["energy_from"].is_string(), "{v}");
    }
}

/// The one-line answer of a decided study (issue #42, docs/methodology.md §8 "The answer"): the
/// H200's KV q8_0 against f16, 4 paired blocks, is the last line `summarize` prints, with the
/// change, its interval, the verdict, the blocks and the study's wall time.
#[test]
fn the_h200_energy_study_ends_with_its_one_line_answer() {
    let d = h200_unpacked("energy-f16-q8_0.tar.xz");
    let out = abprof().arg("summarize").arg(d.path().join("h200-energy")).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let last = text.lines().last().unwrap();
    assert!(last.starts_with("q8_0 vs f16: server decode -31.50% [-33.31%, -29.64%], "), "{last}");
    assert!(last.ends_with(" (4 blocks, 72 s)"), "{last}");
}

/// The soak on a real H200 (#22 item 4, methodology §4.2): 20 back-to-back 20,000/512 requests per
/// cold server, each with its rate and NVML's temperature at its start, power and clock over it.
/// The device warms from its idle 36 °C to 42–43 °C within the first requests and holds its clock,
/// and the decode does not sag (the drift's interval holds 0).
#[test]
fn the_h200_soak_keeps_twenty_requests_with_their_readings() {
    let s = h200_summary("soak-f16.tar.xz", "h200-soak");
    assert_eq!(s["rejected"], serde_json::json!([]));
    let k = &s["variants"][0]["soak"];
    let requests = k["requests"].as_array().unwrap();
    assert_eq!(requests.len(), 20, "{k}");
    let f = |r: &serde_json::Value, key: &str| r[key].as_f64().unwrap_or_else(|| panic!("{key}: {r}"));
    for r in requests {
        assert!((250.0..350.0).contains(&f(r, "decode_tps")), "{r}");
        assert!((300.0..450.0).contains(&f(r, "power_w")), "{r}");
        assert_eq!(f(r, "gfx_clock_mhz"), 1980.0, "{r}");
    }
    assert!(f(&requests[19], "start_temp_c") > f(&requests[0], "start_temp_c") + 3.0, "{k}");
    assert_eq!(k["drift_pct"].as_array().unwrap().len(), 3);
    let ci: Vec<f64> = k["drift_ci_pct"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect();
    assert!(ci[0] < 0.0 && ci[1] > 0.0, "no sag at this load: {ci:?}");
    // The report draws it: rate per request with temperature, power and clock panels.
    let d = h200_unpacked("soak-f16.tar.xz");
    let dir = d.path().join("h200-soak");
    let out = abprof().arg("report").arg(&dir).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let page = std::fs::read_to_string(dir.join("report.html")).unwrap();
    let at = page.find("<h3 id=\"soak\">").expect("the soak section");
    let chart = &page[at..at + page[at..].find("</svg>").expect("the soak chart")];
    for axis in ["decode (tok/s)", "prefill (tok/s)", "start temp (°C)", "power (W)", "gfx clock (MHz)"] {
        assert!(chart.contains(axis), "no {axis} panel");
    }
}

/// The thermal gate end to end on a real H200 (#22 item 3): every sample waited behind it and
/// recorded its start temperature, each inside the gate's target (within 5 °C of the first idle
/// reading, or at most 40 °C); the verdicts are those of the ungated energy study.
#[test]
fn the_h200_thermal_gate_records_every_samples_start_temperature() {
    let d = h200_unpacked("thermal-f16-q8_0.tar.xz");
    let samples = d.path().join("h200-thermal/samples");
    let mut starts = Vec::new();
    for e in std::fs::read_dir(&samples).unwrap() {
        let rec: serde_json::Value =
            serde_json::from_slice(&std::fs::read(e.unwrap().path().join("sample.json")).unwrap()).unwrap();
        let t = &rec["extra"]["idle_gate"]["thermal"];
        assert!(t["target"].as_str().unwrap().contains("within 5 °C"), "{t}");
        assert!(t["cooling_ms"].as_f64().unwrap() >= 0.0, "{t}");
        starts.push(t["start_c"].as_f64().unwrap());
    }
    assert_eq!(starts.len(), 6);
    assert!(starts.iter().all(|&c| c <= 41.0), "{starts:?}");
    let s = h200_summary("thermal-f16-q8_0.tar.xz", "h200-thermal");
    let decode = &s["variants"][1]["metrics"][0];
    assert_eq!((decode["metric"].as_str(), decode["verdict"].as_str()), (Some("server-decode-tps"), Some("slower")));
    let energy =
        s["variants"][1]["metrics"].as_array().unwrap().iter().find(|m| m["metric"] == "decode-j-per-token").cloned();
    // The JSON's verdict words are one set for every metric ("slower": worse); the text says
    // "less efficient" for J/token.
    assert_eq!(energy.map(|m| m["verdict"].clone()), Some("slower".into()));
}

/// The MTP yardstick on a real H200 (#21 item 6): the nine prompts' aggregate block, every draft
/// of the predictable twin accepted (1,287 of 1,287 a sample at 192 tokens), nothing drafted off.
#[test]
fn the_h200_mtp_yardstick_gives_the_prs_aggregate_block() {
    let s = h200_summary("yardstick-mtp-off-on.tar.xz", "h200-yard");
    assert_eq!(s["rejected"], serde_json::json!([]));
    let y = |i: usize| s["variants"][i]["mtp_yardstick"].clone();
    assert_eq!(y(0)["drafted"], serde_json::json!([0, 0, 0]), "{}", y(0));
    assert_eq!(y(1)["requests"], serde_json::json!([9, 9, 9]));
    assert_eq!(y(1)["drafted"], serde_json::json!([1287, 1287, 1287]), "{}", y(1));
    assert_eq!(y(1)["acceptance_median"].as_f64(), Some(1.0));
    assert_eq!(s["variants"][1]["metrics"][0]["verdict"], "faster");
}

/// Decode under heat on real NVML readings (docs/methodology.md §9.8): `abprof report` draws each
/// variant's accepted samples per 32-token window with the gfx clock, power and temperature panels
/// on one time axis, above the windows table, and finds no signal missing.
#[test]
fn the_h200_energy_report_draws_decode_windows_with_clock_power_and_temperature() {
    let d = h200_unpacked("energy-f16-q8_0.tar.xz");
    let dir = d.path().join("h200-energy");
    let out = abprof().arg("report").arg(&dir).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let page = std::fs::read_to_string(dir.join("report.html")).unwrap();
    let start = page.find("<h3 id=\"decode-windows\">").expect("the decode windows heading");
    let windows = &page[start..start + page[start..].find("<table").expect("the windows table")];
    let charts: Vec<&str> = windows.split("<svg").skip(1).collect();
    assert_eq!(charts.len(), 2, "one chart per variant");
    for (chart, label) in charts.iter().zip(["f16", "q8_0"]) {
        assert!(chart.contains(&format!("{label} · decode per 32-token window")), "{label}");
        for axis in ["decode (tok/s)", "gfx clock (MHz)", "power (W)", "hottest temp (°C)"] {
            assert!(chart.contains(axis), "{label}: no {axis} panel");
        }
        // Every accepted sample in the legend with its sag and clock change.
        assert_eq!(chart.matches(" · sag ").count(), 4, "{label}");
        assert_eq!(chart.matches(" · clock ").count(), 4, "{label}");
    }
    assert_eq!(windows.matches("<figcaption>").count(), 2);
    assert!(!windows.contains("not measured on this host") && !windows.contains("class=\"problem\""));
}

/// A folder whose summary.json cannot be written (here a folder stands in its place, which no
/// write can replace, even root's) still prints its whole summary, then one line says it was not
/// kept, exit 1 (issue 35: a read-only folder printed nothing).
#[test]
fn a_summary_that_cannot_be_kept_is_printed_anyway_with_one_line() {
    let d = tempfile::tempdir().unwrap();
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/evidence-pre-engine/study");
    let dir = d.path().join("study");
    assert!(std::process::Command::new("cp").arg("-r").arg(&src).arg(&dir).status().unwrap().success());
    std::fs::remove_file(dir.join("summary.json")).unwrap();
    std::fs::create_dir_all(dir.join("summary.json").join("blocker")).unwrap();
    let out = abprof().arg("summarize").arg(&dir).arg("--json").output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let s: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(s["variants"].as_array().unwrap().len(), 2, "{s}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "{stderr}");
    assert!(lines[0].contains("was not kept") && lines[0].contains("summary"), "{}", lines[0]);
}
