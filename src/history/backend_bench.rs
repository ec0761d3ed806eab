//! The backends' cost, measured (BENCHMARKS.md "History backends"; scripts/bench-history runs it):
//! recording one 30-sample study, and `--regressions` over 1,000 studies, on SQLite and on a real
//! PostgreSQL server on this host. Ignored by the test run: it takes a minute.
use super::location::PgTarget;
use super::postgres::pg_cluster::{PgCluster, PG_PASSWORD};
use super::postgres::PgStore;
use super::query::Filters;
use super::record::testing::{study, variant};
use super::record::StudyRecord;
use super::regressions::regressions;
use super::row::Store;
use super::sqlite::SqliteStore;
use std::str::FromStr;
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

/// (median ms to record one study, median ms to read every study back, ms of `--regressions`
/// over all of them: the read, then the bootstrap of every move, the same on both backends)
fn measure(store: &mut dyn Store, studies: usize) -> (f64, f64, f64) {
    let mut writes = Vec::new();
    for i in 0..studies {
        let s = thirty(i);
        let t0 = Instant::now();
        assert!(store.record(&s).unwrap().1);
        writes.push(t0.elapsed().as_secs_f64() * 1000.0);
    }
    let reads: Vec<f64> = (0..3)
        .map(|_| {
            let t0 = Instant::now();
            assert_eq!(store.studies().unwrap().len(), studies);
            t0.elapsed().as_secs_f64() * 1000.0
        })
        .collect();
    let t0 = Instant::now();
    let all = store.studies().unwrap();
    let r = regressions(&all, "bench".into(), Filters::default());
    assert!(!r.series.is_empty());
    (median(writes), median(reads), t0.elapsed().as_secs_f64() * 1000.0)
}

#[test]
#[ignore = "a benchmark: scripts/bench-history runs it"]
fn bench_history_backends() {
    let studies: usize = std::env::var("ABPROF_BENCH_STUDIES").ok().and_then(|s| s.parse().ok()).unwrap_or(1000);
    let d = tempfile::tempdir().unwrap();
    let mut lite = SqliteStore::open(&d.path().join("h.db")).unwrap();
    let (lw, lr, lg) = measure(&mut lite, studies);
    let pg = PgCluster::start().expect("PostgreSQL for the bench");
    let url = pg.database("bench");
    let mut config = postgres::Config::from_str(&url).unwrap();
    config.password(PG_PASSWORD);
    let mut post = PgStore::connect(&PgTarget { url, config }).unwrap();
    let (pw, pr, pg_reg) = measure(&mut post, studies);
    println!(
        "record one 30-sample study (median of {studies}): sqlite {lw:.2} ms, postgres {pw:.2} ms, ratio {:.1}x",
        pw / lw
    );
    println!(
        "read {studies} studies back (median of 3): sqlite {lr:.0} ms, postgres {pr:.0} ms, ratio {:.1}x",
        pr / lr
    );
    println!(
        "--regressions over {studies} studies: sqlite {lg:.0} ms, postgres {pg_reg:.0} ms, ratio {:.2}x",
        pg_reg / lg
    );
}
