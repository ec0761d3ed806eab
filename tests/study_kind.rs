//! A study folder (or study file) of one kind given to the command of another is refused with one
//! line naming the right command, exit 2, and the folder left byte for byte as it was
//! (docs/methodology.md §5 resume). The folders are the committed `abprof ab` folder of the release
//! before study files recorded their kind, its study file turned into a Pi or trace study's the
//! way that release wrote them (no `kind`: the kind is inferred from the sections), and with a
//! planned sample missing, as an interrupted study leaves it. No server runs.
mod common;
use common::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const PI_SECTION: &str = "\n[pi]\npi_bin = \"/usr/bin/pi\"\nmode = \"decode\"\nprompt = \"Write merge sort.\"\ntimeout_s = 900\nmax_tokens = 8\ncontext_window = 4096\npython = \"/usr/bin/python3\"\ncode_timeout_s = 60\n";
const TRACE_SECTION: &str =
    "\n[trace]\nfinalize_timeout_s = 1800\n\n[trace.tracer]\nkind = \"nsys\"\nprogram = \"/usr/bin/nsys\"\n";

/// An interrupted study folder of the kind `section` makes (`""`: A/B), in a fresh temp dir.
fn interrupted(section: &str) -> (tempfile::TempDir, PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/evidence-today-ab/study");
    let dir = d.path().join("study");
    assert!(std::process::Command::new("cp").arg("-r").arg(&src).arg(&dir).status().unwrap().success());
    let toml = dir.join("study.toml");
    let text = std::fs::read_to_string(&toml).unwrap();
    std::fs::write(&toml, text + section).unwrap();
    // The last planned sample never ran.
    std::fs::remove_dir_all(dir.join("samples/004-f16")).unwrap();
    std::fs::remove_file(dir.join("summary.json")).unwrap();
    (d, dir)
}

/// Every file and folder under `dir`, with its bytes.
fn tree(dir: &Path) -> BTreeMap<PathBuf, Option<Vec<u8>>> {
    let mut out = BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(p) = todo.pop() {
        if p.is_dir() {
            out.insert(p.clone(), None);
            todo.extend(std::fs::read_dir(&p).unwrap().map(|e| e.unwrap().path()));
        } else {
            out.insert(p.clone(), Some(std::fs::read(&p).unwrap()));
        }
    }
    out
}

/// Runs abprof, expects exit 2 and one stderr line holding `want`, and that `dir` is unchanged.
fn refused(args: &[&str], dir: &Path, want: &str) {
    let before = tree(dir);
    let out = abprof().args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "abprof {args:?}: {stderr}");
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    assert!(stderr.contains(want), "names {want:?}: {stderr}");
    assert!(out.stdout.is_empty(), "{}", String::from_utf8_lossy(&out.stdout));
    assert!(tree(dir) == before, "abprof {args:?} changed {}", dir.display());
}

#[test]
fn ab_resume_of_an_interrupted_pi_study_names_pi_resume() {
    let (_d, dir) = interrupted(PI_SECTION);
    let s = dir.display().to_string();
    refused(
        &["ab", "--resume", &s],
        &dir,
        &format!("is a Pi study, which `abprof ab --resume` cannot continue: `abprof pi --resume {s}` does"),
    );
}

#[test]
fn trace_resume_of_an_ab_study_names_ab_resume() {
    let (_d, dir) = interrupted("");
    let s = dir.display().to_string();
    refused(&["trace", "--resume", &s], &dir, &format!("`abprof ab --resume {s}` does"));
    refused(&["pi", "--resume", &s], &dir, &format!("`abprof ab --resume {s}` does"));
}

#[test]
fn ab_resume_of_an_interrupted_trace_study_names_trace_resume() {
    let (_d, dir) = interrupted(TRACE_SECTION);
    let s = dir.display().to_string();
    refused(
        &["ab", "--resume", &s],
        &dir,
        &format!("is a trace study, which `abprof ab --resume` cannot continue: `abprof trace --resume {s}` does"),
    );
    refused(&["pi", "--resume", &s], &dir, &format!("`abprof trace --resume {s}` does"));
}

#[test]
fn ab_study_of_a_trace_study_file_names_trace_and_creates_nothing() {
    let (d, dir) = interrupted(TRACE_SECTION);
    let file = dir.join("study.toml");
    let root = d.path().join("new-root");
    refused(
        &["ab", "--study", file.to_str().unwrap(), "--root", root.to_str().unwrap()],
        &dir,
        "defines a trace study, which `abprof ab --study` does not run: `abprof trace` runs it",
    );
    assert!(!root.exists(), "no folder made");
    // A recorded kind says the same as the section.
    let recorded = d.path().join("pi.toml");
    let text = std::fs::read_to_string(&file).unwrap().replace(TRACE_SECTION, PI_SECTION);
    std::fs::write(&recorded, format!("kind = \"pi\"\n{text}")).unwrap();
    refused(
        &["ab", "--study", recorded.to_str().unwrap(), "--root", root.to_str().unwrap()],
        &dir,
        "`abprof pi` runs it",
    );
    assert!(!root.exists(), "no folder made");
}
