//! A team's history on a real PostgreSQL server (tests/common/pg_cluster.rs starts one per
//! test): the location is parsed once and an unknown scheme is refused; one study recorded by two
//! processes at once lands once; two hosts' studies never compare; SQLite and PostgreSQL answer
//! alike; a host that cannot reach the database keeps its study in the outbox and `history push`
//! sends it later; a killed study leaves no row (docs/methodology.md §15).
mod common;
use common::pg_cluster::{PgCluster, PG_PASSWORD};
use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/evidence-pre-engine/study")
}

/// A copy of the pre-engine study folder at `to`, its host facts edited by `host`.
fn study_copy(to: &Path, host: impl FnOnce(&mut Value)) -> PathBuf {
    assert!(std::process::Command::new("cp").arg("-r").arg(fixture()).arg(to).status().unwrap().success());
    let path = to.join("host.json");
    let mut facts = read_json(&path);
    host(&mut facts);
    std::fs::write(&path, serde_json::to_string_pretty(&facts).unwrap()).unwrap();
    to.to_path_buf()
}

/// abprof with the test server's password in the environment, as a CI job gives it.
fn pg_abprof() -> assert_cmd::Command {
    let mut c = abprof();
    c.env("PGPASSWORD", PG_PASSWORD);
    c
}

fn run_ok(c: &mut assert_cmd::Command) -> String {
    let out = c.output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

fn import(history: &str, dirs: &[&Path]) -> String {
    run_ok(pg_abprof().args(["history", "import"]).args(dirs).args(["--history", history]))
}

fn json_of(history: &str, extra: &[&str]) -> Value {
    let out = run_ok(pg_abprof().args(["history", "--history", history]).args(extra).args(["--format", "json"]));
    serde_json::from_str(&out).unwrap()
}

#[test]
fn the_history_location_is_a_path_or_a_postgres_url_and_any_other_scheme_is_refused() {
    let d = tempfile::tempdir().unwrap();
    // Nothing listens on port 9: the URL is tried as a database and never becomes a folder.
    let out = abprof()
        .current_dir(d.path())
        .args(["history", "--history", "postgres://ci@127.0.0.1:9/abprof"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let lines = stderr_lines(&out);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(lines[0].contains("cannot reach the history postgres://ci@127.0.0.1:9/abprof"), "{lines:?}");
    assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0, "no folder named postgres: appeared");
    for (how, value, why) in [
        ("flag", "mysql://ci@db/abprof", "unknown scheme mysql://"),
        ("env", "sqlite:///tmp/h.db", "unknown scheme sqlite://"),
        ("flag", "postgres://ci:hunter2@db/abprof", "carries a password"),
        ("env", "postgres://ci:hunter2@db/abprof", "carries a password"),
        ("flag", "postgres://ci@db/abprof?sslcert=/c.pem", "sslcert is not supported"),
        ("env", "postgres://ci@db/abprof?sslmode=verify-full", "needs the server's CA"),
    ] {
        let mut c = abprof();
        c.current_dir(d.path()).arg("history");
        if how == "flag" {
            c.args(["--history", value]);
        } else {
            c.env("ABPROF_HISTORY", value);
        }
        let out = c.output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{how} {value}");
        let lines = stderr_lines(&out);
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(lines[0].contains(why), "{lines:?}");
        assert!(!lines[0].contains("hunter2"), "the password is never echoed: {lines:?}");
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
    }
}

/// Two hosts import the same evidence folder at the same moment: one study, and both say so.
#[test]
fn one_study_recorded_by_two_processes_at_once_lands_once() {
    let Some(pg) = PgCluster::start() else { return };
    let url = pg.database("team");
    let d = tempfile::tempdir().unwrap();
    let study = study_copy(&d.path().join("one"), |_| {});
    let bin = assert_cmd::cargo::cargo_bin("abprof");
    let spawn = || {
        std::process::Command::new(&bin)
            .args(["history", "import"])
            .arg(&study)
            .args(["--history", &url, "--format", "json"])
            .env("PGPASSWORD", PG_PASSWORD)
            .env("XDG_DATA_HOME", data_home())
            .env_remove("ABPROF_HISTORY")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let children: Vec<_> = (0..4).map(|_| spawn()).collect();
    let outs: Vec<Value> = children
        .into_iter()
        .map(|c| {
            let out = c.wait_with_output().unwrap();
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            serde_json::from_slice(&out.stdout).unwrap()
        })
        .collect();
    let news: Vec<bool> = outs.iter().map(|o| o["folders"][0]["studies"][0]["new"].as_bool().unwrap()).collect();
    assert_eq!(news.iter().filter(|n| **n).count(), 1, "{outs:#?}");
    assert_eq!(pg.query("team", "SELECT count(*) FROM studies"), "1");
    assert_eq!(pg.query("team", "SELECT count(*) FROM samples"), "4");
    // Re-recording the same evidence later is a no-op too, from another path as well (a CI
    // artifact downloaded elsewhere): the identity is the study's, not its folder's.
    assert!(import(&url, &[&study]).contains("already in the history"));
    let moved = study_copy(&d.path().join("artifact"), |_| {});
    assert!(import(&url, &[&moved]).contains("already in the history"));
    assert_eq!(pg.query("team", "SELECT count(*) FROM studies"), "1");
}

/// Two hosts' studies of one setup never compare, and the reason is printed; SQLite and
/// PostgreSQL answer `--regressions` and the listing alike on the same evidence.
#[test]
fn two_hosts_never_compare_and_sqlite_and_postgres_answer_alike() {
    let Some(pg) = PgCluster::start() else { return };
    let url = pg.database("team");
    let d = tempfile::tempdir().unwrap();
    let a = study_copy(&d.path().join("a"), |_| {});
    let a2 = study_copy(&d.path().join("a2"), |h| h["started_at"] = "2026-11-30T11:00:00+00:00".into());
    let b = study_copy(&d.path().join("b"), |h| {
        h["hostname"] = "mi300x".into();
        h["started_at"] = "2026-11-30T12:00:00+00:00".into();
        h["telemetry"] = "ROCm SMI: AMD Instinct MI300X".into();
    });
    let b2 = study_copy(&d.path().join("b2"), |h| {
        h["hostname"] = "mi300x".into();
        h["started_at"] = "2026-11-30T13:00:00+00:00".into();
        h["telemetry"] = "ROCm SMI: AMD Instinct MI300X".into();
    });
    let today = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/evidence-today-ab/study");
    let sqlite = d.path().join("h.db");
    let sqlite = sqlite.to_str().unwrap();
    for h in [sqlite, url.as_str()] {
        import(h, &[&a, &a2, &b, &b2, &today]);
    }
    let text = run_ok(pg_abprof().args(["history", "--regressions", "--history", &url]));
    assert!(text.contains("not compared: f16 study #3 with #2: host differs (vm vs mi300x)"), "{text}");
    assert!(text.contains("GPU differs"), "{text}");

    let strip = |mut v: Value| {
        v.as_object_mut().unwrap().remove("history");
        v
    };
    for extra in [&["--regressions"][..], &[][..], &["--regressions", "--label", "f16"][..]] {
        let (lite, post) = (strip(json_of(sqlite, extra)), strip(json_of(&url, extra)));
        assert_eq!(lite, post, "{extra:?}");
    }
    // Filtered by host or GPU: only that host's studies.
    for (flag, value) in [("--host", "mi300x"), ("--gpu", "MI300X")] {
        for h in [sqlite, url.as_str()] {
            let rows = json_of(h, &[flag, value])["rows"].clone();
            let studies: Vec<i64> = rows.as_array().unwrap().iter().map(|r| r["study"].as_i64().unwrap()).collect();
            assert!(!studies.is_empty() && studies.iter().all(|s| [3, 4].contains(s)), "{flag} {value}: {studies:?}");
        }
    }
    // A series per host, never mixed; --format md one table per host, ready for a pull request.
    for h in [sqlite, url.as_str()] {
        let reg = json_of(h, &["--regressions"]);
        let keys: Vec<&str> =
            reg["series"].as_array().unwrap().iter().map(|s| s["key"]["host"].as_str().unwrap()).collect();
        assert_eq!(keys, ["vm", "mi300x"], "{reg:#}");
        let md = run_ok(pg_abprof().args(["history", "--regressions", "--format", "md", "--history", h]));
        let heads: Vec<&str> = md.lines().filter(|l| l.starts_with("### ")).collect();
        assert_eq!(heads, ["### host vm", "### host mi300x", "### not compared"], "{md}");
        let mi300x = md.split("### host mi300x").nth(1).unwrap().split("### not compared").next().unwrap();
        assert!(mi300x.contains("| f16 | server-decode-tps | 3 | 4 |") && !mi300x.contains("host vm"), "{md}");
    }
    let reg = json_of(&url, &["--regressions"]);
    assert!(!reg["series"].as_array().unwrap().is_empty(), "{reg:#}");
    let hosts: Vec<&str> =
        reg["not_compared"].as_array().unwrap().iter().filter_map(|n| n["reasons"][0].as_str()).collect();
    assert!(hosts.iter().any(|r| r.starts_with("host differs (vm vs mi300x)")), "{reg:#}");
}

/// A study on a host that cannot reach the database finishes with its exit status, keeps its
/// row in the outbox and says so in one line; `history push` sends it later, once.
#[test]
fn a_study_that_cannot_reach_postgres_waits_in_the_outbox_and_push_sends_it_once() {
    let _g = serial();
    let Some(mut pg) = PgCluster::init() else { return };
    let url = pg.url("postgres");
    let d = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let root = d.path().join("offline");
    let out = pg_abprof()
        .env("XDG_DATA_HOME", home.path())
        // One variant, one sample: a study file (the flags refuse both).
        .args(study_file_of(&ab_args(&root, 8, 1, &[format!("f16={}", testbed().server.display())])))
        .args(["--history", &url])
        .output()
        .unwrap();
    let lines = stderr_lines(&out);
    assert_eq!(out.status.code(), Some(0), "{lines:?}");
    let said: Vec<&String> = lines.iter().filter(|l| l.contains("history")).collect();
    assert_eq!(said.len(), 1, "{lines:?}");
    // The database's own outbox, named by its user, host, port and database.
    let outboxes: Vec<PathBuf> =
        std::fs::read_dir(home.path().join("abprof/pending")).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(outboxes.len(), 1, "{outboxes:?}");
    let pending = outboxes[0].clone();
    let name = pending.file_name().unwrap().to_str().unwrap();
    assert!(name.starts_with(&format!("abprof@127.0.0.1_{}_postgres-", pg.port)) && name.ends_with(".db"), "{name}");
    assert!(
        said[0].contains("cannot reach the history") && said[0].contains(&pending.display().to_string()),
        "{said:?}"
    );
    assert!(said[0].contains("abprof history push"), "{said:?}");
    // Another database's outbox, and the one outbox an earlier abprof kept for every database:
    // a push to this database sends neither, and names both.
    let other = home.path().join("abprof/pending/abprof@db.example_5432_other-00000000.db");
    let unnamed = home.path().join("abprof/pending.db");
    for to in [&other, &unnamed] {
        std::fs::copy(&pending, to).unwrap();
    }

    pg.resume();
    let push = |history: &str, extra: &[&str]| {
        run_ok(
            pg_abprof().env("XDG_DATA_HOME", home.path()).args(["history", "push", "--history", history]).args(extra),
        )
    };
    let first = push(&url, &[]);
    assert!(first.contains("pushed") && first.contains("1 pending study sent"), "{first}");
    assert!(first.contains(&format!("1 study waits in {}, another database's outbox", other.display())), "{first}");
    let hint = format!(
        "1 study waits in {}, the outbox of an earlier abprof, which did not record their database: send them with `abprof history push --outbox {} --history URL`",
        unnamed.display(),
        unnamed.display()
    );
    assert!(first.contains(&hint), "{first}");
    let second = push(&url, &[]);
    assert!(second.contains("0 pending studies sent"), "{second}");
    let unnamed_arg = unnamed.to_str().unwrap();
    let legacy = push(&url, &["--outbox", unnamed_arg]);
    assert!(legacy.contains("already there:") && legacy.contains("1 pending study sent to"), "{legacy}");
    assert!(!push(&url, &[]).contains("earlier abprof"), "the earlier outbox is empty now");
    let list = json_of(&url, &[]);
    assert_eq!(list["studies_total"], 1, "{list:#}");
    assert_eq!(list["rows"][0]["accepted"], 1);
    // The evidence folder imported again: already there (the identity is the study's).
    assert!(import(&url, &[&root]).contains("already in the history"));
    // A SQLite history has no outbox to push.
    let out = pg_abprof().args(["history", "push", "--history"]).arg(d.path().join("h.db")).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "a usage error");
    assert!(stderr_lines(&out)[0].contains("only a PostgreSQL history keeps an outbox"));
}

#[test]
fn a_study_killed_with_sigkill_leaves_no_row_in_postgres() {
    let _g = serial();
    let Some(pg) = PgCluster::start() else { return };
    let url = pg.database("team");
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("killed");
    let mut args = study_file_of(&ab_args(&root, 8, 2, &[format!("f16={}", testbed().server.display())]));
    args.extend(["--history".into(), url.clone()]);
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("abprof"))
        .env("XDG_DATA_HOME", data_home())
        .env("PGPASSWORD", PG_PASSWORD)
        .env_remove("ABPROF_HISTORY")
        .args(&args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    sigkill_after_first_sample(&mut child, &root);
    assert_eq!(pg.query("team", "SELECT count(*) FROM studies"), "0");
    assert_eq!(pg.query("team", "SELECT count(*) FROM samples"), "0");
}

/// Many writers on SQLite too: imports at the same moment all land, and one that finds the write
/// lock held waits for it (the busy timeout) and succeeds.
#[test]
fn sqlite_writers_at_once_wait_briefly_and_all_succeed() {
    let d = tempfile::tempdir().unwrap();
    let db = d.path().join("h.db");
    // Three runs (a copy of one folder would be one study: its start makes each its own).
    let run = |name: &str, hour: u32| {
        study_copy(&d.path().join(name), |h| h["started_at"] = format!("2026-11-30T{hour}:00:00+00:00").into())
    };
    let dirs: Vec<PathBuf> = (0..3).map(|i| run(&format!("s{i}"), 11 + i)).collect();
    let bin = assert_cmd::cargo::cargo_bin("abprof");
    let spawn = |dir: &Path| {
        std::process::Command::new(&bin)
            .args(["history", "import"])
            .arg(dir)
            .arg("--history")
            .arg(&db)
            .env("XDG_DATA_HOME", data_home())
            .env_remove("ABPROF_HISTORY")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let t0 = Instant::now();
    let children: Vec<_> = dirs.iter().map(|dir| spawn(dir)).collect();
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    assert!(t0.elapsed() < Duration::from_secs(20), "{:?}", t0.elapsed());
    let conn = rusqlite::Connection::open(&db).unwrap();
    let n: i64 = conn.query_row("SELECT count(*) FROM studies", [], |r| r.get(0)).unwrap();
    assert_eq!(n, 3);
    // Another writer holds the lock for 2 s: the import waits, then lands.
    conn.execute_batch("BEGIN IMMEDIATE").unwrap();
    let extra = run("held", 15);
    let child = spawn(&extra);
    std::thread::sleep(Duration::from_secs(2));
    conn.execute_batch("COMMIT").unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let n: i64 = conn.query_row("SELECT count(*) FROM studies", [], |r| r.get(0)).unwrap();
    assert_eq!(n, 4);
}

/// A team database that takes TCP sessions over TLS only (docs/methodology.md §15 "TLS"):
/// libpq's sslmode words mean what they mean to psql — `disable` is refused by the server,
/// `prefer` and `require` encrypt without checking the certificate, `verify-ca` checks the chain,
/// `verify-full` the chain and the host name — and a failed check is one line naming its cause.
#[test]
fn a_tls_only_database_is_reached_with_libpqs_sslmodes_and_a_failed_check_is_named() {
    let Some(pg) = PgCluster::start_tls() else { return };
    pg.query("postgres", "CREATE DATABASE team");
    let home = tempfile::tempdir().unwrap();
    let url = |host: &str, query: &str| format!("postgres://abprof@{host}:{}/team?{query}", pg.port);
    let (ca, other) = (pg.ca().display().to_string(), pg.other_ca().display().to_string());
    let list = |u: &str, env: &[(&str, &str)]| {
        let mut c = pg_abprof();
        c.env("HOME", home.path()).args(["history", "--history", u, "--format", "json"]);
        for (k, v) in env {
            c.env(k, v);
        }
        c.output().unwrap()
    };
    let reached = |u: &str, env: &[(&str, &str)]| {
        let out = list(u, env);
        assert_eq!(out.status.code(), Some(0), "{u}: {:?}", stderr_lines(&out));
    };
    let refused = |u: &str, env: &[(&str, &str)], why: &str| {
        let out = list(u, env);
        assert_eq!(out.status.code(), Some(1), "{u}");
        let lines = stderr_lines(&out);
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(lines[0].contains("cannot reach the history") && lines[0].contains(why), "{u}: {lines:?}");
        assert!(!lines[0].contains(PG_PASSWORD), "{lines:?}");
    };
    refused(&url("127.0.0.1", "sslmode=disable"), &[], "no encryption");
    reached(&url("127.0.0.1", ""), &[]);
    reached(&url("127.0.0.1", "sslmode=require"), &[]);
    reached(&url("localhost", &format!("sslmode=verify-full&sslrootcert={ca}")), &[]);
    // The certificate is for localhost alone: the chain holds, the name does not.
    reached(&url("127.0.0.1", &format!("sslmode=verify-ca&sslrootcert={ca}")), &[]);
    refused(&url("127.0.0.1", &format!("sslmode=verify-full&sslrootcert={ca}")), &[], "not valid for name");
    refused(&url("localhost", &format!("sslmode=verify-full&sslrootcert={other}")), &[], "UnknownIssuer");
    // require with a root at hand checks the chain, as libpq does.
    refused(&url("localhost", &format!("sslmode=require&sslrootcert={other}")), &[], "UnknownIssuer");
    // libpq's environment stands in for the URL's parameters.
    reached(&url("localhost", ""), &[("PGSSLMODE", "verify-full"), ("PGSSLROOTCERT", &ca)]);
    refused(&url("localhost", ""), &[("PGSSLMODE", "disable")], "no encryption");

    // A study recorded over verify-full lands, and is read back over require.
    let d = tempfile::tempdir().unwrap();
    let study = study_copy(&d.path().join("one"), |_| {});
    let full = url("localhost", &format!("sslmode=verify-full&sslrootcert={ca}"));
    assert!(import(&full, &[&study]).contains("imported"));
    assert_eq!(pg.query("team", "SELECT count(*) FROM studies"), "1");
    let out = list(&url("127.0.0.1", "sslmode=require"), &[]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["studies_total"], 1, "{v:#}");
}
