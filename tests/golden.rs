//! Every table abprof prints, byte for byte: `summarize`, `report`, `history` (on folders imported
//! from the committed fixtures), `compare-traces` and `attribute` on the committed traces, in every
//! `--format`, against the files under tests/fixtures/golden/ (written by the release before the
//! one table model, ed245ea, then rewritten for the per-variant CV column, and the history's
//! moves once they took the summary's t model: 2 samples a side are "too few samples"; then for the
//! one-line answer that ends the summary and heads the report, the rule limits a study changed and
//! the flag beside a per-sample CV above 10%, issue #42; then for the study report as one list
//! of sections in every format, `summarize --format md` as report.md, and the history's, the
//! bisect's, the roofline's and doctor's columns aligned by the table model, issue #46; then for
//! the text summary that fits a screen — per-phase and decode-floor tables behind `--full`, named
//! on a last line — and no change beside "too few samples" (null in JSON, none on the page's
//! change panel), and a sample's runs as full-precision numbers in CSV and JSON Lines, issue #43).
//! The folders read
//! are the pre-engine folder (`study`) and one that release wrote itself (`today`: its study file
//! has no `kind`), so a change to the evidence readers must not change a byte either; `today`'s
//! outputs are those ed245ea recorded for it, with the folder's name. No llama-server: the fast
//! tier.
//!
//! A changed byte is a broken renderer, not a stale file. The files are written again only on
//! purpose, by `ABPROF_GOLDEN=write cargo test --test golden`, and the diff is reviewed.
use assert_cmd::Command;
use std::path::{Path, PathBuf};

const FORMATS: [&str; 5] = ["text", "json", "jsonl", "csv", "md"];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

fn golden_dir() -> PathBuf {
    root().join("tests/fixtures/golden")
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).unwrap();
        }
    }
}

/// The folders the commands read, copied into `work` (the commands write summaries and reports
/// into them) and named by relative paths, so the outputs hold no machine's path.
fn set_up(work: &Path) {
    let study = root().join("tests/fixtures/evidence-pre-engine/study");
    copy_tree(&study, &work.join("study"));
    // A folder an older release wrote itself (its study file has no `kind`).
    copy_tree(&root().join("tests/fixtures/evidence-today-ab/study"), &work.join("today"));
    // A copy of a folder is the same study (docs/methodology.md §15 "identity"): "again" and
    // "traced" are made later runs of the same setup by their start, so the history holds three.
    for (dir, hour) in [("again", "11"), ("traced", "12")] {
        copy_tree(&study, &work.join(dir));
        let host = work.join(dir).join("host.json");
        let text = std::fs::read_to_string(&host).unwrap();
        let later = text.replace("2026-11-30T10:23:39", &format!("2026-11-30T{hour}:23:39"));
        assert_ne!(text, later, "the fixture's start moved");
        std::fs::write(&host, later).unwrap();
    }
    copy_tree(&root().join("traces/rocpd-kv-f16"), &work.join("traced/traces/f16"));
    copy_tree(&root().join("traces/rocpd-kv-q8_0"), &work.join("traced/traces/q8_0"));
    for t in ["rocpd-kv-f16", "rocpd-kv-q8_0"] {
        copy_tree(&root().join("traces").join(t), &work.join("t").join(t));
    }
    for f in ["nsys-h200-kv-f16-4steps.sqlite", "kernel_trace.csv", "saxpy-mpi-cuda_nsys_perlmutter0.sqlite"] {
        std::fs::copy(root().join("traces").join(f), work.join("t").join(f)).unwrap();
    }
}

/// The run's own temporary folder and a write's duration are the only things that differ from
/// one run to the next.
fn normalize(text: &str, work: &Path) -> String {
    let mut t = text.to_string();
    for p in [work.canonicalize().unwrap(), work.to_path_buf()] {
        t = t.replace(&p.display().to_string(), "<WORK>");
    }
    let ms = regex::Regex::new(r"(one transaction in )[0-9.]+( ms)").unwrap();
    let t = ms.replace_all(&t, "${1}<MS>${2}").to_string();
    let json = regex::Regex::new(r#"("write_ms": ?)[0-9.e+-]+"#).unwrap();
    let t = json.replace_all(&t, "${1}0").to_string();
    // CSV and Markdown: write_ms is the import table's last column.
    let last = regex::Regex::new(r"(?m)^([^\n]*[,|] ?(?:true|false) ?[,|] ?[0-9]+ ?[,|] ?)[0-9.e-]+( \|)?$").unwrap();
    last.replace_all(&t, "${1}<MS>${2}").to_string()
}

struct Outputs {
    work: tempfile::TempDir,
    got: Vec<(String, String)>,
}

impl Outputs {
    fn run(&mut self, name: &str, args: &[&str]) {
        // ABPROF_GOLDEN_BIN: another build to compare (the release the files were written by).
        let mut cmd = match std::env::var_os("ABPROF_GOLDEN_BIN") {
            Some(bin) => Command::new(bin),
            None => Command::cargo_bin("abprof").unwrap(),
        };
        let out = cmd.current_dir(self.work.path()).env("TZ", "UTC").args(args).output().unwrap();
        assert!(out.status.success(), "abprof {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        let text = String::from_utf8(out.stdout).unwrap();
        self.got.push((name.into(), normalize(&text, self.work.path())));
    }

    fn every_format(&mut self, name: &str, args: &[&str]) {
        for f in FORMATS {
            let mut a = args.to_vec();
            a.extend(["--format", f]);
            self.run(&format!("{name}.{f}"), &a);
        }
    }

    fn file(&mut self, name: &str, path: &str) {
        let text = std::fs::read_to_string(self.work.path().join(path)).unwrap();
        self.got.push((name.into(), normalize(&text, self.work.path())));
    }
}

fn outputs() -> Vec<(String, String)> {
    let work = tempfile::tempdir().unwrap();
    set_up(work.path());
    let mut o = Outputs { work, got: Vec::new() };
    o.every_format("summarize-study", &["summarize", "study"]);
    // summarize writes the summary it prints into the folder.
    o.file("summarize-study.summary.json", "study/summary.json");
    o.every_format("summarize-traced", &["summarize", "traced"]);
    o.every_format("summarize-today", &["summarize", "today"]);
    for dir in ["study", "traced", "today"] {
        let (html, md) = (format!("{dir}.html"), format!("{dir}.md"));
        o.every_format(&format!("report-{dir}"), &["report", dir, "--html", &html, "--md", &md]);
        o.file(&format!("report-{dir}.html"), &html);
        o.file(&format!("report-{dir}.report.md"), &md);
    }
    o.every_format("compare-traces-study", &["compare-traces", "--study", "traced"]);
    let (f16, q8) = ("f16=t/rocpd-kv-f16", "q8_0=t/rocpd-kv-q8_0");
    o.every_format("compare-traces", &["compare-traces", "--variant", f16, "--variant", q8, "--top", "5"]);
    o.every_format("attribute-rocpd", &["attribute", "t/rocpd-kv-f16", "--top", "8"]);
    o.every_format("attribute-nsys", &["attribute", "t/nsys-h200-kv-f16-4steps.sqlite", "--tokens", "4"]);
    o.every_format("attribute-csv", &["attribute", "t/kernel_trace.csv"]);
    o.every_format("attribute-saxpy", &["attribute", "t/saxpy-mpi-cuda_nsys_perlmutter0.sqlite"]);
    o.every_format("history-import", &["history", "import", "study", "again", "traced", "--history", "h.db"]);
    o.every_format("history", &["history", "--history", "h.db"]);
    o.every_format("history-label", &["history", "--history", "h.db", "--label", "q8_0"]);
    o.every_format("history-regressions", &["history", "--history", "h.db", "--regressions"]);
    o.every_format("history-empty", &["history", "--history", "none.db"]);
    o.got
}

#[test]
fn every_table_renders_byte_for_byte_as_before() {
    let got = outputs();
    let dir = golden_dir();
    if std::env::var("ABPROF_GOLDEN").as_deref() == Ok("write") {
        std::fs::create_dir_all(&dir).unwrap();
        for (name, text) in &got {
            std::fs::write(dir.join(name), text).unwrap();
        }
        return;
    }
    let mut changed = Vec::new();
    for (name, text) in &got {
        let want = std::fs::read_to_string(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        if *text != want {
            let line = text.lines().zip(want.lines()).position(|(a, b)| a != b).unwrap_or(0);
            changed.push(format!(
                "{name}: first difference at line {}:\n  got:  {:?}\n  want: {:?}",
                line + 1,
                text.lines().nth(line).unwrap_or(""),
                want.lines().nth(line).unwrap_or("")
            ));
        }
    }
    assert!(changed.is_empty(), "{} output(s) changed:\n{}", changed.len(), changed.join("\n"));
    let names: std::collections::BTreeSet<String> = got.iter().map(|(n, _)| n.clone()).collect();
    let files: std::collections::BTreeSet<String> =
        std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().to_string()).collect();
    assert_eq!(names, files, "every golden file is checked, and only those");
}
