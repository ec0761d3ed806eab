//! Opening a history database: create it, recognize it as abprof's, and bring its schema up to
//! [`LATEST`] one migration at a time, each in its own transaction (PRAGMA user_version counts
//! the migrations applied).
use super::error::HistoryError;
use super::schema::{APPLICATION_ID, LATEST, MIGRATIONS};
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
    migrate_to(&mut conn, LATEST).map_err(|e| e.at(&path.display().to_string()))?;
    write_ahead(&conn, path)?;
    Ok(conn)
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
///
/// Switching the journal to WAL takes the file's exclusive lock, and SQLite answers "database is
/// locked" at once, without its busy handler, while another process reads the new file (two
/// abprof runs opening a new history together): the switch is retried within the busy timeout.
/// Once switched, the mode is the file's and later opens find it set.
fn write_ahead(conn: &Connection, path: &Path) -> Result<(), HistoryError> {
    let open_err = |e: rusqlite::Error| HistoryError::Open { path: path.into(), detail: e.to_string() };
    let deadline = std::time::Instant::now() + BUSY_TIMEOUT;
    loop {
        let mode: String = conn.query_row("PRAGMA journal_mode", [], |r| r.get(0)).map_err(open_err)?;
        if mode.eq_ignore_ascii_case("wal") {
            break;
        }
        match conn.pragma_update(None, "journal_mode", "WAL") {
            Ok(()) => break,
            Err(e) if is_busy(&e) && std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            Err(e) => return Err(open_err(e)),
        }
    }
    conn.pragma_update(None, "synchronous", "NORMAL").map_err(open_err)
}

fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(e.sqlite_error_code(), Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked))
}

/// Applies the migrations after the database's version up to `target`. A database of a newer
/// abprof, or another program's SQLite file, is refused untouched.
pub(crate) fn migrate_to(conn: &mut Connection, target: u32) -> Result<u32, HistoryError> {
    // One read transaction, so the three reads see one state of the file: read apart, they could
    // straddle another process's first migration and find its schema but not yet its
    // application_id (a new history refused as foreign).
    let (version, app, tables) = {
        let read = conn.transaction()?;
        let tables: i64 = read
            .query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))
            .map_err(|e| HistoryError::NotHistory(e.to_string()))?;
        let version = pragma_i64(&read, "user_version").map_err(|e| HistoryError::NotHistory(e.to_string()))?;
        (version, pragma_i64(&read, "application_id")?, tables)
    };
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

    /// Two abprof runs that start at once both open a history that does not exist yet (a CI
    /// run of tests/faults.rs refused one as "not an abprof history database": its checks read
    /// the file before and after the other's first migration committed).
    #[test]
    fn processes_opening_a_new_history_at_once_all_get_it() {
        for round in 0..40 {
            let d = tempfile::tempdir().unwrap();
            let path = d.path().join("history.db");
            let opened: Vec<_> = (0..4)
                .map(|_| {
                    let path = path.clone();
                    std::thread::spawn(move || open(&path).map(drop).map_err(|e| e.to_string()))
                })
                .collect::<Vec<_>>()
                .into_iter()
                .map(|t| t.join().unwrap())
                .collect();
            assert!(opened.iter().all(Result::is_ok), "round {round}: {opened:?}");
        }
    }
}
