//! llama-bench results as history rows (docs/methodology.md §15 "llama-bench results"): written
//! once by identity and read back, the same statements on every backend.
use super::bench_results::BenchResult;
use super::error::HistoryError;
use super::row::{Cell, Columns, Exec, Select};
use crate::llama_bench::BenchRow;

const COLUMNS: [&str; 20] = [
    "identity",
    "imported_at",
    "source",
    "format",
    "host",
    "build_commit",
    "build_number",
    "model_filename",
    "model_type",
    "backends",
    "gpu_info",
    "test",
    "n_prompt",
    "n_gen",
    "n_depth",
    "avg_ts",
    "stddev_ts",
    "samples_ts",
    "test_time",
    "settings",
];

/// Writes the results not there yet (by identity); how many were new.
pub(crate) fn write_results(x: &mut dyn Exec, results: &[BenchResult]) -> Result<usize, HistoryError> {
    let mut new = 0;
    for r in results {
        let find = format!("SELECT id FROM llama_bench_results WHERE identity = {}", x.placeholder(1));
        if x.returning(&find, &[Cell::Text(Some(r.identity.clone()))])?.is_some() {
            continue;
        }
        let b = &r.row;
        let t = |s: &str| Cell::Text(Some(s.to_string()));
        let cells = vec![
            t(&r.identity),
            t(&r.imported_at),
            t(&r.source),
            t(&r.format),
            Cell::Text(r.host.clone()),
            t(&b.build_commit),
            Cell::Int(b.build_number),
            t(&b.model_filename),
            t(&b.model_type),
            t(&b.backends),
            t(&b.gpu_info),
            t(&b.test()),
            Cell::Int(i64::try_from(b.n_prompt).ok()),
            Cell::Int(i64::try_from(b.n_gen).ok()),
            Cell::Int(i64::try_from(b.n_depth).ok()),
            Cell::Real(Some(b.avg_ts)),
            Cell::Real(Some(b.stddev_ts)),
            t(&serde_json::to_string(&b.samples_ts).expect("numbers serialize")),
            t(&b.test_time),
            t(&serde_json::to_string(&b.settings).expect("strings serialize")),
        ];
        x.insert_rows("llama_bench_results", &COLUMNS, &[cells], false)?;
        new += 1;
    }
    Ok(new)
}

fn need<T>(v: Option<T>, column: &str) -> Result<T, HistoryError> {
    v.ok_or_else(|| HistoryError::Sql(format!("llama_bench_results.{column} is NULL")))
}

/// Every recorded llama-bench result, in the order imported.
pub(crate) fn read_results(q: &mut dyn Select) -> Result<Vec<BenchResult>, HistoryError> {
    let mut out = Vec::new();
    q.each("SELECT * FROM llama_bench_results ORDER BY id", &mut |r: &dyn Columns| {
        let text = |c: &str| -> Result<String, HistoryError> { need(r.text(c)?, c) };
        let count = |c: &str| -> Result<u64, HistoryError> { Ok(need(r.int(c)?, c)?.max(0) as u64) };
        let samples_ts: Vec<f64> = serde_json::from_str(&r.text("samples_ts")?.unwrap_or_else(|| "[]".into()))
            .map_err(|e| HistoryError::Sql(format!("llama_bench_results.samples_ts: {e}")))?;
        let settings = serde_json::from_str(&text("settings")?)
            .map_err(|e| HistoryError::Sql(format!("llama_bench_results.settings: {e}")))?;
        out.push(BenchResult {
            identity: text("identity")?,
            imported_at: text("imported_at")?,
            source: text("source")?,
            format: text("format")?,
            host: r.text("host")?,
            row: BenchRow {
                build_commit: text("build_commit")?,
                build_number: r.int("build_number")?,
                model_filename: text("model_filename")?,
                model_type: r.text("model_type")?.unwrap_or_default(),
                backends: r.text("backends")?.unwrap_or_default(),
                gpu_info: r.text("gpu_info")?.unwrap_or_default(),
                n_prompt: count("n_prompt")?,
                n_gen: count("n_gen")?,
                n_depth: count("n_depth")?,
                test_time: r.text("test_time")?.unwrap_or_default(),
                avg_ts: need(r.real("avg_ts")?, "avg_ts")?,
                stddev_ts: need(r.real("stddev_ts")?, "stddev_ts")?,
                samples_ts,
                settings,
            },
        });
        Ok(())
    })?;
    Ok(out)
}
