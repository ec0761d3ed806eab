//! The results history on the real llama-server test bed: studies land in it as they finish,
//! `--regressions` shows the moves with their intervals and refuses what does not compare, `import`
//! loads evidence folders once, and a killed study leaves nothing (docs/methodology.md §15).
mod common;
use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// A study file of `variants` on `model` (each `label=BINARY[|…]`), 8 output tokens. The tests
/// are about the history, not the other-workload rule: other helpers' builds may load the host.
fn study_file(dir: &Path, name: &str, model: &Path, prompt: &Path, samples: u32, variants: &[String]) -> PathBuf {
    let path = dir.join(format!("{name}.toml"));
    let quoted: Vec<String> = variants.iter().map(|v| format!("{v:?}")).collect();
    std::fs::write(
        &path,
        format!(
            "model = {:?}\nserver_args = \"-c 4096 -np 1\"\ntokens = 8\nsamples = {samples}\nvariants = [{}]\nprompt = {:?}\nignore_eos = true\n[idle]\nconsecutive = 2\nforeign_cpu_max_pct = 100000.0\n",
            model.display().to_string(),
            quoted.join(", "),
            prompt.display().to_string()
        ),
    )
    .unwrap();
    path
}

fn kv(label: &str, kv: &str) -> String {
    format!("{label}={}|kv={kv}", testbed().server.display())
}

/// Runs `abprof ab --study FILE --root ROOT` plus `extra`; returns its stdout (the summary, then
/// where the run went in the history).
fn ab(file: &Path, root: &Path, extra: &[&str]) -> String {
    let out = abprof().args(["ab", "--study"]).arg(file).arg("--root").arg(root).args(extra).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "abprof ab failed: {stderr}");
    String::from_utf8_lossy(&out.stdout).to_string()
}

fn history_json(db: &Path, extra: &[&str]) -> Value {
    let out = abprof().arg("history").arg("--history").arg(db).args(extra).args(["--format", "json"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn history_text(db: &Path, extra: &[&str]) -> String {
    let out = abprof().arg("history").arg("--history").arg(db).args(extra).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

fn studies(list: &Value) -> Vec<i64> {
    let mut ids: Vec<i64> = list["rows"].as_array().unwrap().iter().map(|r| r["study"].as_i64().unwrap()).collect();
    ids.dedup();
    ids
}

#[test]
fn two_studies_land_in_the_history_and_regressions_show_the_move_and_refuse_another_model() {
    let _g = serial();
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("h.db");
    let target = calibrated_prompt(300);
    // 3 samples a side: the fewest that give a move an interval (docs/methodology.md §8, §15).
    let file = study_file(d.path(), "target", &testbed().target, &target, 3, &[kv("f16", "f16"), kv("q8_0", "q8_0")]);
    let mut writes = Vec::new();
    for (i, name) in ["one", "two"].iter().enumerate() {
        let stdout = ab(&file, &d.path().join(name), &["--history", db.to_str().unwrap()]);
        let line = stdout.lines().find(|l| l.contains("recorded as study")).unwrap_or_else(|| panic!("{stdout}"));
        assert!(line.contains(&format!("study #{}", i + 1)) && line.contains("6 samples"), "{line}");
        writes.push(line.to_string());
    }
    eprintln!("{}", writes.join("\n"));
    // The same labels on another model: one f16 sample is enough to be refused.
    let smol_prompt = calibrated_prompt_for(&testbed().smollm2, "smollm2", 300);
    let smol = study_file(d.path(), "smol", &testbed().smollm2, &smol_prompt, 1, &[kv("f16", "f16")]);
    ab(&smol, &d.path().join("smol"), &["--history", db.to_str().unwrap()]);

    let list = history_json(&db, &[]);
    assert_eq!(list["schema_version"], 3);
    assert_eq!(studies(&list), [1, 2, 3]);
    let rows = list["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 5);
    assert_eq!(rows[0]["binary_sha256"].as_str().unwrap().len(), 64);
    assert_eq!(rows[0]["commit"], "0c1e57098", "from the server's --version");
    assert_eq!((rows[1]["kv"].as_str(), rows[1]["accepted"].as_u64()), (Some("q8_0"), Some(3)));
    assert_ne!(rows[4]["model_sha256"], rows[0]["model_sha256"]);
    // Filters: by label, by model path, by date.
    assert_eq!(studies(&history_json(&db, &["--label", "q8_0"])), [1, 2]);
    assert_eq!(studies(&history_json(&db, &["--model", "SmolLM2"])), [3]);
    assert_eq!(studies(&history_json(&db, &["--until", "2000-01-01"])), Vec::<i64>::new());

    let reg = history_json(&db, &["--regressions"]);
    let series = reg["series"].as_array().unwrap();
    assert_eq!(series.len(), 1, "{reg:#}");
    assert!(series[0]["aa_studies"].as_array().unwrap().is_empty());
    let decode: Vec<&Value> =
        series[0]["moves"].as_array().unwrap().iter().filter(|m| m["metric"] == "server-decode-tps").collect();
    assert_eq!(decode.iter().map(|m| m["label"].as_str().unwrap()).collect::<Vec<_>>(), ["f16", "q8_0"]);
    for m in &decode {
        assert_eq!((m["from"]["study"].as_i64(), m["to"]["study"].as_i64()), (Some(1), Some(2)));
        assert_eq!((m["from_samples"].as_u64(), m["to_samples"].as_u64()), (Some(3), Some(3)));
        let (lo, hi, change) = (
            m["ci"]["lo_pct"].as_f64().unwrap(),
            m["ci"]["hi_pct"].as_f64().unwrap(),
            m["change_pct"].as_f64().unwrap(),
        );
        assert!(lo <= change && change <= hi, "{m:#}");
        assert_eq!(m["floor_pct"], Value::Null, "no A/A study: the floor is unknown");
        assert_eq!(m["changed"], serde_json::json!([]), "the same binary");
    }
    let refused = reg["not_compared"].as_array().unwrap();
    assert_eq!(refused.len(), 1, "{reg:#}");
    assert_eq!((refused[0]["label"].as_str(), refused[0]["to"]["study"].as_i64()), (Some("f16"), Some(3)));
    let why = refused[0]["reasons"][0].as_str().unwrap();
    assert!(why.starts_with("model sha256 differs (") && why.contains("SmolLM2"), "{why}");

    let text = history_text(&db, &["--regressions"]);
    assert!(text.contains("A/A noise floor: unknown"), "{text}");
    assert!(text.contains("not compared: f16 study #3 with #2: model sha256 differs ("), "{text}");
    let md = history_text(&db, &["--regressions", "--format", "md"]);
    let md_lines: Vec<&str> = md.lines().collect();
    assert!(md_lines[0].starts_with("| series | label | metric | from_study | to_study |"), "{md}");
    assert!(md_lines.iter().any(|l| l.contains("| f16 | server-decode-tps | 1 | 2 |")), "{md}");
    assert!(md_lines.last().unwrap().contains("not compared: f16 study #3 with #2"), "{md}");
    let csv = history_text(&db, &["--regressions", "--format", "csv"]);
    assert_eq!(csv.lines().count(), 1 + series[0]["moves"].as_array().unwrap().len() + 1, "{csv}");
}

#[test]
fn import_loads_an_old_evidence_folder_and_a_no_history_study_once() {
    let _g = serial();
    let d = tempfile::tempdir().unwrap();
    let old = d.path().join("old");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/evidence-pre-engine/study");
    assert!(std::process::Command::new("cp").arg("-r").arg(&src).arg(&old).status().unwrap().success());
    // A fresh study that records nothing: no database appears where the default one would be.
    let home = tempfile::tempdir().unwrap();
    let file = study_file(
        d.path(),
        "fresh",
        &testbed().target,
        &calibrated_prompt(300),
        1,
        &[kv("f16", "f16"), kv("q8_0", "q8_0")],
    );
    let fresh = d.path().join("fresh");
    let out = abprof()
        .env("XDG_DATA_HOME", home.path())
        .args(["ab", "--no-history", "--study"])
        .arg(&file)
        .arg("--root")
        .arg(&fresh)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("history"), "{stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!stdout.contains("history:"), "{stdout}");
    assert_eq!(std::fs::read_dir(home.path()).unwrap().count(), 0, "--no-history created nothing");

    let db = d.path().join("h.db");
    let import = |dirs: &[&Path]| {
        let out = abprof().args(["history", "import"]).args(dirs).arg("--history").arg(&db).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    let first = import(&[&old, &fresh]);
    eprintln!("{first}");
    assert!(first.contains("as study #1 (ab, 4 samples") && first.contains("as study #2 (ab, 2 samples"), "{first}");
    let again = import(&[&old]);
    assert!(again.contains("already in the history") && again.contains("is study #1"), "{again}");
    let list = history_json(&db, &[]);
    assert_eq!(studies(&list), [1, 2]);
    let rows = list["rows"].as_array().unwrap();
    // The old release recorded no KV type and no commit: both come from what it did record.
    assert_eq!((rows[0]["kv"].as_str(), rows[0]["commit"].as_str()), (Some("f16"), Some("0c1e57098")));
    assert_eq!(rows[0]["model_sha256"], "354ad91e4da3180a8a44fdf22d1665ce45bbef7d62c418b13e5558e959779ec9");
    assert_eq!((rows[1]["label"].as_str(), rows[1]["accepted"].as_u64()), (Some("q8_0"), Some(2)));
    let decode = rows[1]["verdicts"].as_array().unwrap().iter().find(|v| v["metric"] == "server-decode-tps").unwrap();
    // 2 samples a side: a median, no interval (docs/methodology.md §8).
    assert!(decode["median"].as_f64().unwrap() > 0.0 && decode["ci_lo_pct"].is_null(), "{decode}");
    assert_eq!(decode["verdict"], "too few samples", "{decode}");
    // Not an evidence folder: one line naming the fix; nothing is imported.
    let out = abprof().args(["history", "import"]).arg(d.path()).arg("--history").arg(&db).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let lines = stderr_lines(&out);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(lines[0].contains("holds no abprof evidence"), "{lines:?}");
}

#[test]
fn a_study_killed_with_sigkill_leaves_no_row_and_its_resume_records_it_whole() {
    let _g = serial();
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("h.db");
    let root = d.path().join("killed");
    let file = study_file(d.path(), "k", &testbed().target, &calibrated_prompt(300), 2, &[kv("f16", "f16")]);
    let args: Vec<String> = ["ab", "--study", file.to_str().unwrap(), "--root", root.to_str().unwrap()]
        .into_iter()
        .map(String::from)
        .chain(["--history".to_string(), db.display().to_string()])
        .collect();
    let mut child = spawn_abprof(&args);
    sigkill_after_first_sample(&mut child, &root);
    let list = history_json(&db, &[]);
    assert_eq!(list["studies_total"], 0, "{list:#}");
    assert!(list["rows"].as_array().unwrap().is_empty());

    let out = abprof().args(["ab", "--resume"]).arg(&root).arg("--history").arg(&db).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("recorded as study #1"), "{stdout}");
    let rows = history_json(&db, &[])["rows"].clone();
    assert_eq!(rows.as_array().unwrap().len(), 1);
    assert_eq!((rows[0]["accepted"].as_u64(), rows[0]["planned"].as_u64()), (Some(2), Some(2)));
}

/// Issue #35: a SIGTERM while the finished study is written to the history does not cut the
/// write and is not swallowed: the write finishes (the row is there), then abprof exits 143 with
/// the usual "interrupted by signal 15" line. The test holds the database with an exclusive
/// transaction so that abprof's write waits (its busy timeout) while the signal arrives.
#[test]
fn sigterm_during_the_history_write_finishes_the_write_then_exits_143() {
    use nix::sys::signal::{kill, Signal};
    use nix::unistd::Pid;
    use std::time::{Duration, Instant};
    let _g = serial();
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("h.db");
    let root = d.path().join("study");
    let file = study_file(d.path(), "t", &testbed().target, &calibrated_prompt(300), 1, &[kv("f16", "f16")]);
    let stdout = std::fs::File::create(d.path().join("stdout")).unwrap();
    let stderr = std::fs::File::create(d.path().join("stderr")).unwrap();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("abprof"))
        .env("XDG_DATA_HOME", data_home())
        .env_remove("ABPROF_HISTORY")
        .args(["ab", "--json", "--study"])
        .arg(&file)
        .arg("--root")
        .arg(&root)
        .arg("--history")
        .arg(&db)
        .stdout(stdout)
        .stderr(stderr)
        .spawn()
        .unwrap();
    let until = |what: &str, f: &dyn Fn() -> bool| {
        let t0 = Instant::now();
        while !f() {
            assert!(t0.elapsed() < Duration::from_secs(120), "waited too long for {what}");
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    // The history is created before anything of the study: once the sample runs, it exists.
    until("the first sample", &|| root.join("samples/001-f16").is_dir());
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch("BEGIN EXCLUSIVE").unwrap();
    // summary.json is written before the history record; then the write waits on the lock.
    until("the summary", &|| root.join("summary.json").is_file());
    std::thread::sleep(Duration::from_millis(500));
    kill(Pid::from_raw(child.id() as i32), Signal::SIGTERM).unwrap();
    std::thread::sleep(Duration::from_millis(500));
    assert!(child.try_wait().unwrap().is_none(), "abprof finishes the history write before it exits");
    conn.execute_batch("COMMIT").unwrap();
    drop(conn);
    let status = child.wait().unwrap();
    let err = std::fs::read_to_string(d.path().join("stderr")).unwrap();
    assert_eq!(status.code(), Some(143), "{err}");
    assert!(err.contains("interrupted by signal 15 during the history write"), "{err}");
    let list = history_json(&db, &[]);
    assert_eq!(list["studies_total"], 1, "the write finished: {list:#}");
}

#[test]
fn a_bad_history_flag_is_refused_before_anything_is_created() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("never");
    for (flags, why) in [
        (vec!["--history".to_string(), d.path().display().to_string()], "is a folder"),
        (vec!["--history".into(), "x.db".into(), "--no-history".into()], "cannot be used with"),
    ] {
        let out = abprof()
            .args(["ab", "--root"])
            .arg(&root)
            .args(["--model", "m.gguf", "--tokens", "8", "--prompt-tokens", "10", "--variant", "a=/bin/true", "--aa"])
            .args(&flags)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{flags:?}");
        let lines = stderr_lines(&out);
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(lines[0].contains(why), "{lines:?}");
        assert!(!root.exists());
    }
    // A newer abprof's database, or another program's: one line each, and the study never starts.
    let newer = d.path().join("newer.db");
    let conn = rusqlite::Connection::open(&newer).unwrap();
    conn.pragma_update(None, "application_id", 0x6162_7048).unwrap();
    conn.pragma_update(None, "user_version", 999).unwrap();
    drop(conn);
    let foreign = d.path().join("foreign.db");
    rusqlite::Connection::open(&foreign).unwrap().execute_batch("CREATE TABLE t (x)").unwrap();
    for (db, why) in [(&newer, "newer abprof"), (&foreign, "not an abprof history")] {
        let out = abprof()
            .args(["ab", "--root"])
            .arg(&root)
            .args(["--model", "m.gguf", "--tokens", "8", "--prompt-tokens", "10", "--variant", "a=/bin/true", "--aa"])
            .arg("--history")
            .arg(db)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1));
        let lines = stderr_lines(&out);
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(lines[0].contains(why) && lines[0].contains("--history"), "{lines:?}");
        assert!(!root.exists());
    }
}
