//! The embedded backend: one SQLite file (src/history/migrate.rs opens and migrates it). A study
//! is written in one IMMEDIATE transaction, so a crash or a kill leaves the whole study or none
//! of it, and a second writer waits for the first (the busy timeout) instead of failing.
use super::error::HistoryError;
use super::row::{read_studies, write_study, Cell, Columns, Exec, Select, Store, StoredStudy};
use crate::history::record::StudyRecord;
use rusqlite::types::{ToSqlOutput, Value};
use rusqlite::{Connection, ToSql};
use std::path::Path;

impl ToSql for Cell {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::Owned(match self {
            Cell::Int(Some(n)) => Value::Integer(*n),
            Cell::Real(Some(x)) => Value::Real(*x),
            Cell::Text(Some(t)) => Value::Text(t.clone()),
            Cell::Int(None) | Cell::Real(None) | Cell::Text(None) => Value::Null,
        }))
    }
}

pub(crate) struct SqliteStore {
    conn: Connection,
}

impl SqliteStore {
    /// Opens (creating it and its folder if needed) the SQLite history at `path`.
    pub(crate) fn open(path: &Path) -> Result<SqliteStore, HistoryError> {
        Ok(SqliteStore { conn: super::migrate::open(path)? })
    }

    #[cfg(test)]
    pub(crate) fn conn(&self) -> &Connection {
        &self.conn
    }

    /// How many studies it holds (an outbox a push names without sending).
    pub(crate) fn count(&self) -> Result<usize, HistoryError> {
        Ok(self.conn.query_row("SELECT count(*) FROM studies", [], |r| r.get::<_, i64>(0))? as usize)
    }

    /// Deletes a study and every row of it (the outbox, once the study is pushed).
    pub(crate) fn delete(&mut self, identity: &str) -> Result<(), HistoryError> {
        self.conn.execute("DELETE FROM studies WHERE identity = ?1", [identity])?;
        Ok(())
    }
}

struct Tx<'a>(rusqlite::Transaction<'a>);

impl Exec for Tx<'_> {
    fn returning(&mut self, sql: &str, cells: &[Cell]) -> Result<Option<i64>, HistoryError> {
        let mut stmt = self.0.prepare_cached(sql)?;
        let mut rows = stmt.query(rusqlite::params_from_iter(cells))?;
        Ok(match rows.next()? {
            Some(r) => r.get(0)?,
            None => None,
        })
    }

    fn execute(&mut self, sql: &str, cells: &[Cell]) -> Result<(), HistoryError> {
        self.0.prepare_cached(sql)?.execute(rusqlite::params_from_iter(cells))?;
        Ok(())
    }

    fn placeholder(&self, n: usize) -> String {
        format!("?{n}")
    }
}

impl Columns for rusqlite::Row<'_> {
    fn int(&self, column: &str) -> Result<Option<i64>, HistoryError> {
        Ok(self.get(column)?)
    }
    fn real(&self, column: &str) -> Result<Option<f64>, HistoryError> {
        Ok(self.get(column)?)
    }
    fn text(&self, column: &str) -> Result<Option<String>, HistoryError> {
        Ok(self.get(column)?)
    }
}

struct Reader<'a>(&'a Connection);

impl Select for Reader<'_> {
    fn each(
        &mut self,
        sql: &str,
        each: &mut dyn FnMut(&dyn Columns) -> Result<(), HistoryError>,
    ) -> Result<(), HistoryError> {
        let mut stmt = self.0.prepare(sql)?;
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            each(r)?;
        }
        Ok(())
    }
}

impl Store for SqliteStore {
    fn record(&mut self, study: &StudyRecord) -> Result<(i64, bool), HistoryError> {
        // IMMEDIATE: the write lock first, so the identity check and the insert see one state.
        let mut tx = Tx(self.conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?);
        let done = write_study(&mut tx, study)?;
        tx.0.commit()?;
        Ok(done)
    }

    fn studies(&mut self) -> Result<Vec<StoredStudy>, HistoryError> {
        // One read transaction: a writer committing meanwhile is seen whole or not at all.
        let tx = self.conn.transaction()?;
        let out = read_studies(&mut Reader(&tx))?;
        tx.commit()?;
        Ok(out)
    }

    fn record_bench(&mut self, results: &[super::bench_results::BenchResult]) -> Result<usize, HistoryError> {
        let mut tx = Tx(self.conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?);
        let new = super::bench_rows::write_results(&mut tx, results)?;
        tx.0.commit()?;
        Ok(new)
    }

    fn bench_results(&mut self) -> Result<Vec<super::bench_results::BenchResult>, HistoryError> {
        let tx = self.conn.transaction()?;
        let out = super::bench_rows::read_results(&mut Reader(&tx))?;
        tx.commit()?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::super::record::testing::{study, variant};
    use super::super::row::unix_seconds;
    use super::*;

    fn history() -> (tempfile::TempDir, SqliteStore) {
        let d = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(&d.path().join("h.db")).unwrap();
        (d, store)
    }

    fn count(conn: &Connection, table: &str) -> i64 {
        conn.query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0)).unwrap()
    }

    #[test]
    fn a_study_is_written_whole_once_and_reads_back_as_the_record_it_was() {
        let (_d, mut h) = history();
        let mut s = study("one", 0, vec![variant("f16", "1", &[10.0, 11.0, 12.0]), variant("q8_0", "1", &[9.0, 9.5])]);
        s.variants[1].samples[1].rejections = vec![crate::summary::rules::Rejection {
            rule: crate::summary::rules::Rule::OtherWorkload,
            reason: "busy".into(),
        }];
        s.variants[0].kernels = vec![("matmul".into(), 1.5)];
        use crate::summary::Metric;
        s.variants[0].samples[0].more_metrics =
            vec![(Metric::DecodeJPerToken, 1.14), (Metric::DecodeMeanPowerW, 349.6)];
        let first = h.record(&s).unwrap();
        assert!(first.1, "{first:?}");
        let again = h.record(&s).unwrap();
        assert_eq!(again, (first.0, false), "the same identity is recognized");
        assert_eq!((count(h.conn(), "studies"), count(h.conn(), "samples"), count(h.conn(), "rejections")), (1, 5, 1));
        assert_eq!(count(h.conn(), "sample_energy"), 2);
        let back = h.studies().unwrap();
        assert_eq!(back.len(), 1);
        assert_eq!(back[0].record, s, "one row model: what is read back is what was written");
        assert_eq!(back[0].variant_ids.len(), 2);
        assert_eq!(
            unix_seconds(back[0].record.started_at.as_deref().unwrap()),
            unix_seconds("2026-11-30T10:00:00+00:00")
        );
    }

    /// A study recorded by an abprof whose identity held the folder's path is recognized by
    /// that identity (docs/methodology.md §15 "identity").
    #[test]
    fn a_study_recorded_under_its_folder_identity_is_not_written_again() {
        let (_d, mut h) = history();
        let earlier = study("one", 0, vec![variant("f16", "1", &[10.0, 11.0, 12.0])]);
        let first = h.record(&StudyRecord { identity: "folder-identity".into(), ..earlier.clone() }).unwrap();
        let now = StudyRecord { folder_identity: Some("folder-identity".into()), ..earlier };
        assert_eq!(h.record(&now).unwrap(), (first.0, false));
        assert_eq!(count(h.conn(), "studies"), 1);
    }

    /// One transaction: a write that fails at its last insert leaves no trace of the study.
    #[test]
    fn a_write_that_fails_half_way_leaves_no_row() {
        let (_d, mut h) = history();
        h.conn
            .execute_batch(
                "CREATE TRIGGER fail_last BEFORE INSERT ON kernel_categories BEGIN SELECT RAISE(ABORT, 'disk gone'); END;",
            )
            .unwrap();
        let mut s = study("half", 0, vec![variant("f16", "1", &[10.0, 11.0])]);
        s.variants[0].kernels = vec![("matmul".into(), 1.5)];
        let e = h.record(&s).unwrap_err().to_string();
        assert!(e.contains("disk gone"), "{e}");
        for table in ["studies", "variants", "samples", "verdicts", "phases"] {
            assert_eq!(count(h.conn(), table), 0, "{table}");
        }
    }
}

/// A database made by the first released schema opens in this abprof with its rows intact.
#[cfg(test)]
mod v1_tests {
    use super::super::migrate::migrate_to;
    use super::super::schema::LATEST;
    use super::*;

    fn pragma_i64(conn: &Connection, name: &str) -> i64 {
        conn.pragma_query_value(None, name, |r| r.get(0)).unwrap()
    }

    #[test]
    fn a_version_1_database_opens_in_a_later_abprof() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("v1.db");
        {
            // What abprof with schema version 1 wrote: its migration, then a study in its tables.
            let mut conn = Connection::open(&path).unwrap();
            assert_eq!(migrate_to(&mut conn, 1).unwrap(), 1);
            conn.execute_batch(
                r#"INSERT INTO studies (id, identity, kind, folder, aa, started_at, started_unix, recorded_at, host,
                       model_sha256, output_tokens, prompt_tokens, server_args, pure_decode, ignore_eos, missing)
                   VALUES (1, 'x', 'ab', '/s', 0, '2026-11-30T10:00:00+00:00', 1796032800, 'now', 'vm', 'aa', 8, 300,
                       '["-c","4096"]', 0, 1, 0);
                   INSERT INTO variants (id, study_id, position, label, spec, binary_sha256, model_sha256, own_args,
                       argv, env, planned, accepted)
                   VALUES (1, 1, 0, 'f16', 'f16=/b', 'bb', 'aa', '[]', '[]', '[]', 2, 2);
                   INSERT INTO samples (variant_id, idx, dir, accepted, decode_tps) VALUES (1, 0, 's/1', 1, 10.5);
                   INSERT INTO samples (variant_id, idx, dir, accepted, decode_tps) VALUES (1, 1, 's/2', 1, 11.5);
                   INSERT INTO verdicts (variant_id, metric, median, change_pct, ci_lo_pct, ci_hi_pct, confidence,
                       resamples, seed, verdict)
                   VALUES (1, 'server-decode-tps', 11.0, -0.5, -1.5, 1.2, 0.95, 10000, 42, 'no clear difference');"#,
            )
            .unwrap();
            assert_eq!(pragma_i64(&conn, "user_version"), 1);
        }
        let mut store = SqliteStore::open(&path).unwrap();
        assert_eq!(pragma_i64(store.conn(), "user_version"), LATEST as i64);
        let stored = store.studies().unwrap();
        let rows = super::super::query::rows(&stored);
        assert_eq!((rows.len(), rows[0].label.as_str(), rows[0].output_tokens), (1, "f16", Some(8)));
        let decode: Vec<_> = stored[0].record.variants[0].samples.iter().filter_map(|s| s.decode_tps).collect();
        assert_eq!(decode, [10.5, 11.5]);
        // The bootstrap's resamples and seed of that release are passed over; its interval reads.
        let verdict = &stored[0].record.variants[0].verdicts[0];
        let ci = crate::summary::stats::ChangeCi::bounds(-1.5, 1.2, 0.95);
        assert_eq!((verdict.change_pct, verdict.ci), (Some(-0.5), Some(ci)));
        let conn = store.conn();
        // The later version's tables are there for the old rows.
        conn.execute("INSERT INTO phases (variant_id, phase, samples) VALUES (1, 'decode', 2)", []).unwrap();
        conn.execute("INSERT INTO sample_energy (sample_id, metric, value) VALUES (1, 'decode-j-per-token', 1.1)", [])
            .unwrap();
    }
}
