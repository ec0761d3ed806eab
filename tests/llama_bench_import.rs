//! `abprof history import-llama-bench` on real llama-bench outputs (tests/fixtures/llama-bench/,
//! builds b1275 to b10788 and the pinned tree, every format llama-bench writes): each test
//! recorded once as a result of its own kind, listed beside the studies, filtered by build and
//! model; a file that is not one refused in one line before anything is written.
mod common;
use common::*;
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/llama-bench").join(name)
}

fn import(db: &Path, files: &[&str]) -> std::process::Output {
    let mut cmd = abprof();
    cmd.args(["history", "import-llama-bench", "--history"]).arg(db);
    for f in files {
        cmd.arg(fixture(f));
    }
    cmd.output().unwrap()
}

#[test]
fn real_llama_bench_outputs_import_once_and_list_beside_the_studies() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("history.db");
    let files = [
        "llamacpp-readme-b1275-cuda-rtx3090ti.json",
        "llamacpp-readme-b1275-cuda-rtx3090ti.csv",
        "llamacpp-readme-b5163-cuda-rtx4080.sql",
        "llamacpp-readme-b5163-cuda-rtx4080.jsonl",
        "pinned-0c1e57098-b0-cpu-epyc.csv",
        "kyuz0-b9927-rocm-gfx1151.jsonl",
        "lhl-b6865-rocm-gfx1151-with-stderr.jsonl",
    ];
    let out = import(&db, &files);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    for (file, says) in [
        (
            "llamacpp-readme-b1275-cuda-rtx3090ti.json",
            "llama-bench json output of build 3469684 (1275), 2 tests, 2 new",
        ),
        ("llamacpp-readme-b5163-cuda-rtx4080.sql", "llama-bench sql output of build 8cf427ff (5163), 2 tests, 2 new"),
        ("kyuz0-b9927-rocm-gfx1151.jsonl", "llama-bench jsonl output of build c264f65ff (9927), 9 tests, 9 new"),
    ] {
        assert!(text.lines().any(|l| l.contains(file) && l.contains(says)), "{file}: {text}");
    }
    // The same file in two formats is two runs of llama-bench: both kept. A file imported again
    // adds nothing.
    let again = import(&db, &["kyuz0-b9927-rocm-gfx1151.jsonl"]);
    assert!(String::from_utf8_lossy(&again.stdout).contains("9 tests, 0 new (9 already in the history)"));

    let list = abprof().args(["history", "--history"]).arg(&db).arg("--json").output().unwrap();
    assert!(list.status.success(), "{}", String::from_utf8_lossy(&list.stderr));
    let v: serde_json::Value = serde_json::from_slice(&list.stdout).unwrap();
    let rows = v["llama_bench"].as_array().unwrap();
    assert_eq!(rows.len(), 2 + 2 + 2 + 2 + 2 + 9 + rows_of("lhl-b6865-rocm-gfx1151-with-stderr.jsonl"));
    let b9927: Vec<&serde_json::Value> = rows.iter().filter(|r| r["build_commit"] == "c264f65ff").collect();
    assert!(b9927.iter().all(|r| r["backends"] == "ROCm" && r["avg_ts"].as_f64().unwrap() > 0.0));
    // Filtered by build and model as the studies are.
    let only =
        abprof().args(["history", "--history"]).arg(&db).args(["--commit", "8cf427f", "--json"]).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&only.stdout).unwrap();
    assert_eq!(v["llama_bench"].as_array().unwrap().len(), 4, "b5163's sql and jsonl runs");
    let text = abprof().args(["history", "--history"]).arg(&db).args(["--commit", "8cf427f"]).output().unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("llama-bench results (imported") && text.contains("tg128"), "{text}");
}

fn rows_of(name: &str) -> usize {
    std::fs::read_to_string(fixture(name)).unwrap().lines().filter(|l| l.starts_with('{')).count()
}

#[test]
fn a_file_that_is_not_llama_benchs_is_refused_before_the_history_exists() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("history.db");
    for (file, says) in [
        ("kyuz0-b6609-rocm-gfx1151-with-stderr.md", "run it again with -o json"),
        ("README.md", "not a llama-bench output"),
    ] {
        let out = import(&db, &["pinned-0c1e57098-b0-cpu-epyc.json", file]);
        assert_eq!(out.status.code(), Some(2), "{file}");
        let err = error_lines(&out);
        assert_eq!(err.len(), 1, "{err:?}");
        assert!(err[0].contains(file) && err[0].contains(says), "{err:?}");
        assert!(!db.exists(), "nothing written: every file is read first");
    }
}
