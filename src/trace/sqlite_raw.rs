//! One prepared statement read through SQLite's C API, an integer column at a time.
//!
//! The kernel-table scans read millions of rows of three to five integers. rusqlite's row access
//! checks the column count, builds a typed value and matches on it for every column of every row:
//! about a fifth of the CPU of `attribute --busy` on the 2.1 M-dispatch rocpd bench (perf, see
//! BENCHMARKS.md). Here a column costs one type check and one read.
use rusqlite::{ffi, Connection};
use std::ffi::{c_int, CStr, CString};

/// A statement prepared on `conn`, finalized when dropped.
pub(crate) struct RawStatement<'c> {
    conn: &'c Connection,
    stmt: *mut ffi::sqlite3_stmt,
}

impl<'c> RawStatement<'c> {
    pub(crate) fn prepare(conn: &'c Connection, sql: &str) -> rusqlite::Result<RawStatement<'c>> {
        let text = CString::new(sql)?;
        let mut stmt = std::ptr::null_mut();
        // SAFETY: the handle is `conn`'s, alive for 'c; `text` is NUL-terminated and outlives the call.
        let rc = unsafe { ffi::sqlite3_prepare_v2(conn.handle(), text.as_ptr(), -1, &mut stmt, std::ptr::null_mut()) };
        if rc != ffi::SQLITE_OK {
            return Err(error(conn, rc));
        }
        if stmt.is_null() {
            // SQLite prepares nothing from text that holds no statement.
            return Err(rusqlite::Error::InvalidQuery);
        }
        Ok(RawStatement { conn, stmt })
    }

    /// Binds `value` to parameter `index` (from 1).
    pub(crate) fn bind(&mut self, index: c_int, value: i64) -> rusqlite::Result<()> {
        // SAFETY: `stmt` is a live prepared statement; SQLite checks the index itself.
        match unsafe { ffi::sqlite3_bind_int64(self.stmt, index, value) } {
            ffi::SQLITE_OK => Ok(()),
            rc => Err(error(self.conn, rc)),
        }
    }

    /// The next row: true while there is one.
    #[inline]
    pub(crate) fn step(&mut self) -> rusqlite::Result<bool> {
        // SAFETY: `stmt` is a live prepared statement used by this thread alone.
        match unsafe { ffi::sqlite3_step(self.stmt) } {
            ffi::SQLITE_ROW => Ok(true),
            ffi::SQLITE_DONE => Ok(false),
            rc => Err(error(self.conn, rc)),
        }
    }

    /// Column `col` (from 0) of the current row when it holds an integer; `None` for NULL, any
    /// other type, or a column the statement does not have.
    #[inline]
    pub(crate) fn int(&self, col: c_int) -> Option<i64> {
        // SAFETY: `stmt` is live; SQLite answers a NULL value for a column index out of range or
        // when no row is current, so no call here reads past what it holds. The value is read
        // before the next step, which is when SQLite may reuse it. One sqlite3_column_value and
        // two value reads cost less than sqlite3_column_type + sqlite3_column_int64, which each
        // look the column up again.
        unsafe {
            let v = ffi::sqlite3_column_value(self.stmt, col);
            (ffi::sqlite3_value_type(v) == ffi::SQLITE_INTEGER).then(|| ffi::sqlite3_value_int64(v))
        }
    }
}

impl Drop for RawStatement<'_> {
    fn drop(&mut self) {
        // SAFETY: `stmt` was prepared by `prepare` and is finalized exactly once, here.
        unsafe { ffi::sqlite3_finalize(self.stmt) };
    }
}

/// The error of a failed call, with the connection's message.
fn error(conn: &Connection, rc: c_int) -> rusqlite::Error {
    // SAFETY: the handle is live; sqlite3_errmsg returns a NUL-terminated string SQLite owns,
    // copied before any other call on the connection.
    let msg = unsafe { CStr::from_ptr(ffi::sqlite3_errmsg(conn.handle())) }.to_string_lossy().into_owned();
    rusqlite::Error::SqliteFailure(ffi::Error::new(rc), Some(msg))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_come_back_and_everything_else_is_none() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(
            "CREATE TABLE t (a, b); INSERT INTO t VALUES (1, NULL), (-7, 'x'), (9223372036854775807, 2.5);",
        )
        .unwrap();
        let mut s = RawStatement::prepare(&conn, "SELECT a, b FROM t WHERE rowid >= ?1 ORDER BY rowid").unwrap();
        s.bind(1, 1).unwrap();
        let mut rows = Vec::new();
        while s.step().unwrap() {
            rows.push((s.int(0), s.int(1), s.int(2)));
        }
        assert_eq!(rows, [(Some(1), None, None), (Some(-7), None, None), (Some(i64::MAX), None, None)]);
    }

    #[test]
    fn errors_carry_sqlite_s_message() {
        let conn = Connection::open_in_memory().unwrap();
        let e = RawStatement::prepare(&conn, "SELECT nope FROM nowhere").err().unwrap();
        assert!(e.to_string().contains("no such table: nowhere"), "{e}");
        assert!(RawStatement::prepare(&conn, "  ").is_err());
    }
}
