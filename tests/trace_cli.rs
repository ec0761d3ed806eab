//! `abprof attribute` and `abprof compare-traces` on the fixtures in traces/: the generated rocpd
//! databases (known totals in traces/*.expected.json, written by scripts/make_rocpd_fixture.py),
//! the real rocprofv3 CSVs and the real Nsight Systems export.
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;

fn traces() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("traces")
}

fn abprof(args: &[&str]) -> assert_cmd::assert::Assert {
    Command::cargo_bin("abprof").unwrap().current_dir(env!("CARGO_MANIFEST_DIR")).args(args).assert()
}

fn json(args: &[&str]) -> Value {
    let out = abprof(args).success().get_output().stdout.clone();
    serde_json::from_slice(&out).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out)))
}

fn stderr_of_failure(args: &[&str]) -> String {
    let out = abprof(args).failure().code(1).get_output().stderr.clone();
    let text = String::from_utf8(out).unwrap();
    assert_eq!(text.trim_end().lines().count(), 1, "one line expected: {text}");
    text
}

fn expected(name: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(traces().join(name)).unwrap()).unwrap()
}

/// {category: (calls, ns)} from an attribution's category lines.
fn categories(lines: &Value) -> BTreeMap<String, (u64, u64)> {
    lines
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (c["category"].as_str().unwrap().to_string(), (c["calls"].as_u64().unwrap(), c["ns"].as_u64().unwrap()))
        })
        .collect()
}

/// {category: (calls, ns)} from the generator's expected phase.
fn expected_categories(phase: &Value) -> BTreeMap<String, (u64, u64)> {
    phase["categories"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), (v["calls"].as_u64().unwrap(), v["total_ns"].as_u64().unwrap())))
        .collect()
}

fn phase_totals(phase: &Value) -> (u64, u64) {
    expected_categories(phase).values().fold((0, 0), |(c, n), (c2, n2)| (c + c2, n + n2))
}

fn check_rocpd_fixture(folder: &str, expected_file: &str) {
    let want = expected(expected_file);
    let got = json(&["attribute", &format!("traces/{folder}"), "--json"]);
    assert_eq!(got["window"]["method"], "manifest-window");
    assert_eq!(got["per_token_divisor"], want["decode_steps"]);
    assert_eq!(got["window"]["decode_start_ns"], want["decode_window"]["start_ns"]);

    let phases = &want["phases"];
    assert_eq!(categories(&got["categories"]), expected_categories(&phases["decode"]), "decode categories");
    assert_eq!(categories(&got["prefill_categories"]), expected_categories(&phases["prefill"]), "prefill categories");
    for (key, phase) in [("before_prefill", "before_prefill"), ("after_decode", "after_decode"), ("decode", "decode")] {
        let (calls, ns) = phase_totals(&phases[phase]);
        assert_eq!((got[key]["calls"].as_u64().unwrap(), got[key]["ns"].as_u64().unwrap()), (calls, ns), "{key}");
    }

    // Per kernel (by instantiation: the report drops parameter lists).
    let mut want_kernels: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    for (name, v) in phases["decode"]["kernels"].as_object().unwrap() {
        let e = want_kernels.entry(abprof::trace::names::instantiation(name)).or_default();
        e.0 += v["calls"].as_u64().unwrap();
        e.1 += v["total_ns"].as_u64().unwrap();
    }
    let got_kernels: BTreeMap<String, (u64, u64)> = got["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| (k["name"].as_str().unwrap().to_string(), (k["calls"].as_u64().unwrap(), k["ns"].as_u64().unwrap())))
        .collect();
    assert_eq!(got_kernels, want_kernels);

    let decode_ns = phase_totals(&phases["decode"]).1 as f64;
    let steps = want["decode_steps"].as_f64().unwrap();
    assert!((got["gpu_ms_per_token"].as_f64().unwrap() - decode_ns / steps / 1e6).abs() < 1e-12);
    // The synthetic sampler kernel is deliberately unknown to the rules.
    let unmatched: Vec<&str> =
        got["unmatched"].as_array().unwrap().iter().map(|k| k["name"].as_str().unwrap()).collect();
    assert_eq!(unmatched, ["greedy_sampler_fused<256>"]);
}

/// The same runs written by rocpd schema 3.0.2 (graph columns on the dispatch) and 4.1.0 (its
/// context folded into rocpd_track, a track_id on each dispatch), from AMD's versioned DDL
/// (traces/README.md): the same known totals to the nanosecond, and the version named.
#[test]
fn rocpd_schema_3_0_2_and_4_1_0_fixtures_match_their_known_totals_exactly() {
    check_rocpd_fixture("rocpd-3.0.2-kv-f16", "rocpd-kv-f16.expected.json");
    check_rocpd_fixture("rocpd-4.1.0-kv-q8_0", "rocpd-kv-q8_0.expected.json");
    for (folder, version) in [("rocpd-3.0.2-kv-f16", "3.0.2"), ("rocpd-4.1.0-kv-q8_0", "4.1.0")] {
        let got = json(&["attribute", &format!("traces/{folder}"), "--json"]);
        let format = got["format"].as_str().unwrap_or_default().to_string();
        assert!(format.contains(&format!("schema {version}")), "{folder}: {got:#}");
    }
}

#[test]
fn generated_rocpd_fixtures_match_their_known_totals_exactly() {
    check_rocpd_fixture("rocpd-kv-f16", "rocpd-kv-f16.expected.json");
    check_rocpd_fixture("rocpd-kv-q8_0", "rocpd-kv-q8_0.expected.json");
}

#[test]
fn bare_rocpd_file_finds_decode_by_step_gaps() {
    let want = expected("rocpd-kv-f16.expected.json");
    let got = json(&["attribute", "traces/rocpd-kv-f16/trace.db", "--tokens", "9", "--json"]);
    assert_eq!(got["window"]["method"], "step-gaps");
    assert_eq!(categories(&got["categories"]), expected_categories(&want["phases"]["decode"]));
    // Without a manifest the request boundary is unknown: warmup and prefill are one bucket.
    let (c1, n1) = phase_totals(&want["phases"]["prefill"]);
    let (c2, n2) = phase_totals(&want["phases"]["before_prefill"]);
    assert_eq!((got["prefill"]["calls"].as_u64().unwrap(), got["prefill"]["ns"].as_u64().unwrap()), (c1 + c2, n1 + n2));
}

#[test]
fn real_nsys_export_has_five_saxpy_kernels() {
    let got = json(&["attribute", "traces/saxpy-mpi-cuda_nsys_perlmutter0.sqlite", "--json"]);
    assert!(got["format"].as_str().unwrap().contains("export schema 2.9.1"), "{}", got["format"]);
    assert_eq!(got["window"]["method"], "whole-trace");
    let kernels = got["kernels"].as_array().unwrap();
    assert_eq!(kernels.len(), 1);
    assert_eq!(kernels[0]["name"], "saxpy");
    assert_eq!(kernels[0]["calls"], 5);
    // end - start of the five rows, summed
    assert_eq!(kernels[0]["ns"], 17_704_808u64 + 17_733_416 + 17_700_808 + 17_720_488 + 17_713_960);
    assert_eq!(got["unmatched"][0]["name"], "saxpy");
}

#[test]
fn real_rocprofv3_csv_has_nine_dispatches_with_their_durations() {
    let got = json(&["attribute", "traces/kernel_trace.csv", "--json"]);
    assert_eq!(got["format"], "rocprofv3 kernel_trace.csv");
    assert_eq!(got["decode"]["calls"], 9);
    let by_name: BTreeMap<String, (u64, u64)> = got["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| (k["name"].as_str().unwrap().to_string(), (k["calls"].as_u64().unwrap(), k["ns"].as_u64().unwrap())))
        .collect();
    let want: BTreeMap<String, (u64, u64)> = [
        ("addition_kernel<float>", (3, 12_800 + 11_400 + 9_840)),
        ("divide_kernel", (2, 11_200 + 12_440)),
        ("multiply_kernel", (2, 11_160 + 9_920)),
        ("subtract_kernel", (2, 8_240 + 9_160)),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    assert_eq!(by_name, want);
}

#[test]
fn rocprofv3_csv_with_truncated_kernel_names_is_read() {
    // rocprofv3 -T (--truncate-kernels) output: complete rows, names without templates or parameters
    let got = json(&["attribute", "traces/kernel_trace_truncated.csv", "--json"]);
    assert_eq!(got["decode"]["calls"], 4);
    assert_eq!(got["decode"]["ns"], 11_640u64 + 13_080 + 11_440 + 8_680);
}

#[test]
fn damaged_and_foreign_files_are_refused_in_one_line() {
    let cases = [
        ("traces/kernel_trace_cut.csv", "ends in the middle of line 6"),
        ("traces/corrupt.db", "corrupt or truncated"),
        ("traces/legacy.rpd", "legacy rocmProfileData (RPD) database"),
        ("traces/memory_copy_trace.csv", "memory copy trace, not a kernel trace"),
        ("traces/rocpd-to-csv.csv", "API trace"),
        ("traces/kernel_names.csv", "counter collection CSV"),
        ("traces/README.md", "not a CSV header"),
        ("traces", "not an `abprof trace` output folder"),
        ("traces/does-not-exist.db", "No such file"),
    ];
    for (path, want) in cases {
        let err = stderr_of_failure(&["attribute", path]);
        assert!(err.starts_with("abprof: error: ") && err.contains(want), "{path}: {err}");
    }
}

#[test]
fn compare_traces_scales_to_measured_and_names_the_moved_kernels() {
    let got = json(&[
        "compare-traces",
        "--variant",
        "f16=traces/rocpd-kv-f16",
        "--variant",
        "q8=traces/rocpd-kv-q8_0",
        "--json",
    ]);
    let f16 = expected("rocpd-kv-f16.expected.json");
    let q8 = expected("rocpd-kv-q8_0.expected.json");
    let measured = [f16["measured_ms_per_token"].as_f64().unwrap(), q8["measured_ms_per_token"].as_f64().unwrap()];
    assert_eq!(got["variants"][1]["measured_ms_per_token"].as_f64().unwrap(), measured[1]);

    let rows = got["categories"].as_array().unwrap();
    for i in 0..2 {
        let sum: f64 = rows.iter().map(|r| r["ms_per_token"][i].as_f64().unwrap()).sum();
        assert!((sum - measured[i]).abs() < 1e-9, "variant {i}: categories sum to {sum}");
    }
    let share_sum: f64 = rows.iter().map(|r| r["share_of_delta"][1].as_f64().unwrap()).sum();
    assert!((share_sum - 1.0).abs() < 1e-9);

    // q8_0 KV: flash attention moved most, from its known traced shares.
    let fa = rows.iter().find(|r| r["category"] == "flash attention").unwrap();
    let share = |e: &Value| {
        let d = &e["phases"]["decode"]["categories"];
        let total: u64 = d.as_object().unwrap().values().map(|v| v["total_ns"].as_u64().unwrap()).sum();
        d["flash attention"]["total_ns"].as_u64().unwrap() as f64 / total as f64
    };
    let want_delta = share(&q8) * measured[1] - share(&f16) * measured[0];
    assert!((fa["delta"][1].as_f64().unwrap() - want_delta).abs() < 1e-12);
    assert_eq!(got["moved_kernels"][0]["kernel"], "flash_attn_ext_vec");
    assert_eq!(got["moved_kernels"][0]["names"][1], "flash_attn_ext_vec<128, 1, (ggml_type)8, (ggml_type)8, false>");

    let unattributed = got["variants"][0]["unattributed_ms_per_token"].as_f64().unwrap();
    let traced = got["variants"][0]["traced_gpu_ms_per_token"].as_f64().unwrap();
    assert!((unattributed - (measured[0] - traced)).abs() < 1e-12);

    let text =
        abprof(&["compare-traces", "--variant", "f16=traces/rocpd-kv-f16", "--variant", "q8=traces/rocpd-kv-q8_0"])
            .success()
            .get_output()
            .stdout
            .clone();
    let text = String::from_utf8(text).unwrap();
    assert!(text.contains("unattributed (measured - GPU busy)") && text.contains("flash attention"), "{text}");
}

#[test]
fn compare_traces_refuses_a_benchmark_of_another_output_length() {
    let err = stderr_of_failure(&[
        "compare-traces",
        "--variant",
        "f16=traces/rocpd-kv-f16",
        "--variant",
        "q8=traces/rocpd-kv-q8_0-bench1024",
    ]);
    assert!(err.contains("a 9-token trace scaled by a 1024-token TPS is simply wrong"), "{err}");
    let err = stderr_of_failure(&[
        "compare-traces",
        "--variant",
        "a=traces/kernel_trace.csv",
        "--variant",
        "b=traces/kernel_trace.csv:1.5",
    ]);
    assert!(err.contains("variant a: no ms/token"), "{err}");
    let err = stderr_of_failure(&["compare-traces", "--variant", "a=traces/rocpd-kv-f16"]);
    assert!(err.contains("at least two --variant"), "{err}");
    // A malformed spec is a usage error, refused before any trace is read (exit 2).
    let out = abprof(&["compare-traces", "--variant", "nonsense", "--variant", "b=x"]).failure().code(2);
    let err = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert_eq!(err.trim_end().lines().count(), 1, "one line expected: {err}");
    assert!(err.contains("expected LABEL=TRACE[:MS_PER_TOK]"), "{err}");
}

#[test]
fn custom_rules_file_replaces_the_builtin_categories() {
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("rules.toml");
    std::fs::write(&rules, "[[rule]]\ncategory = \"blas-ish\"\nregex = '^(addition|multiply)_kernel$'\n").unwrap();
    let got = json(&["attribute", "traces/kernel_trace.csv", "--rules", rules.to_str().unwrap(), "--json"]);
    assert_eq!(categories(&got["categories"])["blas-ish"], (5, 12_800 + 11_400 + 9_840 + 11_160 + 9_920));
    std::fs::write(&rules, "[[rule]]\ncategory = \"x\"\nregex = '('\n").unwrap();
    let err = stderr_of_failure(&["attribute", "traces/kernel_trace.csv", "--rules", rules.to_str().unwrap()]);
    assert!(err.contains("rule 1 (x): invalid regex"), "{err}");
}

/// The H200 traces (four decode steps each, cut from real Nsight Systems exports; see
/// traces/README.md): llama.cpp launches its CUDA kernels with programmatic dependent launch, so
/// the next kernel starts early and waits. Summed durations count the wait; exclusive time does not.
#[test]
fn programmatic_dependent_launch_waits_are_not_counted_as_kernel_time() {
    let got = json(&["attribute", "traces/nsys-h200-kv-q8_0-4steps.sqlite", "--tokens", "5", "--busy", "--json"]);
    assert_eq!(got["window"]["method"], "cuda-graph");
    assert_eq!(got["decode"]["calls"], 2324);
    let ratio = got["overlap_ratio"].as_f64().unwrap();
    assert!(ratio > 1.9 && ratio < 2.0, "kernel sum / busy = {ratio}");
    let busy = got["gpu_busy_ms_per_token"].as_f64().unwrap();
    let cats = got["categories"].as_array().unwrap();
    let exclusive_sum: f64 = cats.iter().map(|c| c["exclusive_ms_per_token"].as_f64().unwrap()).sum();
    assert!((exclusive_sum - busy).abs() < 1e-9, "{exclusive_sum} vs busy {busy}");

    let kernel = |base: &str| {
        got["kernels"]
            .as_array()
            .unwrap()
            .iter()
            .find(|k| k["base_name"] == base)
            .unwrap_or_else(|| panic!("{base} not in the trace"))
            .clone()
    };
    let times = |k: &Value| (k["ms_per_token"].as_f64().unwrap(), k["exclusive_ms_per_token"].as_f64().unwrap());
    // The Hadamard rotation is launched while flash attention's split-K kernel still runs.
    let (s, o) = times(&kernel("fwht_cuda"));
    assert!(s > 1.5 && o < 0.1 * s, "fwht_cuda: sum {s} ms/token, exclusive {o}");
    let (s, o) = times(&kernel("flash_attn_ext_vec"));
    assert!(o > 0.99 * s, "flash_attn_ext_vec runs first and owns its time: sum {s}, exclusive {o}");
    assert_eq!(got["kernels"][0]["base_name"], "flash_attn_ext_vec", "top kernels sort by exclusive time");
}

#[test]
fn compare_traces_blames_flash_attention_not_the_waiting_rotation() {
    let got = json(&[
        "compare-traces",
        "--variant",
        "f16=traces/nsys-h200-kv-f16-4steps.sqlite:3.2797",
        "--variant",
        "q8_0=traces/nsys-h200-kv-q8_0-4steps.sqlite:4.8444",
        "--tokens",
        "5",
        "--json",
    ]);
    assert_eq!(got["share_basis"], "exclusive");
    let row = |cat: &str| {
        got["categories"].as_array().unwrap().iter().find(|r| r["category"] == cat).unwrap()["share_of_delta"][1]
            .as_f64()
            .unwrap()
    };
    assert!(row("flash attention") > 0.8, "flash attention: {}", row("flash attention"));
    assert!(row("KV rotation (Hadamard)") < 0.15, "rotation: {}", row("KV rotation (Hadamard)"));
    assert_eq!(got["moved_kernels"][0]["kernel"], "flash_attn_ext_vec");
    let sum: f64 = got["categories"].as_array().unwrap().iter().map(|r| r["ms_per_token"][1].as_f64().unwrap()).sum();
    assert!((sum - 4.8444).abs() < 1e-9, "categories sum to the measured ms/token: {sum}");
}

/// An `abprof ab` evidence folder without samples yet, with `abprof trace` folders copied from
/// traces/ into its traces/ (label → fixture folder).
fn study_with_traces(traced: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(
        root.join("study.toml"),
        "model = \"/m.gguf\"\ntokens = 9\nsamples = 1\nprompt_tokens = 64\nvariants = [\"f16=/bin/true|kv=f16\", \"q8=/bin/true|kv=q8_0\"]\n",
    )
    .unwrap();
    std::fs::write(root.join("plan.json"), r#"{"labels": ["f16", "q8"], "order_seed": null, "slots": []}"#).unwrap();
    for (label, fixture) in traced {
        let to = root.join("traces").join(label);
        std::fs::create_dir_all(&to).unwrap();
        for f in ["trace.json", "trace.db"] {
            std::fs::copy(traces().join(fixture).join(f), to.join(f)).unwrap();
        }
    }
    dir
}

#[test]
fn compare_traces_of_a_study_folder_equals_the_variant_form() {
    let study = study_with_traces(&[("f16", "rocpd-kv-f16"), ("q8", "rocpd-kv-q8_0")]);
    let root = study.path().to_str().unwrap();
    let got = json(&["compare-traces", "--study", root, "--json"]);
    assert_eq!(got["status"], "compared");
    let want = json(&[
        "compare-traces",
        "--variant",
        &format!("f16={root}/traces/f16"),
        "--variant",
        &format!("q8={root}/traces/q8"),
        "--json",
    ]);
    // No sample yet: each trace is scaled by its own untraced samples, as the --variant form does.
    for key in ["variants", "categories", "measured_delta", "moved_kernels"] {
        assert_eq!(got[key], want[key], "{key}");
    }
    let text = abprof(&["compare-traces", "--study", root]).success().get_output().stdout.clone();
    assert!(String::from_utf8(text).unwrap().contains("flash attention"));
}

/// A study whose trace folders hold three traced samples each (`abprof trace --traced 3`, the
/// fewest a category verdict takes, docs/methodology.md §10.1): the second and third are copies
/// of the first here, so each category's interval is the spread of the untraced samples the
/// shares are scaled by, and a verdict goes beside it.
#[test]
fn compare_traces_of_a_study_with_several_traced_samples_shows_intervals() {
    let study = study_with_traces(&[("f16", "rocpd-kv-f16"), ("q8", "rocpd-kv-q8_0")]);
    let root = study.path();
    for label in ["f16", "q8"] {
        let folder = root.join("traces").join(label);
        let mut m: Value = serde_json::from_str(&std::fs::read_to_string(folder.join("trace.json")).unwrap()).unwrap();
        let mut more = Vec::new();
        for (i, ms) in [(2, 1.6), (3, 1.7)] {
            std::fs::copy(folder.join("trace.db"), folder.join(format!("trace-{i}.db"))).unwrap();
            let mut next = serde_json::json!({"trace_file": format!("trace-{i}.db"), "traced_ms_per_token": ms});
            next["decode_window"] = m["decode_window"].clone();
            next["prefill_window"] = m["prefill_window"].clone();
            more.push(next);
        }
        m["more_traces"] = Value::Array(more);
        m["traced_ms_per_token"] = 1.5.into();
        std::fs::write(folder.join("trace.json"), serde_json::to_string(&m).unwrap()).unwrap();
    }
    let got = json(&["compare-traces", "--study", root.to_str().unwrap(), "--json"]);
    assert_eq!(got["status"], "compared");
    assert_eq!(got["variants"][0]["traced_samples"], 3);
    assert_eq!(got["variants"][1]["traced_decode_ms_per_token"], 1.6);
    let deltas = got["category_deltas"].as_array().unwrap();
    assert_eq!(deltas.len(), got["categories"].as_array().unwrap().len());
    for (d, row) in deltas.iter().zip(got["categories"].as_array().unwrap()) {
        assert_eq!(d["category"], row["category"]);
        let (lo, hi) = (d["ci"][1]["lo"].as_f64().unwrap(), d["ci"][1]["hi"].as_f64().unwrap());
        assert!(lo < hi, "{d}");
        assert!(["faster", "slower", "no-clear-difference"].contains(&d["verdict"][1].as_str().unwrap()), "{d}");
    }
    let text = String::from_utf8(
        abprof(&["compare-traces", "--study", root.to_str().unwrap()]).success().get_output().stdout.clone(),
    )
    .unwrap();
    assert!(text.contains("95% CI") && text.contains("3 traced samples (medians)"), "{text}");
    assert!(text.contains("tracer overhead"), "{text}");
}

#[test]
fn compare_traces_of_a_study_needs_two_traced_variants() {
    let study = study_with_traces(&[("f16", "rocpd-kv-f16")]);
    let err = stderr_of_failure(&["compare-traces", "--study", study.path().to_str().unwrap()]);
    assert!(err.contains("1 traced variant(s) (f16)") && err.contains("at least two"), "{err}");
    let err = stderr_of_failure(&["compare-traces", "--study", "traces"]);
    assert!(err.contains("study"), "{err}");
    // Neither form: clap's usage error.
    abprof(&["compare-traces"]).failure().code(2);
}

/// One of the H200's real MTP traces (tests/fixtures/h200-traces/README.md) unpacked as an
/// `abprof trace` folder, with the manifest its study wrote: `speculation` as the traced server's
/// argv asked, the untraced decode ms/token measured beside it.
fn h200_mtp_trace(dir: &Path, label: &str, fixture: &str, speculation: Option<&str>, measured: f64) -> PathBuf {
    let folder = dir.join(label);
    std::fs::create_dir_all(&folder).unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/h200-traces").join(fixture);
    let out = std::process::Command::new("xz").arg("-dc").arg(&src).output().unwrap();
    assert!(out.status.success(), "xz -dc {}", src.display());
    std::fs::write(folder.join("trace.sqlite"), out.stdout).unwrap();
    let mut m = serde_json::json!({
        "label": label,
        "variant": format!("{label}=/tmp/b/bin/llama-server"),
        "tracer": "nsys",
        "trace_file": "trace.sqlite",
        "prompt_tokens": 2000,
        "output_tokens": 256,
        "created_at": "2026-12-01T17:59:47Z",
        "untraced": { "output_tokens": 256, "ms_per_token": [measured], "median_ms_per_token": measured },
    });
    if let Some(s) = speculation {
        m["speculation"] = s.into();
    }
    std::fs::write(folder.join("trace.json"), serde_json::to_string_pretty(&m).unwrap()).unwrap();
    folder
}

/// #21 item 4: the MTP head's own work apart from the trunk's. The draft context runs on a stream
/// of its own (§10.5): its kernels carry "(draft)", the target's keep their names, nothing is lost
/// or counted twice, and `compare-traces` of MTP off against on shows the draft's categories as
/// added and the trunk's as moved.
#[test]
fn the_mtp_draft_contexts_kernels_are_told_apart_from_the_targets() {
    let d = tempfile::tempdir().unwrap();
    let on = h200_mtp_trace(d.path(), "on", "mtp-on.nsys.sqlite.xz", Some("--spec-type draft-mtp"), 2.6948);
    let off = h200_mtp_trace(d.path(), "off", "mtp-off.nsys.sqlite.xz", None, 4.4467);
    let split = json(&["attribute", on.to_str().unwrap(), "--json"]);
    let lanes = &split["speculation_lanes"];
    assert_eq!(lanes["speculation"], "--spec-type draft-mtp");
    assert_eq!((lanes["target"][0]["stream"].as_i64(), lanes["draft"][0]["stream"].as_i64()), (Some(16), Some(17)));
    assert!(lanes["target"][0]["ms"].as_f64().unwrap() > 4.0 * lanes["draft"][0]["ms"].as_f64().unwrap(), "{lanes}");

    // The same trace read as one context: the split moves time between lines, never adds any.
    let whole_folder = h200_mtp_trace(d.path(), "whole", "mtp-on.nsys.sqlite.xz", None, 2.6948);
    let whole = json(&["attribute", whole_folder.to_str().unwrap(), "--json"]);
    assert!(whole["speculation_lanes"].is_null());
    assert_eq!(split["decode"], whole["decode"]);
    let ns = |a: &Value, cat: &str| {
        a["categories"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["category"] == cat)
            .map_or(0, |c| c["ns"].as_u64().unwrap())
    };
    let float = "float mat-vec/mat-mat";
    let float_draft = format!("{float} (draft)");
    assert!(ns(&split, &float_draft) > 0, "{}", split["categories"]);
    assert_eq!(ns(&split, float) + ns(&split, &float_draft), ns(&whole, float));
    let total = |a: &Value| a["categories"].as_array().unwrap().iter().map(|c| c["ns"].as_u64().unwrap()).sum::<u64>();
    assert_eq!(total(&split), total(&whole));
    // The MTP head's output projection over the vocabulary is the draft's largest kernel.
    let top_draft = split["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["name"].as_str().unwrap().ends_with(" (draft)"))
        .unwrap();
    assert!(top_draft["base_name"].as_str().unwrap().starts_with("mul_mat_vec_f"), "{top_draft}");
    assert!(
        split["unmatched"].as_array().unwrap().is_empty(),
        "every kernel of the new model has a rule: {}",
        split["unmatched"]
    );

    let got = json(&[
        "compare-traces",
        "--variant",
        &format!("off={}", off.display()),
        "--variant",
        &format!("on={}", on.display()),
        "--json",
    ]);
    let row = |cat: &str| got["categories"].as_array().unwrap().iter().find(|r| r["category"] == cat).cloned();
    let added = row(&float_draft).expect("the draft's float mat-vec row");
    assert_eq!(added["ms_per_token"][0].as_f64(), Some(0.0), "{added}");
    assert!(added["ms_per_token"][1].as_f64().unwrap() > 0.0, "{added}");
    let trunk = row(float).unwrap();
    assert!(trunk["delta"][1].as_f64().unwrap() < 0.0, "the trunk verifies 4 tokens a step: {trunk}");
    let text = abprof(&["attribute", on.to_str().unwrap()]).success().get_output().stdout.clone();
    let text = String::from_utf8(text).unwrap();
    assert!(text.contains("draft context") && text.contains("stream 17"), "{text}");
}

/// A trace whose decode holds fewer kernel dispatches per token than the model has layers lost
/// kernels in the tracer (docs/methodology.md §10 "complete traces"): `attribute` and
/// `compare-traces` refuse it in one line naming the cause and the runtime.
#[test]
fn a_trace_that_lost_its_decode_kernels_is_refused_in_one_line() {
    let d = tempfile::tempdir().unwrap();
    let folder = d.path().join("kv-f16");
    std::fs::create_dir(&folder).unwrap();
    for f in ["trace.db", "trace.json"] {
        std::fs::copy(traces().join("rocpd-kv-f16").join(f), folder.join(f)).unwrap();
    }
    let manifest = folder.join("trace.json");
    let mut m: Value = serde_json::from_str(&std::fs::read_to_string(&manifest).unwrap()).unwrap();
    // 768 decode dispatches over 8 steps, 96 a token: as complete for 96 layers, not for 97.
    m["runtime"] = "ROCm 7.2.0-43, HIP 7.2.25342".into();
    for (layers, complete) in [(96, true), (97, false)] {
        m["model_layers"] = layers.into();
        std::fs::write(&manifest, serde_json::to_string(&m).unwrap()).unwrap();
        let dir = folder.to_str().unwrap();
        if complete {
            assert_eq!(json(&["attribute", dir, "--json"])["decode"]["calls"], 768);
            continue;
        }
        for args in [
            vec!["attribute", dir],
            vec!["compare-traces", "--variant", &format!("a={dir}"), "--variant", &format!("b={dir}")],
        ] {
            let err = stderr_of_failure(&args);
            for part in
                ["96.0 kernel dispatches per generated token", "fewer than 97", "rocm-systems#8735", "ROCm 7.2.0-43"]
            {
                assert!(err.contains(part), "{part}: {err}");
            }
        }
    }
}
