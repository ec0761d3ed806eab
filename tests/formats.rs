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
    assert!(json.starts_with("{\n  \"schema_version\": 3,\n"), "{json}");
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    let variants = doc["variants"].as_array().unwrap();

    // jsonl and csv: one row per metric and variant, the same numbers as the JSON document.
    let jsonl = summarize(&dir, "jsonl");
    assert!(jsonl.lines().all(|l| l.starts_with(r#"{"schema_version":3,"metric":"#)), "{jsonl}");
    let lines: Vec<serde_json::Value> = jsonl.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let metrics = variants[0]["metrics"].as_array().unwrap().len();
    assert_eq!(lines.len(), metrics * variants.len());
    for l in &lines {
        let v = variants.iter().find(|v| v["label"] == l["variant"]).unwrap();
        let m = v["metrics"].as_array().unwrap().iter().find(|m| m["metric"] == l["metric"]).unwrap();
        assert_eq!(l["median"], m["median"]);
        assert_eq!(l["change_pct"], m["change_pct"]);
        // Every run as a number at full precision (docs/formats.md), not text rounded for people.
        assert!(l["runs"].as_array().is_some_and(|r| !r.is_empty()), "{l}");
        assert_eq!(l["runs"], m["runs"], "JSON Lines runs at full precision");
    }
    let csv = summarize(&dir, "csv");
    let mut r = csv::Reader::from_reader(csv.as_bytes());
    assert_eq!(r.headers().unwrap().iter().take(3).collect::<Vec<_>>(), ["metric", "variant", "accepted"]);
    let rows: Vec<csv::StringRecord> = r.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), lines.len());
    let runs_at = r.headers().unwrap().iter().position(|h| h == "runs").unwrap();
    let mut digits = 0;
    for (row, l) in rows.iter().zip(&lines) {
        assert_eq!(row[6].parse::<f64>().unwrap(), l["median"].as_f64().unwrap(), "CSV keeps full precision");
        // One field, the runs as a JSON array (docs/formats.md): what pandas' json.loads and
        // DuckDB's DOUBLE[] cast read back, to the last bit.
        let runs: Vec<f64> = serde_json::from_str(&row[runs_at]).unwrap();
        let want: Vec<f64> = l["runs"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect();
        assert_eq!(runs, want, "CSV runs at full precision");
        digits = digits
            .max(runs.iter().map(|x| format!("{x}").len().saturating_sub(format!("{x:.0}").len())).max().unwrap_or(0));
    }
    assert!(digits > 3, "no run has more than two decimals: rounded for people");

    // Markdown: the study's one Markdown document, report.md (issue #46: not a second document
    // of the same summary), whose verdict tables hold every metric's rows.
    let md = summarize(&dir, "md");
    let report_md = dir.join("copy.report.md");
    let out = abprof().arg("report").arg(&dir).arg("--md").arg(&report_md).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(md, std::fs::read_to_string(&report_md).unwrap(), "summarize --format md is report.md");
    let heads = md.lines().filter(|l| l.starts_with("| variant | runs |")).count();
    assert_eq!(heads, metrics, "one verdict table per metric:\n{md}");
    let rows = md.lines().filter(|l| l.starts_with("| f16 |") || l.starts_with("| q8_0 |")).count();
    assert!(rows >= lines.len(), "every metric's row of every variant:\n{md}");

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
    assert!(written.starts_with("{\n  \"schema_version\": 3,\n"), "{}", &written[..80]);
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
    assert_eq!(doc["schema_version"], 3);
}

/// A study run with `--foreign-cpu-max 1000` says so at the top of every format (issue #42,
/// docs/methodology.md §7.22): the text summary, summary.json, report.md and the
/// page; the same study at the defaults lists nothing and its summary.json has no such field.
#[test]
fn a_relaxed_rule_limit_heads_every_format() {
    let d = tempfile::tempdir().unwrap();
    let dir = study_copy(d.path());
    let at_defaults = summarize(&dir, "json");
    assert!(!at_defaults.contains("changed_limits"), "{at_defaults}");
    assert!(!summarize(&dir, "text").contains("rule limits changed"));
    let toml = dir.join("study.toml");
    let text = std::fs::read_to_string(&toml).unwrap();
    let relaxed = text.replace("foreign_cpu_max_pct = 50.0", "foreign_cpu_max_pct = 1000.0");
    assert_ne!(text, relaxed, "the fixture's limit moved");
    std::fs::write(&toml, relaxed).unwrap();

    let line = "--foreign-cpu-max 1000% (default 50%; other-workload)";
    let txt = summarize(&dir, "text");
    let heading_end = txt.find("\nserver decode TPS").unwrap();
    assert!(txt[..heading_end].contains("rule limits changed from their defaults"), "{txt}");
    assert!(txt[..heading_end].contains(&format!("\n  {line}\n")), "before the verdicts:\n{txt}");

    let doc: serde_json::Value = serde_json::from_str(&summarize(&dir, "json")).unwrap();
    let limits = doc["changed_limits"].as_array().unwrap();
    assert_eq!(limits.len(), 1, "{limits:?}");
    assert_eq!(limits[0]["flag"], "--foreign-cpu-max");
    assert_eq!(limits[0]["value"], 1000.0);
    assert_eq!(limits[0]["default"], 50.0);
    let kept: serde_json::Value = read_json(&dir.join("summary.json"));
    assert_eq!(kept["changed_limits"], doc["changed_limits"], "summary.json holds it too");

    let (md, html) = (d.path().join("r.md"), d.path().join("r.html"));
    let out = abprof().arg("report").arg(&dir).arg("--md").arg(&md).arg("--html").arg(&html).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let md = std::fs::read_to_string(md).unwrap();
    let md_top = &md[..md.find("### server decode TPS").unwrap()];
    assert!(md_top.contains(line), "at the top of report.md:\n{md}");
    let page = std::fs::read_to_string(html).unwrap();
    let page_top = &page[..page.find("<section id=\"verdict\">").unwrap()];
    assert!(page_top.contains(&format!("<p class=\"note\">{line}</p>")), "at the top of the page");
}

/// Every summary ends with each candidate's one-line answer, and report.md and the page open
/// with it (issue #42, docs/methodology.md §8 "The answer"); 2 samples a side have no interval.
#[test]
fn the_answer_ends_the_summary_and_heads_the_report() {
    let d = tempfile::tempdir().unwrap();
    let dir = study_copy(d.path());
    let answer = "q8_0 vs f16: server decode: too few samples (2 of 3 accepted)";
    let txt = summarize(&dir, "text");
    assert_eq!(txt.lines().last(), Some(answer), "{txt}");
    let doc: serde_json::Value = serde_json::from_str(&summarize(&dir, "json")).unwrap();
    assert_eq!(doc["answer"][0]["line"], answer);
    assert_eq!(doc["answer"][0]["accepted"], serde_json::json!([2, 2]));
    assert!(doc["answer"][0]["wall_s"].as_f64().unwrap() > 0.0);
    // The table formats stay one table.
    assert!(!summarize(&dir, "csv").contains(answer));
    let (md, html) = (d.path().join("r.md"), d.path().join("r.html"));
    let out = abprof().arg("report").arg(&dir).arg("--md").arg(&md).arg("--html").arg(&html).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(std::fs::read_to_string(md).unwrap().lines().next(), Some(answer));
    let page = std::fs::read_to_string(html).unwrap();
    let first = page.find("<section").unwrap();
    assert!(page[first..].starts_with("<section id=\"answer\">\n<h2>Answer</h2>\n"), "{}", &page[first..first + 200]);
    assert!(page[first..].contains(&format!("<p class=\"note\">{answer}</p>")));
}
