//! Fast aggregation of a kernel table shared by the rocpd and nsys readers, and how they (and
//! [`super::detect`]) open a database.
//!
//! A trace of a long decode run holds millions of dispatches. SQLite's own `GROUP BY` sorts
//! them; here the table's rowid range is split into one chunk per core, each scanned by its own
//! thread with its own read-only connection, and aggregated into an integer-keyed map in the
//! thread. Only the per-key totals ever sit in memory.
use std::collections::{HashMap, HashSet};
use std::path::Path;

use rusqlite::{Connection, OpenFlags};

use super::exclusive_sweep::{Stretch, HEAD_ROWS};
use super::kernels::{accumulate, Totals};
use super::phase::{Phase, PhaseWindows, BURST_GAP_NS, PHASES};
use super::source::{Dispatch, KernelKey};
use super::sqlite_raw::RawStatement;
use super::TraceError;

pub(crate) fn open_read_only(path: &Path) -> Result<Connection, TraceError> {
    Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX)
        .map_err(|e| TraceError::sqlite(path, e))
}

/// Names of all tables and views.
pub(crate) fn schema_names(path: &Path, conn: &Connection) -> Result<HashSet<String>, TraceError> {
    let mut stmt = conn
        .prepare("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")
        .map_err(|e| TraceError::sqlite(path, e))?;
    let names = stmt
        .query_map([], |r| r.get::<_, String>(0))
        .and_then(|rows| rows.collect::<Result<HashSet<_>, _>>())
        .map_err(|e| TraceError::sqlite(path, e))?;
    Ok(names)
}

/// Below this many rows one thread is faster than starting more.
const MIN_ROWS_PER_THREAD: i64 = 50_000;

pub(crate) fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// Where the rows are: `key`, `start`, `end` columns of `table` (quoted identifiers).
pub(crate) struct KernelTable {
    pub(crate) table: String,
    pub(crate) key: String,
    pub(crate) start: String,
    pub(crate) end: String,
    /// The dispatch's in-order stream.
    pub(crate) lane: Lane,
    /// A real table (rowid ranges work) rather than a view.
    pub(crate) is_table: bool,
    /// Whether rowid order is start order, found out once on first need.
    pub(crate) sorted: std::sync::OnceLock<bool>,
}

impl KernelTable {
    /// Rowid order is start order: then readers in start order stream by rowid without a sort.
    fn in_start_order(&self, path: &Path, conn: &rusqlite::Connection) -> Result<bool, TraceError> {
        if let Some(s) = self.sorted.get() {
            return Ok(*s);
        }
        let s = self.is_table && in_start_order(conn, self).map_err(|e| TraceError::sqlite(path, e))?;
        Ok(*self.sorted.get_or_init(|| s))
    }
}

/// A dispatch's lane (its in-order stream): the stream id, with the device id in the high bits
/// (stream ids repeat across devices); a missing column or NULL counts as 0.
#[derive(Debug, Clone, Default)]
pub(crate) struct Lane {
    /// Quoted column names, where the table has them.
    pub(crate) device: Option<String>,
    pub(crate) stream: Option<String>,
}

impl Lane {
    /// The lane from the columns a table has: the first of `streams` present, the first of
    /// `devices` present.
    pub(crate) fn of(cols: &[String], devices: &[&str], streams: &[&str]) -> Lane {
        let pick = |names: &[&str]| names.iter().find(|n| cols.iter().any(|c| c == *n)).map(|n| quote_ident(n));
        Lane { device: pick(devices), stream: pick(streams) }
    }

    /// The two columns as a select list (`NULL` for a missing one), read raw and combined by
    /// [`Lane::value`]: cheaper per row than SQLite combining them.
    fn columns(&self) -> String {
        format!("{}, {}", self.device.as_deref().unwrap_or("NULL"), self.stream.as_deref().unwrap_or("NULL"))
    }

    /// [`Lane::value`] as an SQL expression, for a `WHERE` or `GROUP BY`.
    fn expression(&self) -> String {
        let col = |c: &Option<String>| c.as_deref().map_or("0".to_string(), |c| format!("IFNULL({c}, 0)"));
        format!("(({} << 32) + {})", col(&self.device), col(&self.stream))
    }

    #[inline]
    fn value(device: Option<i64>, stream: Option<i64>) -> i64 {
        (device.unwrap_or(0) << 32).wrapping_add(stream.unwrap_or(0))
    }
}

pub(crate) type ByKey = HashMap<i64, [Totals; PHASES]>;

/// Busy ns and exclusive ns by key id, as [`super::exclusive_sweep::merge`] gives them.
pub(crate) type SweptById = (u64, HashMap<i64, f64>);

fn worker_count() -> i64 {
    std::thread::available_parallelism().map_or(1, |n| n.get()).min(32) as i64
}

pub(crate) fn aggregate_by_key(
    path: &Path,
    t: &KernelTable,
    windows: Option<&PhaseWindows>,
) -> Result<ByKey, TraceError> {
    Ok(scan_table(path, t, windows, None, None)?.0)
}

/// [`aggregate_by_key`] of the dispatches on `lanes` ([`Lane::value`]s) only.
pub(crate) fn aggregate_by_key_on_lanes(
    path: &Path,
    t: &KernelTable,
    windows: Option<&PhaseWindows>,
    lanes: &[i64],
) -> Result<ByKey, TraceError> {
    if lanes.is_empty() {
        return Ok(ByKey::new());
    }
    let list: Vec<String> = lanes.iter().map(i64::to_string).collect();
    let condition = format!("{} IN ({})", t.lane.expression(), list.join(", "));
    Ok(scan_table(path, t, windows, None, Some(&condition))?.0)
}

/// Kernel calls and time per lane ([`Lane::value`]) of the dispatches starting in `span`
/// `[lo, hi]` (all when `None`), lanes in ascending order. One `GROUP BY` pass: asked for only
/// where a trace's lanes have roles (a speculative server's draft context, §10.2).
pub(crate) fn lane_totals(
    path: &Path,
    t: &KernelTable,
    span: Option<(i64, i64)>,
) -> Result<Vec<(i64, Totals)>, TraceError> {
    let conn = open_read_only(path)?;
    // The rows the scans count: a NULL key or stamp is no dispatch anyone could attribute.
    let counted = format!("{} IS NOT NULL AND {} IS NOT NULL AND {} IS NOT NULL", t.key, t.start, t.end);
    let within = span.map_or(String::new(), |(lo, hi)| format!(" AND {} BETWEEN {lo} AND {hi}", t.start));
    let sql = format!(
        "SELECT {lane}, count(*), sum(MAX({end} - {start}, 0)) FROM {table} WHERE {counted}{within} GROUP BY 1 ORDER BY 1",
        lane = t.lane.expression(),
        end = t.end,
        start = t.start,
        table = t.table
    );
    let sql_err = |e| TraceError::sqlite(path, e);
    let mut stmt = conn.prepare(&sql).map_err(sql_err)?;
    let rows = stmt
        .query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?, r.get::<_, Option<i64>>(2)?)))
        .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
        .map_err(sql_err)?;
    Ok(rows
        .into_iter()
        .map(|(lane, calls, ns)| (lane, Totals { calls: calls as u64, ns: ns.unwrap_or(0) as u64 }))
        .collect())
}

/// [`aggregate_by_key`] and, in the same pass, the exclusive sweep of the dispatches starting in
/// `busy` ([`super::sweep`]): each thread sweeps its own rowid range as one stretch, and the
/// stretches are merged. `None` for the sweep when the rows are not in start order by rowid
/// (found out on the way, and kept for the table), or a merge gave up.
pub(crate) fn aggregate_and_sweep_by_key(
    path: &Path,
    t: &KernelTable,
    windows: Option<&PhaseWindows>,
    busy: (i64, i64),
) -> Result<(ByKey, Option<SweptById>), TraceError> {
    if !t.is_table || t.sorted.get() == Some(&false) {
        return Ok((aggregate_by_key(path, t, windows)?, None));
    }
    scan_table(path, t, windows, Some(busy), None)
}

/// What one thread's scan of one rowid range found.
struct RangeScan {
    totals: ByKey,
    /// With a sweep: the range's dispatches in `busy`, swept, while they came in start order.
    stretch: Option<Stretch<i64>>,
    in_start_order: bool,
    /// First and last start of the range (every row), for the order across ranges.
    first: Option<i64>,
    last: Option<i64>,
}

/// The rowid span of a table split into one range per thread (`None`: the table is empty).
fn rowid_ranges(path: &Path, conn: &Connection, t: &KernelTable) -> Result<Option<Vec<(i64, i64)>>, TraceError> {
    let sql_err = |e| TraceError::sqlite(path, e);
    // Two queries: SQLite answers a lone min() or max() of the rowid from the b-tree's edge,
    // but scans the whole table for both in one statement.
    let edge = |f: &str| -> Result<Option<i64>, TraceError> {
        conn.query_row(&format!("SELECT {f}(rowid) FROM {}", t.table), [], |r| r.get(0)).map_err(sql_err)
    };
    let (lo, hi) = (edge("min")?, edge("max")?);
    let (Some(lo), Some(hi)) = (lo, hi) else {
        return Ok(None);
    };
    let span = hi - lo + 1;
    let workers = worker_count().min((span / MIN_ROWS_PER_THREAD).max(1));
    let chunk = (span + workers - 1) / workers;
    Ok(Some((0..workers).map(|i| (lo + i * chunk, (lo + i * chunk + chunk - 1).min(hi))).collect()))
}

/// Runs `scan` on every range, one thread each (the caller's thread alone for one range), each
/// with its own read-only connection; results in range order.
fn in_parallel<T: Send>(
    path: &Path,
    ranges: &[(i64, i64)],
    scan: impl Fn(&Connection, (i64, i64)) -> rusqlite::Result<T> + Sync,
) -> Result<Vec<T>, TraceError> {
    let run = |range: (i64, i64)| -> Result<T, TraceError> {
        let conn = open_read_only(path)?;
        scan(&conn, range).map_err(|e| TraceError::sqlite(path, e))
    };
    if ranges.len() == 1 {
        return Ok(vec![run(ranges[0])?]);
    }
    std::thread::scope(|s| {
        let handles: Vec<_> = ranges.iter().map(|&r| s.spawn(move || run(r))).collect();
        handles.into_iter().map(|h| h.join().expect("a scan thread does not panic")).collect()
    })
}

/// `condition`, an SQL expression over the table's columns, keeps only the rows it holds for
/// (never given with `busy`: a sweep needs every row of its lanes).
fn scan_table(
    path: &Path,
    t: &KernelTable,
    windows: Option<&PhaseWindows>,
    busy: Option<(i64, i64)>,
    condition: Option<&str>,
) -> Result<(ByKey, Option<SweptById>), TraceError> {
    debug_assert!(busy.is_none() || condition.is_none());
    let columns = match busy {
        Some(_) => format!("{}, {}, {}, {}", t.key, t.start, t.end, t.lane.columns()),
        None => format!("{}, {}, {}", t.key, t.start, t.end),
    };
    let select = format!("SELECT {columns} FROM {}", t.table);
    let and = condition.map_or(String::new(), |c| format!(" AND ({c})"));
    let scans = if t.is_table {
        let conn = open_read_only(path)?;
        let Some(ranges) = rowid_ranges(path, &conn, t)? else {
            return Ok((ByKey::new(), busy.map(|_| (0, HashMap::new()))));
        };
        drop(conn);
        let ranged = format!("{select} WHERE rowid BETWEEN ?1 AND ?2{and} ORDER BY rowid");
        in_parallel(path, &ranges, |conn, range| scan(conn, &ranged, Some(range), windows, busy))?
    } else {
        let conn = open_read_only(path)?;
        let select = match condition {
            Some(c) => format!("{select} WHERE {c}"),
            None => select,
        };
        vec![scan(&conn, &select, None, windows, None).map_err(|e| TraceError::sqlite(path, e))?]
    };
    let mut merged = ByKey::new();
    let mut in_order = t.is_table && scans.iter().all(|s| s.in_start_order);
    let mut last_start = i64::MIN;
    let mut stretches = Vec::new();
    for r in scans {
        if let Some(first) = r.first {
            in_order &= first >= last_start;
            last_start = r.last.unwrap_or(first);
        }
        stretches.extend(r.stretch);
        for (key, phases) in r.totals {
            let acc = merged.entry(key).or_default();
            for (a, p) in acc.iter_mut().zip(phases) {
                a.merge(p);
            }
        }
    }
    if busy.is_none() {
        return Ok((merged, None));
    }
    let _ = t.sorted.set(in_order);
    Ok((merged, if in_order { super::exclusive_sweep::merge(stretches) } else { None }))
}

/// Per-key totals of one scan: small non-negative keys (rocpd kernel ids, nsys string ids are
/// dense and small) index a vector, which is cheaper per row than hashing; others go to a map.
struct KeyTotals {
    dense: Vec<[Totals; PHASES]>,
    sparse: ByKey,
}

const DENSE_KEYS: i64 = 1 << 16;

impl KeyTotals {
    #[inline]
    fn add(&mut self, key: i64, start: i64, end: i64, windows: Option<&PhaseWindows>) {
        if (0..DENSE_KEYS).contains(&key) {
            let i = key as usize;
            if i >= self.dense.len() {
                self.dense.resize(i + 1, Default::default());
            }
            let phase = windows.map_or(Phase::Decode, |w| w.classify(start));
            self.dense[i][phase as usize].add(start, end);
        } else {
            accumulate(&mut self.sparse, key, start, end, windows);
        }
    }

    fn into_map(self) -> ByKey {
        let mut map = self.sparse;
        for (i, phases) in self.dense.into_iter().enumerate() {
            if phases.iter().any(|t| t.calls > 0) {
                map.insert(i as i64, phases);
            }
        }
        map
    }
}

fn scan(
    conn: &rusqlite::Connection,
    sql: &str,
    range: Option<(i64, i64)>,
    windows: Option<&PhaseWindows>,
    busy: Option<(i64, i64)>,
) -> rusqlite::Result<RangeScan> {
    let mut rows = RawStatement::prepare(conn, sql)?;
    if let Some((a, b)) = range {
        rows.bind(1, a)?;
        rows.bind(2, b)?;
    }
    let mut totals = KeyTotals { dense: Vec::new(), sparse: ByKey::new() };
    let mut stretch = busy.map(|_| Stretch::new(HEAD_ROWS));
    let (lo, hi) = busy.unwrap_or((i64::MAX, i64::MIN));
    let (mut in_start_order, mut first, mut last) = (true, None, i64::MIN);
    while rows.step()? {
        // Rows with a NULL key or timestamp are not dispatches anyone could attribute.
        let (Some(key), Some(start), Some(end)) = (rows.int(0), rows.int(1), rows.int(2)) else {
            continue;
        };
        totals.add(key, start, end, windows);
        if busy.is_none() {
            continue;
        }
        first.get_or_insert(start);
        if start < last {
            // Out of start order: the sweep needs an ORDER BY after all; the totals do not.
            in_start_order = false;
            stretch = None;
        }
        last = last.max(start);
        if let Some(s) = stretch.as_mut().filter(|_| (lo..=hi).contains(&start)) {
            s.push(start, end, Lane::value(rows.int(3), rows.int(4)), key);
        }
    }
    let last = (last != i64::MIN).then_some(last);
    Ok(RangeScan { totals: totals.into_map(), stretch, in_start_order, first, last })
}

/// `(start, end)` of the last burst of rows matching `condition` (rows in start order, a new burst
/// after an idle gap of [`BURST_GAP_NS`] or more, as in the step-gap search), or `None` when no
/// row matches. A table in start order by rowid (found out in the same pass, and kept) is read in
/// one rowid range per thread, each finding its own bursts, joined in order after; otherwise one
/// pass sorted by start.
pub(crate) fn last_burst_where(
    path: &Path,
    t: &KernelTable,
    condition: &str,
) -> Result<Option<(i64, i64)>, TraceError> {
    if t.is_table && t.sorted.get() != Some(&false) {
        if let Some(bursts) = bursts_in_parallel(path, t, condition)? {
            return Ok(bursts.last().copied());
        }
    }
    let conn = open_read_only(path)?;
    let order = if t.in_start_order(path, &conn)? { "rowid".to_string() } else { t.start.clone() };
    let sql = format!("SELECT {}, {} FROM {} WHERE {condition} ORDER BY {order}", t.start, t.end, t.table);
    let sql_err = |e| TraceError::sqlite(path, e);
    let mut rows = RawStatement::prepare(&conn, &sql).map_err(sql_err)?;
    let mut bursts = Bursts::default();
    while rows.step().map_err(sql_err)? {
        if let (Some(s), Some(e)) = (rows.int(0), rows.int(1)) {
            bursts.add(s, e);
        }
    }
    Ok(bursts.spans.last().copied())
}

/// Rows fed in start order, grouped into bursts: a new one after an idle gap of
/// [`BURST_GAP_NS`] or more since the current burst's latest end.
#[derive(Debug, Default)]
struct Bursts {
    spans: Vec<(i64, i64)>,
}

impl Bursts {
    #[inline]
    fn add(&mut self, start: i64, end: i64) {
        match self.spans.last_mut() {
            Some((_, b1)) if start - *b1 < BURST_GAP_NS => *b1 = (*b1).max(end),
            _ => self.spans.push((start, end)),
        }
    }
}

/// Every burst of the rows matching `condition`, each thread finding those of its own rowid
/// range; `None` (and the table marked) when the rows are not in start order by rowid. Joining is
/// exact: a range's bursts, fed in order as if they were rows, join the ones before exactly where
/// their rows would have (a row that continued a burst within its range also continues it once
/// the burst's latest end can only be later).
fn bursts_in_parallel(path: &Path, t: &KernelTable, condition: &str) -> Result<Option<Vec<(i64, i64)>>, TraceError> {
    let conn = open_read_only(path)?;
    let Some(ranges) = rowid_ranges(path, &conn, t)? else {
        return Ok(Some(Vec::new()));
    };
    drop(conn);
    let sql = format!(
        "SELECT {}, {}, CASE WHEN {condition} THEN 1 ELSE 0 END FROM {} WHERE rowid BETWEEN ?1 AND ?2 ORDER BY rowid",
        t.start, t.end, t.table
    );
    let scans = in_parallel(path, &ranges, |conn, (a, b)| {
        let mut rows = RawStatement::prepare(conn, &sql)?;
        rows.bind(1, a)?;
        rows.bind(2, b)?;
        let (mut bursts, mut first, mut last, mut sorted) = (Bursts::default(), None, i64::MIN, true);
        while rows.step()? {
            let (Some(s), Some(e)) = (rows.int(0), rows.int(1)) else {
                continue;
            };
            first.get_or_insert(s);
            sorted &= s >= last;
            last = last.max(s);
            if rows.int(2) == Some(1) {
                bursts.add(s, e);
            }
        }
        Ok((bursts, first, last, sorted))
    })?;
    let (mut joined, mut last_start, mut in_order) = (Bursts::default(), i64::MIN, true);
    for (bursts, first, last, sorted) in scans {
        in_order &= sorted && first.is_none_or(|f| f >= last_start);
        last_start = last_start.max(last);
        for (s, e) in bursts.spans {
            joined.add(s, e);
        }
    }
    let _ = t.sorted.set(in_order);
    Ok(in_order.then_some(joined.spans))
}

/// Whether the table's rows, in rowid order, are already in start order (tracers write them
/// as kernels complete, and the nsys exports and generated rocpd databases measured here are):
/// one pass over the start column, stopping at the first row that goes back in time.
fn in_start_order(conn: &rusqlite::Connection, t: &KernelTable) -> rusqlite::Result<bool> {
    let mut rows = RawStatement::prepare(conn, &format!("SELECT {} FROM {} ORDER BY rowid", t.start, t.table))?;
    let mut last = i64::MIN;
    while rows.step()? {
        if let Some(s) = rows.int(0) {
            if s < last {
                return Ok(false);
            }
            last = s;
        }
    }
    Ok(true)
}

/// Streams every row of `tables` in start order, keyed by the table's position in `tables` and
/// its key column. A single table already in start order is read in rowid order; otherwise
/// SQLite sorts, spilling to temporary files rather than holding the rows (on a 2.1 M-row table
/// the sort is most of the time).
pub(crate) fn for_each_by_start(
    path: &Path,
    tables: &[&KernelTable],
    f: &mut dyn FnMut(Dispatch),
) -> Result<(), TraceError> {
    let conn = open_read_only(path)?;
    let sql_err = |e| TraceError::sqlite(path, e);
    let order = match tables {
        [t] if t.in_start_order(path, &conn)? => "rowid",
        _ => "s",
    };
    let union = tables
        .iter()
        .enumerate()
        .map(|(i, t)| {
            format!(
                "SELECT {} AS s, {} AS e, {} AS k, {i} AS g, {} FROM {}",
                t.start,
                t.end,
                t.key,
                t.lane.columns(),
                t.table
            )
        })
        .collect::<Vec<_>>()
        .join(" UNION ALL ");
    let mut rows = RawStatement::prepare(&conn, &format!("{union} ORDER BY {order}")).map_err(sql_err)?;
    while rows.step().map_err(sql_err)? {
        if let (Some(start), Some(end), Some(id), Some(set)) = (rows.int(0), rows.int(1), rows.int(2), rows.int(3)) {
            let lane = Lane::value(rows.int(4), rows.int(5));
            f(Dispatch { start, end, key: KernelKey { set: set as u32, id }, lane });
        }
    }
    Ok(())
}

/// Column names of a table or view.
pub(crate) fn columns(path: &Path, conn: &rusqlite::Connection, table: &str) -> Result<Vec<String>, TraceError> {
    let mut stmt = conn
        .prepare(&format!("SELECT name FROM pragma_table_info({})", quote_literal(table)))
        .map_err(|e| TraceError::sqlite(path, e))?;
    let cols = stmt
        .query_map([], |r| r.get::<_, String>(0))
        .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
        .map_err(|e| TraceError::sqlite(path, e))?;
    Ok(cols)
}

fn quote_literal(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table_with(starts: &[i64]) -> (tempfile::TempDir, std::path::PathBuf, KernelTable) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.db");
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch("CREATE TABLE k (id INTEGER, start INTEGER, \"end\" INTEGER, stream INTEGER)").unwrap();
        for (i, s) in starts.iter().enumerate() {
            conn.execute("INSERT INTO k VALUES (?1, ?2, ?3, 7)", rusqlite::params![i as i64, s, s + 5]).unwrap();
        }
        let cols: Vec<String> = ["id", "start", "end", "stream"].iter().map(|s| s.to_string()).collect();
        let t = KernelTable {
            table: "k".into(),
            key: "id".into(),
            start: "start".into(),
            end: "\"end\"".into(),
            lane: Lane::of(&cols, &[], &["stream"]),
            is_table: true,
            sorted: Default::default(),
        };
        (dir, path, t)
    }

    fn starts_seen(path: &Path, t: &KernelTable) -> Vec<(i64, i64)> {
        let mut seen = Vec::new();
        for_each_by_start(path, &[t], &mut |d| seen.push((d.start, d.lane))).unwrap();
        seen
    }

    /// Bursts found by two threads, one crossing the boundary of their ranges, join as one pass
    /// in start order finds them; out of rowid order the one sorted pass answers the same.
    #[test]
    fn bursts_found_in_parallel_join_exactly() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("b.db");
        let mut conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch("CREATE TABLE k (id INTEGER, start INTEGER, \"end\" INTEGER, g INTEGER)").unwrap();
        let n: i64 = 120_000;
        let tx = conn.transaction().unwrap();
        for i in 0..n {
            // Matching rows 5 µs apart, interrupted once by 30,000 others (150 ms: a new burst).
            let g = i64::from(!(20_000..50_000).contains(&i));
            tx.execute("INSERT INTO k VALUES (1, ?1, ?2, ?3)", [i * 5_000, i * 5_000 + 5, g]).unwrap();
        }
        tx.commit().unwrap();
        let t = |sorted: Option<bool>| KernelTable {
            table: "k".into(),
            key: "id".into(),
            start: "start".into(),
            end: "\"end\"".into(),
            lane: Lane::default(),
            is_table: true,
            sorted: sorted.map_or_else(Default::default, std::sync::OnceLock::from),
        };
        let want = Some((50_000 * 5_000, (n - 1) * 5_000 + 5));
        let parallel = t(None);
        assert_eq!(last_burst_where(&path, &parallel, "g = 1").unwrap(), want);
        assert_eq!(parallel.sorted.get(), Some(&true));
        assert_eq!(last_burst_where(&path, &t(Some(false)), "g = 1").unwrap(), want);
        assert_eq!(bursts_in_parallel(&path, &t(None), "g = 1").unwrap().unwrap().len(), 2);
    }

    #[test]
    fn rows_come_in_start_order_whether_or_not_the_table_is_sorted() {
        let (_d, path, t) = table_with(&[10, 20, 20, 30]);
        let conn = open_read_only(&path).unwrap();
        assert!(in_start_order(&conn, &t).unwrap());
        assert_eq!(starts_seen(&path, &t), [(10, 7), (20, 7), (20, 7), (30, 7)]);
        let (_d, path, t) = table_with(&[30, 10, 20]);
        let conn = open_read_only(&path).unwrap();
        assert!(!in_start_order(&conn, &t).unwrap());
        assert_eq!(starts_seen(&path, &t), [(10, 7), (20, 7), (30, 7)]);
    }
}
