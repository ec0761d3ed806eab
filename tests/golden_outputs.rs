//! The JSON and pages `summarize` and `report` give for the committed fixture folders are byte for
//! byte those recorded before the typed study kind and typed evidence (tests/golden/README.md).
mod common;
use common::*;
use std::path::Path;

/// A copy of `fixture` named `study` in a fresh folder, which the commands are run from.
fn copy_of(fixture: &str) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(fixture);
    let st = std::process::Command::new("cp").arg("-r").arg(&src).arg(d.path().join("study")).status().unwrap();
    assert!(st.success());
    d
}

fn golden(name: &str) -> Vec<u8> {
    std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden").join(name)).unwrap()
}

/// `got` is the golden file `name`; with `ABPROF_GOLDEN=write` (as tests/golden.rs) it becomes it,
/// for a change of output made on purpose, whose diff is then reviewed.
fn same(got: &[u8], name: &str) {
    if std::env::var("ABPROF_GOLDEN").as_deref() == Ok("write") {
        std::fs::write(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden").join(name), got).unwrap();
        return;
    }
    let want = golden(name);
    assert!(
        got == want.as_slice(),
        "{name} differs from tests/golden/{name}:\n--- got ---\n{}",
        String::from_utf8_lossy(got)
    );
}

fn run(dir: &Path, args: &[&str]) -> Vec<u8> {
    let out = abprof().current_dir(dir).args(args).output().unwrap();
    assert!(out.status.success(), "abprof {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}

#[test]
fn the_pre_engine_folder_summarizes_and_reports_byte_for_byte_as_recorded() {
    let d = copy_of("evidence-pre-engine/study");
    same(&run(d.path(), &["summarize", "study", "--format", "json"]), "evidence-pre-engine/summarize.json");
    same(&std::fs::read(d.path().join("study/summary.json")).unwrap(), "evidence-pre-engine/summarize.json");
    same(&run(d.path(), &["summarize", "study"]), "evidence-pre-engine/summarize.txt");
    same(&run(d.path(), &["report", "study", "--format", "json"]), "evidence-pre-engine/report.json");
    same(&std::fs::read(d.path().join("study/report.html")).unwrap(), "evidence-pre-engine/report.html");
    same(&std::fs::read(d.path().join("study/report.md")).unwrap(), "evidence-pre-engine/report.md");
}

#[test]
fn a_folder_of_the_release_before_the_kind_summarizes_and_reports_byte_for_byte_as_it_did() {
    let d = copy_of("evidence-today-ab/study");
    same(&run(d.path(), &["summarize", "study", "--format", "json"]), "evidence-today-ab/summarize.json");
    same(&run(d.path(), &["summarize", "study"]), "evidence-today-ab/summarize.txt");
    same(&run(d.path(), &["report", "study", "--format", "json"]), "evidence-today-ab/report.json");
    same(&std::fs::read(d.path().join("study/report.html")).unwrap(), "evidence-today-ab/report.html");
    same(&std::fs::read(d.path().join("study/report.md")).unwrap(), "evidence-today-ab/report.md");
}
