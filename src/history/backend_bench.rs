//! The backends' cost, measured (BENCHMARKS.md "History backends"; scripts/bench-history runs it):
//! opening the history (for PostgreSQL: connecting), recording one 30-sample study on an open
//! history, and `--regressions` over 1,000 studies, on SQLite and on a real PostgreSQL server on
//! this host, plain and over TLS (verify-full). Ignored by the test run: it takes a minute.
use super::location::PgTarget;
use super::postgres::pg_cluster::{PgCluster, PG_PASSWORD};
use super::postgres::PgStore;
use super::query::Filters;
use super::record::testing::{study, variant};
use super::record::StudyRecord;
use super::regressions::regressions;
use super::row::Store;
use super::sqlite::SqliteStore;
use std::time::Instant;

/// Study `i`: two variants of 15 samples each (30 samples), an hour after study `i - 1`.
fn thirty(i: usize) -> StudyRecord {
    let xs: Vec<f64> = (0..15).map(|k| 10.0 + ((i * 7 + k * 3) % 11) as f64 / 10.0).collect();
    let ys: Vec<f64> = xs.iter().map(|x| x * 0.97).collect();
    let sha = if i.is_multiple_of(2) { "1" } else { "2" };
    study(&format!("s{i}"), i as i64 * 60, vec![variant("f16", sha, &xs), variant("q8_0", sha, &ys)])
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn ms_since(t0: Instant) -> f64 {
    t0.elapsed().as_secs_f64() * 1000.0
}

/// What one backend cost.
struct Figures {
    /// Median ms to open the history (SQLite: open the file; PostgreSQL: connect, authenticate
    /// and check the schema version), as a CI job does once per study.
    open: f64,
    /// Median ms to record one study on an open history.
    record: f64,
    /// Median ms to read every study back.
    read: f64,
    /// ms of `--regressions` over every study: the read, then every move's interval.
    regressions: f64,
}

/// Records `studies` studies through `open()`'s store, opening it `OPENS` times on its own first.
fn measure(mut open: impl FnMut() -> Box<dyn Store>, studies: usize) -> Figures {
    const OPENS: usize = 20;
    let opens: Vec<f64> = (0..OPENS)
        .map(|_| {
            let t0 = Instant::now();
            drop(open());
            ms_since(t0)
        })
        .collect();
    let mut store = open();
    let mut writes = Vec::new();
    for i in 0..studies {
        let s = thirty(i);
        let t0 = Instant::now();
        assert!(store.record(&s).unwrap().1);
        writes.push(ms_since(t0));
    }
    let reads: Vec<f64> = (0..3)
        .map(|_| {
            let t0 = Instant::now();
            assert_eq!(store.studies().unwrap().len(), studies);
            ms_since(t0)
        })
        .collect();
    let t0 = Instant::now();
    let all = store.studies().unwrap();
    let r = regressions(&all, "bench".into(), Filters::default());
    assert!(!r.series.is_empty());
    Figures { open: median(opens), record: median(writes), read: median(reads), regressions: ms_since(t0) }
}

#[test]
#[ignore = "a benchmark: scripts/bench-history runs it"]
fn bench_history_backends() {
    let studies: usize = std::env::var("ABPROF_BENCH_STUDIES").ok().and_then(|s| s.parse().ok()).unwrap_or(1000);
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("h.db");
    let lite = measure(|| Box::new(SqliteStore::open(&path).unwrap()), studies);
    let pg = PgCluster::start().expect("PostgreSQL for the bench");
    let url = pg.database("bench");
    let target = PgTarget::with_password(&url, PG_PASSWORD);
    let post = measure(|| Box::new(PgStore::connect(&target).unwrap()), studies);
    drop(pg);
    // The same over TLS (docs/methodology.md §15 "TLS"): a TLS-only server, verify-full.
    let pg = PgCluster::start_tls().expect("PostgreSQL for the bench");
    pg.query("postgres", "CREATE DATABASE bench");
    let ca = pg.ca().display().to_string();
    let url = format!("postgres://abprof@localhost:{}/bench?sslmode=verify-full&sslrootcert={ca}", pg.port);
    let target = PgTarget::with_password(&url, PG_PASSWORD);
    let tls = measure(|| Box::new(PgStore::connect(&target).unwrap()), studies);
    let line = |what: &str, l: f64, p: f64, t: f64| {
        println!(
            "{what}: sqlite {l:.2} ms, postgres {p:.2} ms ({:.1}x), postgres over TLS {t:.2} ms ({:.1}x)",
            p / l,
            t / l
        );
    };
    line("open the history (median of 20; postgres: connect + schema check)", lite.open, post.open, tls.open);
    let record = format!("record one 30-sample study, history open (median of {studies})");
    line(&record, lite.record, post.record, tls.record);
    let (lo, po, to) = (lite.open + lite.record, post.open + post.record, tls.open + tls.record);
    line("open + record one study (a CI job's cost)", lo, po, to);
    line(&format!("read {studies} studies back (median of 3)"), lite.read, post.read, tls.read);
    line(&format!("--regressions over {studies} studies"), lite.regressions, post.regressions, tls.regressions);
}
