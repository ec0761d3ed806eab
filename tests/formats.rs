//! `--format text|json|jsonl|csv|md` on real evidence and real traces, and `schema_version` on
//! every JSON document (docs/methodology.md §13).
mod common;
use common::*;
use std::path::{Path, PathBuf};

fn study_copy(d: &Path) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/evidence-pre-engine/study");
    let dir = d.join("study");
    let st = std::process::Command::new("cp").arg("-r").arg(&src).arg(&dir).status().unwrap();
    assert!(st.success());
    dir
}

fn summarize(dir: &Path, format: &str) -> String {
    let out = abprof().arg("summarize").arg(dir).args(["--format", format]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn a_summary_prints_as_every_format() {
    let d = tempfile::tempdir().unwrap();
    let dir = study_copy(d.path());
    let json = summarize(&dir, "json");
    assert!(json.starts_with("{\n  \"schema_version\": 2,\n"), "{json}");
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    let variants = doc["variants"].as_array().unwrap();

    // jsonl and csv: one row per metric and variant, the same numbers as the JSON document.
    let jsonl = summarize(&dir, "jsonl");
    assert!(jsonl.lines().all(|l| l.starts_with(r#"{"schema_version":2,"metric":"#)), "{jsonl}");
    let lines: Vec<serde_json::Value> = jsonl.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let metrics = variants[0]["metrics"].as_array().unwrap().len();
    assert_eq!(lines.len(), metrics * variants.len());
    for l in &lines {
        let v = variants.iter().find(|v| v["label"] == l["variant"]).unwrap();
        let m = v["metrics"].as_array().unwrap().iter().find(|m| m["metric"] == l["metric"]).unwrap();
        assert_eq!(l["median"], m["median"]);
        assert_eq!(l["change_pct"], m["change_pct"]);
    }
    let csv = summarize(&dir, "csv");
    let mut r = csv::Reader::from_reader(csv.as_bytes());
    assert_eq!(r.headers().unwrap().iter().take(3).collect::<Vec<_>>(), ["metric", "variant", "accepted"]);
    let rows: Vec<csv::StringRecord> = r.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), lines.len());
    for (row, l) in rows.iter().zip(&lines) {
        assert_eq!(row[6].parse::<f64>().unwrap(), l["median"].as_f64().unwrap(), "CSV keeps full precision");
    }

    // Markdown: a table with a header separator and one line per row.
    let md = summarize(&dir, "md");
    let md_lines: Vec<&str> = md.lines().collect();
    assert!(md_lines[0].starts_with("| metric | variant |"), "{md}");
    assert!(md_lines[1].starts_with("|---|"), "{md}");
    assert_eq!(md_lines.len(), 2 + lines.len());

    // `--json` is `--format json`; both at once is a usage error.
    let old = abprof().arg("summarize").arg(&dir).arg("--json").output().unwrap();
    assert_eq!(String::from_utf8(old.stdout).unwrap(), json);
    let both = abprof().arg("summarize").arg(&dir).args(["--json", "--format", "csv"]).output().unwrap();
    assert_eq!(both.status.code(), Some(2));
}

#[test]
fn evidence_written_today_carries_the_schema_version() {
    let d = tempfile::tempdir().unwrap();
    let dir = study_copy(d.path());
    summarize(&dir, "text");
    let written = std::fs::read_to_string(dir.join("summary.json")).unwrap();
    assert!(written.starts_with("{\n  \"schema_version\": 2,\n"), "{}", &written[..80]);
}

#[test]
fn a_trace_attribution_prints_as_a_table() {
    let trace = Path::new(env!("CARGO_MANIFEST_DIR")).join("traces/nsys-h200-kv-f16-4steps.sqlite");
    let out = abprof().arg("attribute").arg(&trace).args(["--tokens", "4", "--format", "csv"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let mut r = csv::Reader::from_reader(text.as_bytes());
    assert!(r.records().count() > 10, "{text}");
    let json = abprof().arg("attribute").arg(&trace).args(["--tokens", "4", "--json"]).output().unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(doc["schema_version"], 2);
}
