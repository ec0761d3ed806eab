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
