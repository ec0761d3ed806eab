//! Opening a history database: create it, recognize it as abprof's, and bring its schema up to
//! [`LATEST`] one migration at a time, each in its own transaction (PRAGMA user_version counts
//! the migrations applied).
use super::schema::{APPLICATION_ID, LATEST, MIGRATIONS};
use super::HistoryError;
use rusqlite::Connection;
use std::path::Path;
use std::time::Duration;

/// Another abprof writing its study at the same moment holds the write lock for milliseconds.
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

fn pragma_i64(conn: &Connection, name: &str) -> rusqlite::Result<i64> {
    conn.pragma_query_value(None, name, |r| r.get(0))
}

/// Opens (creating it and its folder if needed) the history at `path`, migrated to [`LATEST`].
pub(crate) fn open(path: &Path) -> Result<Connection, HistoryError> {
    if let Some(dir) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| HistoryError::Open { path: path.into(), detail: e.to_string() })?;
    }
    let mut conn = connect(path)?;
    migrate_to(&mut conn, LATEST).map_err(|e| e.at(path))?;
    write_ahead(&conn, path)?;
    Ok(conn)
}

/// Opens an existing history (an earlier abprof's is migrated first) without creating one:
/// `None` when there is no file yet.
pub(crate) fn open_existing(path: &Path) -> Result<Option<Connection>, HistoryError> {
    path.exists().then(|| open(path)).transpose()
}

fn connect(path: &Path) -> Result<Connection, HistoryError> {
    let open_err = |e: rusqlite::Error| HistoryError::Open { path: path.into(), detail: e.to_string() };
    let conn = Connection::open(path).map_err(open_err)?;
    conn.busy_timeout(BUSY_TIMEOUT).map_err(open_err)?;
    conn.pragma_update(None, "foreign_keys", true).map_err(open_err)?;
    Ok(conn)
}

/// A write-ahead log: a study's transaction is one append without a sync of its own (0.5 ms
/// instead of 20–40 ms here), readers never wait for it, and a crash or a kill still leaves the
/// whole study or none of it (a power cut may lose the last one written, never half of it).
/// Set only on a database known to be abprof's.
fn write_ahead(conn: &Connection, path: &Path) -> Result<(), HistoryError> {
    let open_err = |e: rusqlite::Error| HistoryError::Open { path: path.into(), detail: e.to_string() };
    conn.pragma_update(None, "journal_mode", "WAL").map_err(open_err)?;
    conn.pragma_update(None, "synchronous", "NORMAL").map_err(open_err)
}

/// Applies the migrations after the database's version up to `target`. A database of a newer
/// abprof, or another program's SQLite file, is refused untouched.
pub(crate) fn migrate_to(conn: &mut Connection, target: u32) -> Result<u32, HistoryError> {
    let version = pragma_i64(conn, "user_version").map_err(|e| HistoryError::NotHistory(e.to_string()))?;
    let app = pragma_i64(conn, "application_id")?;
    let tables: i64 = conn
        .query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))
        .map_err(|e| HistoryError::NotHistory(e.to_string()))?;
    if app != APPLICATION_ID as i64 && (tables > 0 || version > 0) {
        return Err(HistoryError::NotHistory(format!("application_id {app:#x}, {tables} schema objects")));
    }
    let version = version as u32;
    if version > LATEST {
        return Err(HistoryError::Newer { version, latest: LATEST });
    }
    for (i, step) in MIGRATIONS.iter().enumerate().take(target as usize).skip(version as usize) {
        // Immediate: the write lock first, then the version read again, so two processes that
        // open a new database at once run each step once (the second finds it done).
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        if pragma_i64(&tx, "user_version")? > i as i64 {
            continue;
        }
        tx.execute_batch(step)?;
        tx.pragma_update(None, "application_id", APPLICATION_ID)?;
        tx.pragma_update(None, "user_version", i as u32 + 1)?;
        tx.commit()?;
    }
    Ok(version.max(target))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_database_gets_every_migration_and_reopens_unchanged() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("deep/er/history.db");
        let conn = open(&path).unwrap();
        assert_eq!(pragma_i64(&conn, "user_version").unwrap(), LATEST as i64);
        drop(conn);
        let conn = open(&path).unwrap();
        assert_eq!(pragma_i64(&conn, "application_id").unwrap(), APPLICATION_ID as i64);
    }

    #[test]
    fn a_newer_database_and_a_foreign_one_are_refused_untouched() {
        let d = tempfile::tempdir().unwrap();
        let newer = d.path().join("newer.db");
        drop(open(&newer).unwrap());
        Connection::open(&newer).unwrap().pragma_update(None, "user_version", LATEST + 1).unwrap();
        let e = open(&newer).unwrap_err().to_string();
        assert!(e.contains("newer abprof") && e.contains(&format!("version {}", LATEST + 1)), "{e}");

        let foreign = d.path().join("foreign.db");
        Connection::open(&foreign).unwrap().execute_batch("CREATE TABLE t (x); INSERT INTO t VALUES (1);").unwrap();
        let e = open(&foreign).unwrap_err().to_string();
        assert!(e.contains("not an abprof history"), "{e}");
        let still: i64 = Connection::open(&foreign).unwrap().query_row("SELECT x FROM t", [], |r| r.get(0)).unwrap();
        assert_eq!(still, 1);

        let text = d.path().join("notes.txt");
        std::fs::write(&text, "plain text, not SQLite, long enough to have a header page maybe").unwrap();
        assert!(open(&text).unwrap_err().to_string().contains("not an abprof history"));
    }
}

/// A database made by the first released schema opens in this abprof with its rows intact.
#[cfg(test)]
mod v1_tests {
    use super::*;

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
                   INSERT INTO samples (variant_id, idx, dir, accepted, decode_tps) VALUES (1, 1, 's/2', 1, 11.5);"#,
            )
            .unwrap();
            assert_eq!(pragma_i64(&conn, "user_version").unwrap(), 1);
        }
        let conn = open(&path).unwrap();
        assert_eq!(pragma_i64(&conn, "user_version").unwrap(), LATEST as i64);
        let rows = super::super::query::rows(&conn).unwrap();
        assert_eq!((rows.len(), rows[0].label.as_str(), rows[0].output_tokens), (1, "f16", Some(8)));
        assert_eq!(super::super::query::accepted_values(&conn, 1, "decode_tps").unwrap(), [10.5, 11.5]);
        // The later version's tables are there for the old rows.
        conn.execute("INSERT INTO phases (variant_id, phase, samples) VALUES (1, 'decode', 2)", []).unwrap();
    }
}
