//! The decode roofline on the real test bed (docs/methodology.md §18): `abprof roofline` prints
//! the bytes of one decode step from the GGUF header with the measured host bandwidth, and a
//! real A/B study's summary shows each variant's decode as a percentage of its floor with the
//! inputs beside it.
mod common;
use common::*;

/// Weights one decode step of the random qwen3moe target reads: 42,943,488 dense (the output
/// head among them) + 3,145,728 routed experts (2 of 8) + 272 (one embedding row); unit-tested
/// against the gguf package's tensor sizes in src/roofline/bytes.rs.
const TARGET_WEIGHTS: f64 = 46_089_488.0;
/// KV cache bytes per position of context: 4 layers × 2 KV heads × 64 dims, K and V.
const KV_F16: f64 = 4.0 * 2.0 * 64.0 * 2.0 * 2.0;
const KV_Q8_0: f64 = 4.0 * 2.0 * 68.0 * 2.0;

fn json(out: &std::process::Output) -> serde_json::Value {
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn roofline_prints_the_bytes_the_bandwidth_and_the_floor_and_caches_the_bandwidth() {
    let cache = tempfile::tempdir().unwrap();
    let model = &testbed().target;
    let run = |extra: &[&str]| {
        abprof()
            .env("ABPROF_CACHE", cache.path())
            .args(["roofline", "--model"])
            .arg(model)
            .args(["--kv", "q8_0", "--ctx", "332", "--device", "cpu", "--threads", "2"])
            .args(extra)
            .output()
            .unwrap()
    };
    let first = json(&run(&["--json"]));
    assert_eq!(first["model"]["bytes"]["total"].as_f64().unwrap(), TARGET_WEIGHTS + 332.0 * KV_Q8_0);
    assert_eq!(first["model"]["bytes"]["experts_used"], 3_145_728);
    let bw = &first["bandwidth"];
    assert_eq!(bw["target"], serde_json::json!({"kind": "cpu", "threads": 2}));
    assert_eq!(bw["cached"], false);
    let gb = bw["gb_per_s"].as_f64().unwrap();
    assert!(gb > 0.1 && gb < 10_000.0, "{bw}");
    assert!(bw["buffer_bytes"].as_u64().unwrap() >= 64 << 20);
    let floor = first["floor_ms"].as_f64().unwrap();
    assert!((floor - (TARGET_WEIGHTS + 332.0 * KV_Q8_0) / (gb * 1e9) * 1e3).abs() < 1e-9);
    // The second run within the day takes the same figure from the cache.
    let second = json(&run(&["--json"]));
    assert_eq!(second["bandwidth"]["cached"], true);
    assert_eq!(second["bandwidth"]["gb_per_s"], bw["gb_per_s"]);
    let text = String::from_utf8_lossy(&run(&[]).stdout).to_string();
    for want in
        ["dense weights", "42,943,488 B", "2 of 8 experts", "332 tokens of context × 1,088 B", "GB/s", "(cached)"]
    {
        assert!(text.contains(want), "{want:?} missing from:\n{text}");
    }
    assert!(text.contains("floor      ") && text.contains("ms per decode step"), "{text}");
}

#[test]
fn a_device_runtime_that_is_absent_or_sees_no_device_is_one_line_and_exit_1() {
    // This host has no GPU: whichever runtime library is installed or not, no figure comes back.
    for device in ["cuda", "hip"] {
        let out = abprof().args(["roofline", "--device", device]).output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{device}");
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(text.lines().count(), 1, "{text}");
        assert!(text.starts_with("bandwidth  unavailable for "), "{text}");
        assert!(text.contains("set ABPROF_") || text.contains("sees no device"), "{text}");
    }
    let out = abprof().args(["roofline", "--ctx", "10"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "--ctx needs --model");
    let out = abprof().args(["roofline", "--model", "/nonexistent.gguf"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not a file"));
}

#[test]
fn the_summary_of_a_cpu_study_shows_each_variants_percent_of_floor_with_its_inputs() {
    let _g = serial();
    let d = tempfile::tempdir().unwrap();
    let tb = testbed();
    let study = d.path().join("study.toml");
    // Other builds share this host's two cores; the test is about the floor, not that rule.
    std::fs::write(
        &study,
        format!(
            r#"model = "{model}"
server_args = "{common}"
tokens = 32
samples = 2
variants = ["f16={bin}|kv=f16", "q8_0={bin}|kv=q8_0"]
prompt = "{prompt}"
ignore_eos = true

[idle]
foreign_cpu_max_pct = 400.0
"#,
            model = tb.target.display(),
            common = COMMON,
            bin = tb.server.display(),
            prompt = calibrated_prompt(300).display()
        ),
    )
    .unwrap();
    let root = d.path().join("ab");
    let out = abprof().args(["ab", "--study"]).arg(&study).arg("--root").arg(&root).arg("--json").output().unwrap();
    let s = json(&out);
    let rec = read_json(&root.join("roofline.json"));
    assert_eq!(
        rec["variants"][0]["target"],
        serde_json::json!({"kind": "cpu", "threads": 2}),
        "-t 2 on a GPU-less host"
    );
    for (i, kv) in [(0, KV_F16), (1, KV_Q8_0)] {
        let v = &s["variants"][i];
        assert_eq!(v["accepted"], 2, "{v}");
        let fl = &v["floor"];
        // Every sample: 300 prompt tokens + 32 generated, so the decode attends to 300 + 32/2.
        assert_eq!(fl["context_tokens"], 316.0);
        assert_eq!(fl["bytes"]["total"].as_f64().unwrap(), TARGET_WEIGHTS + 316.0 * kv, "{fl}");
        let gb = fl["bandwidth"]["gb_per_s"].as_f64().unwrap();
        let floor = fl["floor_ms"].as_f64().unwrap();
        assert!((floor - fl["bytes"]["total"].as_f64().unwrap() / (gb * 1e9) * 1e3).abs() < 1e-9);
        let step = fl["ms_per_step"].as_f64().unwrap();
        assert!((step - 1000.0 / v["decode_tps_n_minus_1_median"].as_f64().unwrap()).abs() < 1e-9);
        let pct = fl["pct_of_floor"].as_f64().unwrap();
        assert!((pct - 100.0 * step / floor).abs() < 1e-9 && pct > 0.0, "{fl}");
        assert_eq!(fl["missing"], serde_json::json!([]));
    }
    // The floor is a table of the full text (`--full`; report.md and the page always hold it).
    let text = abprof().arg("summarize").arg(&root).arg("--full").output().unwrap();
    let text = String::from_utf8_lossy(&text.stdout).to_string();
    for want in ["decode floor", "% of floor", "host streaming read", "f16 reads per step:", "q8_0 reads per step:"] {
        assert!(text.contains(want), "{want:?} missing from:\n{text}");
    }
    // A step under its floor says why it can be (the test bed's model fits in the CPU's caches).
    let under = (0..2).any(|i| s["variants"][i]["floor"]["pct_of_floor"].as_f64().unwrap() < 100.0);
    assert_eq!(text.contains("under 100% of floor") && text.contains("CPU's caches"), under, "{text}");
    // The floor table's own row, anchored on its heading: a measured figure elsewhere (a decode
    // median that happens to read 316.x) cannot be taken for it.
    let floor_table = &text[text.find("\ndecode floor: bytes one decode step reads").expect("the floor table")..];
    let row = floor_table.lines().find(|l| l.trim_start().starts_with("q8_0")).unwrap();
    // Read by column (variant, ms/step, floor ms, % of floor, GB/s, bytes/step, context, KV), so a
    // measured cell that happens to read the same digits cannot stand in for another.
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert!(cells.len() >= 8 && cells[3].ends_with('%'), "the floor row of q8_0: {row}");
    assert_eq!(cells[6], "316.0", "q8_0's context: {row}");
    assert_eq!(cells[5], "46,433,296", "q8_0 bytes per step at 316 tokens: {row}");
}
