//! rocprofv3's rocpd SQLite database (ROCm ≥ 7.0 default output).
//!
//! Tables carry the writing process's UUID as a suffix (`rocpd_kernel_dispatch_0198…`); the
//! unsuffixed names are views over them. Reading the base table directly lets the scan split it
//! by rowid; a database merged from several processes has one suffixed table set per UUID, and
//! kernel ids are only unique within a set. Timestamps are ns in CLOCK_BOOTTIME.
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use rusqlite::Connection;

use super::kernels::{Aggregate, Totals};
use super::phase::{PhaseWindows, PHASES};
use super::source::{Dispatch, KernelKey, KernelSource, Swept};
use super::sqlite_scan::{self, quote_ident, KernelTable};
use super::TraceError;

const DISPATCH: &str = "rocpd_kernel_dispatch";
const SYMBOL: &str = "rocpd_info_kernel_symbol";

/// The dispatch and kernel-symbol tables of one writer (one UUID).
struct TableSet {
    dispatch: KernelTable,
    symbols: String,
    symbol_name_columns: Vec<&'static str>,
    has_graph_node: bool,
}

pub(crate) struct RocpdTrace {
    path: PathBuf,
    sets: Vec<TableSet>,
    schema_version: Option<String>,
}

fn object_type(path: &Path, conn: &Connection, name: &str) -> Result<Option<String>, TraceError> {
    let mut stmt = conn
        .prepare_cached("SELECT type FROM sqlite_master WHERE name = ?1")
        .map_err(|e| TraceError::sqlite(path, e))?;
    let mut rows = stmt.query([name]).map_err(|e| TraceError::sqlite(path, e))?;
    Ok(rows.next().map_err(|e| TraceError::sqlite(path, e))?.map(|r| r.get_unwrap(0)))
}

/// How a dispatch table of `dispatch` gives its start and end (CLOCK_BOOTTIME ns), as SQL
/// expressions over its rows: its own `start` and `end` columns (schema 3.x and 4.1.0), or, in the
/// 4.0 design (ROCm/rocm-systems#4762, #5347), `start_id` and `end_id` into the writer's
/// `rocpd_timestamp` table. None when it has neither.
fn timestamps(dispatch: &str, names: &HashSet<String>, has: &dyn Fn(&str) -> bool) -> Option<(String, String)> {
    if has("start") && has("end") {
        return Some(("start".into(), "\"end\"".into()));
    }
    let stamps = match dispatch.strip_prefix(DISPATCH) {
        Some(suffix) => format!("rocpd_timestamp{suffix}"),
        None => "rocpd_timestamp".into(),
    };
    (has("start_id") && has("end_id") && names.contains(&stamps)).then(|| {
        let of = |id: &str| format!("(SELECT value FROM {} WHERE id = {id})", quote_ident(&stamps));
        (of("start_id"), of("end_id"))
    })
}

impl RocpdTrace {
    pub(crate) fn open(path: &Path, conn: &Connection, names: &HashSet<String>) -> Result<RocpdTrace, TraceError> {
        let mut suffixes: Vec<&str> = names.iter().filter_map(|n| n.strip_prefix("rocpd_kernel_dispatch_")).collect();
        suffixes.sort_unstable();
        let mut pairs: Vec<(String, String)> = Vec::new();
        for s in suffixes {
            let dispatch = format!("{DISPATCH}_{s}");
            if object_type(path, conn, &dispatch)?.as_deref() != Some("table") {
                continue;
            }
            let own = format!("{SYMBOL}_{s}");
            let symbols = if names.contains(&own) { own } else { SYMBOL.to_string() };
            pairs.push((dispatch, symbols));
        }
        if pairs.is_empty() {
            pairs.push((DISPATCH.to_string(), SYMBOL.to_string()));
        }
        let mut sets = Vec::new();
        for (dispatch, symbols) in pairs {
            if !names.contains(&symbols) {
                return Err(TraceError::MissingTable { path: path.into(), table: symbols });
            }
            let cols = sqlite_scan::columns(path, conn, &dispatch)?;
            let has = |c: &str| cols.iter().any(|x| x == c);
            if !has("kernel_id") {
                return Err(TraceError::MissingColumn {
                    path: path.into(),
                    table: dispatch,
                    column: "kernel_id".into(),
                });
            }
            let (start, end) = match timestamps(&dispatch, names, &has) {
                Some(pair) => pair,
                None => {
                    let column = if has("start_id") { "end_id".into() } else { "start".into() };
                    return Err(TraceError::MissingColumn { path: path.into(), table: dispatch, column });
                }
            };
            let sym_cols = sqlite_scan::columns(path, conn, &symbols)?;
            let symbol_name_columns: Vec<&'static str> =
                ["display_name", "kernel_name"].into_iter().filter(|c| sym_cols.iter().any(|s| s == c)).collect();
            if symbol_name_columns.is_empty() || !sym_cols.iter().any(|c| c == "id") {
                return Err(TraceError::MissingColumn {
                    path: path.into(),
                    table: symbols,
                    column: "display_name".into(),
                });
            }
            let is_table = object_type(path, conn, &dispatch)?.as_deref() == Some("table");
            sets.push(TableSet {
                dispatch: KernelTable {
                    table: quote_ident(&dispatch),
                    key: "kernel_id".into(),
                    start,
                    end,
                    // rocpd 4.x drafts fold agent, queue and stream into track_id.
                    lane: sqlite_scan::Lane::of(&cols, &["agent_id"], &["stream_id", "queue_id", "track_id"]),
                    is_table,
                    sorted: Default::default(),
                },
                symbols: quote_ident(&symbols),
                symbol_name_columns,
                has_graph_node: cols.iter().any(|c| c == "graph_node_id"),
            });
        }
        let schema_version = if names.contains("rocpd_metadata") {
            conn.query_row("SELECT value FROM rocpd_metadata WHERE tag = 'schema_version'", [], |r| r.get(0)).ok()
        } else {
            None
        };
        Ok(RocpdTrace { path: path.into(), sets, schema_version })
    }

    /// kernel id → the name to report: the formatted (demangled) display name, else the symbol.
    fn symbol_names(&self, set: &TableSet) -> Result<HashMap<i64, String>, TraceError> {
        let conn = sqlite_scan::open_read_only(&self.path)?;
        let sql = format!("SELECT id, {} FROM {}", set.symbol_name_columns.join(", "), set.symbols);
        let mut stmt = conn.prepare(&sql).map_err(|e| TraceError::sqlite(&self.path, e))?;
        let n = set.symbol_name_columns.len();
        let rows = stmt
            .query_map([], |r| {
                let id: i64 = r.get(0)?;
                let mut name = None;
                for i in 1..=n {
                    if let Some(s) = r.get::<_, Option<String>>(i)?.filter(|s| !s.trim().is_empty()) {
                        name = Some(s);
                        break;
                    }
                }
                Ok((id, name.unwrap_or_else(|| format!("<kernel_id {id} without a name>"))))
            })
            .and_then(|rows| rows.collect::<Result<HashMap<_, _>, _>>())
            .map_err(|e| TraceError::sqlite(&self.path, e))?;
        Ok(rows)
    }
}

impl KernelSource for RocpdTrace {
    fn describe(&self) -> String {
        format!(
            "rocprofv3 rocpd database (schema {}, {} writer table set{})",
            self.schema_version.as_deref().unwrap_or("unknown"),
            self.sets.len(),
            if self.sets.len() == 1 { "" } else { "s" }
        )
    }

    fn aggregate_and_sweep(
        &self,
        windows: Option<&PhaseWindows>,
        busy: (i64, i64),
    ) -> Result<(Aggregate, Option<Swept>), TraceError> {
        // Several writers' tables interleave in time: only one table is swept while it is read.
        let [set] = self.sets.as_slice() else {
            return Ok((self.aggregate(windows)?, None));
        };
        let (totals, swept) = sqlite_scan::aggregate_and_sweep_by_key(&self.path, &set.dispatch, windows, busy)?;
        let symbols = self.symbol_names(set)?;
        let name = |id: &i64| symbols.get(id).cloned().unwrap_or_else(|| format!("<unknown kernel_id {id}>"));
        let swept =
            swept.map(|(b, by_id)| (b, by_id.into_iter().map(|(id, ns)| (KernelKey { set: 0, id }, ns)).collect()));
        Ok((Aggregate::from_ids(totals, name), swept))
    }

    fn aggregate(&self, windows: Option<&PhaseWindows>) -> Result<Aggregate, TraceError> {
        let mut by_id: HashMap<(usize, i64), [Totals; PHASES]> = HashMap::new();
        let mut names: HashMap<(usize, i64), String> = HashMap::new();
        for (i, set) in self.sets.iter().enumerate() {
            let totals = sqlite_scan::aggregate_by_key(&self.path, &set.dispatch, windows)?;
            let symbols = self.symbol_names(set)?;
            for (id, t) in totals {
                let name = symbols.get(&id).cloned().unwrap_or_else(|| format!("<unknown kernel_id {id}>"));
                names.insert((i, id), name);
                by_id.insert((i, id), t);
            }
        }
        Ok(Aggregate::from_ids(by_id, |k| names.remove(k).unwrap_or_default()))
    }

    /// One writer's table only: lane numbers of several writers' tables are not one namespace.
    fn lane_totals(&self, span: Option<(i64, i64)>) -> Result<Vec<(i64, Totals)>, TraceError> {
        let [set] = self.sets.as_slice() else { return Ok(Vec::new()) };
        sqlite_scan::lane_totals(&self.path, &set.dispatch, span)
    }

    fn aggregate_on_lanes(&self, windows: Option<&PhaseWindows>, lanes: &[i64]) -> Result<Aggregate, TraceError> {
        let [set] = self.sets.as_slice() else { return Ok(Aggregate::default()) };
        let totals = sqlite_scan::aggregate_by_key_on_lanes(&self.path, &set.dispatch, windows, lanes)?;
        let symbols = self.symbol_names(set)?;
        Ok(Aggregate::from_ids(totals, |id| {
            symbols.get(id).cloned().unwrap_or_else(|| format!("<unknown kernel_id {id}>"))
        }))
    }

    fn graph_span(&self) -> Result<Option<(i64, i64)>, TraceError> {
        let mut span: Option<(i64, i64)> = None;
        for set in self.sets.iter().filter(|s| s.has_graph_node) {
            // Several processes or agents: the latest burst is the request's decode.
            if let Some((a, b)) = sqlite_scan::last_burst_where(&self.path, &set.dispatch, "graph_node_id != 0")? {
                span = Some(match span {
                    Some((x, y)) if x > a => (x, y),
                    _ => (a, b),
                });
            }
        }
        Ok(span)
    }

    fn for_each_by_start(&self, f: &mut dyn FnMut(Dispatch)) -> Result<(), TraceError> {
        let tables: Vec<&KernelTable> = self.sets.iter().map(|s| &s.dispatch).collect();
        sqlite_scan::for_each_by_start(&self.path, &tables, f)
    }

    fn key_names(&self, keys: &[KernelKey]) -> Result<HashMap<KernelKey, String>, TraceError> {
        let mut out = HashMap::with_capacity(keys.len());
        for (i, set) in self.sets.iter().enumerate() {
            if !keys.iter().any(|k| k.set as usize == i) {
                continue;
            }
            let symbols = self.symbol_names(set)?;
            for k in keys.iter().filter(|k| k.set as usize == i) {
                let name = symbols.get(&k.id).cloned().unwrap_or_else(|| format!("<unknown kernel_id {}>", k.id));
                out.insert(*k, name);
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::phase::Phase;
    use crate::trace::window::{best_window, WindowMethod};

    /// The trace as the detector opens it, without the detector (which sits above this reader).
    fn open_trace(path: &Path) -> Result<Box<dyn KernelSource>, TraceError> {
        let conn = sqlite_scan::open_read_only(path)?;
        let names = sqlite_scan::schema_names(path, &conn)?;
        Ok(Box::new(RocpdTrace::open(path, &conn, &names)?))
    }

    /// A minimal rocpd-shaped database: only the columns the reader uses (the full official DDL
    /// is exercised by the generated fixtures in traces/).
    fn create_set(conn: &Connection, suffix: &str, graph: bool, symbols: &[(i64, &str)]) {
        let graph_col = if graph { ", graph_node_id INTEGER NOT NULL DEFAULT 0" } else { "" };
        conn.execute_batch(&format!(
            "CREATE TABLE rocpd_kernel_dispatch{suffix} (id INTEGER PRIMARY KEY, kernel_id INTEGER NOT NULL, \
             start BIGINT NOT NULL, \"end\" BIGINT NOT NULL{graph_col});
             CREATE TABLE rocpd_info_kernel_symbol{suffix} (id INTEGER PRIMARY KEY, kernel_name TEXT, display_name TEXT);"
        ))
        .unwrap();
        for (id, name) in symbols {
            conn.execute(
                &format!("INSERT INTO rocpd_info_kernel_symbol{suffix} VALUES (?1, 'mangled', ?2)"),
                rusqlite::params![id, name],
            )
            .unwrap();
        }
    }

    fn totals(src: &dyn KernelSource) -> Vec<(String, u64, u64)> {
        let agg = src.aggregate(None).unwrap();
        agg.kernels.iter().map(|k| (k.name.clone(), k.phase(Phase::Decode).calls, k.phase(Phase::Decode).ns)).collect()
    }

    #[test]
    fn kernel_ids_are_per_writer_and_names_merge_across_writers() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("merged.db");
        let conn = Connection::open(&path).unwrap();
        let (a, b) = ("_0198a1b2_0000_7000_8000_000000000001", "_0198a1b2_0000_7000_8000_000000000002");
        create_set(&conn, a, false, &[(1, "rope_neox"), (2, "soft_max_f32")]);
        create_set(&conn, b, false, &[(1, "soft_max_f32"), (2, "")]);
        conn.execute_batch(&format!(
            "INSERT INTO rocpd_kernel_dispatch{a} (kernel_id, start, \"end\") VALUES (1, 100, 150), (2, 200, 210);
             INSERT INTO rocpd_kernel_dispatch{b} (kernel_id, start, \"end\") VALUES (1, 300, 330), (2, 400, 404), (7, 500, 501);
             CREATE VIEW rocpd_kernel_dispatch AS SELECT * FROM rocpd_kernel_dispatch{a};"
        ))
        .unwrap();
        drop(conn);
        let src = open_trace(&path).unwrap();
        assert!(src.describe().contains("2 writer table sets"), "{}", src.describe());
        assert_eq!(
            totals(src.as_ref()),
            vec![
                // display_name empty: the symbol name stands in
                ("<unknown kernel_id 7>".to_string(), 1, 1),
                ("mangled".to_string(), 1, 4),
                ("rope_neox".to_string(), 1, 50),
                ("soft_max_f32".to_string(), 2, 40),
            ]
        );
    }

    /// The rocpd 4.0 design: a dispatch's start and end are ids into the writer's
    /// `rocpd_timestamp` table (ROCm/rocm-systems#4762, #5347), its context a `track_id`. Read
    /// through the join, the totals are the inline ones; a table with `start_id` and no
    /// `end_id` is named in one line.
    #[test]
    fn a_4_0_dispatch_table_reads_its_timestamps_through_rocpd_timestamp() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v4.db");
        let conn = Connection::open(&path).unwrap();
        let s = "_0198a1b2_0000_7000_8000_000000000004";
        conn.execute_batch(&format!(
            "CREATE TABLE rocpd_metadata{s} (tag TEXT, value TEXT);
             INSERT INTO rocpd_metadata{s} VALUES ('schema_version', '4.0.0');
             CREATE VIEW rocpd_metadata AS SELECT * FROM rocpd_metadata{s};
             CREATE TABLE rocpd_timestamp{s} (id INTEGER PRIMARY KEY, guid TEXT, value BIGINT NOT NULL, phase INTEGER, track_id INTEGER);
             CREATE TABLE rocpd_kernel_dispatch{s} (id INTEGER PRIMARY KEY, track_id INTEGER NOT NULL, kernel_id INTEGER NOT NULL,
                 start_id INTEGER NOT NULL, end_id INTEGER NOT NULL);
             CREATE TABLE rocpd_info_kernel_symbol{s} (id INTEGER PRIMARY KEY, kernel_name TEXT, display_name TEXT);
             INSERT INTO rocpd_info_kernel_symbol{s} VALUES (1, 'm', 'rope_neox'), (2, 'm', 'soft_max_f32');
             INSERT INTO rocpd_timestamp{s} (id, value) VALUES (1, 100), (2, 150), (3, 200), (4, 210), (5, 300), (6, 333);
             INSERT INTO rocpd_kernel_dispatch{s} (track_id, kernel_id, start_id, end_id) VALUES (1, 1, 1, 2), (1, 2, 3, 4), (2, 2, 5, 6);"
        ))
        .unwrap();
        drop(conn);
        let src = open_trace(&path).unwrap();
        assert!(src.describe().contains("schema 4.0.0"), "{}", src.describe());
        assert_eq!(totals(src.as_ref()), vec![("rope_neox".to_string(), 1, 50), ("soft_max_f32".to_string(), 2, 43)]);

        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(&format!("ALTER TABLE rocpd_kernel_dispatch{s} DROP COLUMN end_id;")).unwrap();
        drop(conn);
        let e = open_trace(&path).err().unwrap();
        assert!(matches!(&e, TraceError::MissingColumn { column, .. } if column == "end_id"), "{e}");
    }

    #[test]
    fn parallel_range_scan_adds_up_exactly() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.db");
        let mut conn = Connection::open(&path).unwrap();
        let s = "_0198a1b2_0000_7000_8000_00000000000a";
        create_set(&conn, s, false, &[(0, "k0"), (1, "k1"), (2, "k2"), (70_000, "far")]);
        let n: i64 = 150_001;
        let tx = conn.transaction().unwrap();
        {
            let mut ins = tx
                .prepare(&format!(
                    "INSERT INTO rocpd_kernel_dispatch{s} (kernel_id, start, \"end\") VALUES (?1, ?2, ?3)"
                ))
                .unwrap();
            for i in 0..n {
                let key = if i == 77 { 70_000 } else { i % 3 };
                ins.execute([key, i * 10, i * 10 + i % 7]).unwrap();
            }
        }
        tx.commit().unwrap();
        drop(conn);
        let got = totals(open_trace(&path).unwrap().as_ref());
        let mut want = [(0u64, 0u64); 3];
        let mut far = (0, 0);
        for i in 0..n {
            let e = if i == 77 { &mut far } else { &mut want[(i % 3) as usize] };
            e.0 += 1;
            e.1 += (i % 7) as u64;
        }
        assert_eq!(
            got,
            vec![
                ("far".to_string(), far.0, far.1),
                ("k0".to_string(), want[0].0, want[0].1),
                ("k1".to_string(), want[1].0, want[1].1),
                ("k2".to_string(), want[2].0, want[2].1),
            ]
        );
    }

    /// A table big enough for one scan thread per core, kernels overlapping within and across
    /// two streams and across the threads' ranges: the split swept inside the scan threads equals
    /// the one sweep in start order, in order by rowid or not.
    #[test]
    fn the_split_swept_while_scanning_equals_the_one_sweep() {
        for shuffled in [false, true] {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("overlap.db");
            let mut conn = Connection::open(&path).unwrap();
            let s = "_0198a1b2_0000_7000_8000_00000000000b";
            create_set(&conn, s, false, &[(0, "k0"), (1, "k1"), (2, "k2"), (3, "long")]);
            conn.execute_batch(&format!("ALTER TABLE rocpd_kernel_dispatch{s} ADD COLUMN stream_id INTEGER")).unwrap();
            let n: i64 = 120_001;
            let mut rows: Vec<[i64; 4]> = (0..n)
                .map(|i| {
                    // Launched early and waiting (programmatic dependent launch), now and then a
                    // long kernel on the other stream.
                    let (key, len, stream) = if i % 997 == 0 { (3, 9_000, 1) } else { (i % 3, 7 + i % 5, 0) };
                    [key, i * 5, i * 5 + len, stream]
                })
                .collect();
            if shuffled {
                rows.swap(10, 90_000);
            }
            let tx = conn.transaction().unwrap();
            {
                let mut ins = tx
                    .prepare(&format!(
                        "INSERT INTO rocpd_kernel_dispatch{s} (kernel_id, start, \"end\", stream_id) VALUES (?1, ?2, ?3, ?4)"
                    ))
                    .unwrap();
                for r in &rows {
                    ins.execute(*r).unwrap();
                }
            }
            tx.commit().unwrap();
            drop(conn);
            let (lo, hi) = (Some(1_000), Some(n * 5 - 1_000));
            let one = crate::trace::overlap::split(open_trace(&path).unwrap().as_ref(), lo, hi).unwrap();
            let src = open_trace(&path).unwrap();
            let (agg, both) = crate::trace::overlap::aggregate_and_split(src.as_ref(), None, lo, hi).unwrap();
            assert_eq!(both.busy_ns, one.busy_ns, "shuffled: {shuffled}");
            for (name, ns) in &one.exclusive_ns {
                assert!((both.exclusive_ns[name] - ns).abs() < 1e-3, "{name}: {} vs {ns}", both.exclusive_ns[name]);
            }
            assert_eq!(agg.total().calls, n as u64);
            // In rowid order the sweep ran inside the scan threads (and was not redone in one pass).
            let conn = Connection::open(&path).unwrap();
            let trace = RocpdTrace::open(&path, &conn, &sqlite_scan::schema_names(&path, &conn).unwrap()).unwrap();
            let table = &trace.sets[0].dispatch;
            let (_, swept) =
                sqlite_scan::aggregate_and_sweep_by_key(&path, table, None, (lo.unwrap(), hi.unwrap())).unwrap();
            assert_eq!(swept.is_some(), !shuffled);
            assert_eq!(table.sorted.get(), Some(&!shuffled));
        }
    }

    #[test]
    fn graph_launched_dispatches_mark_decode() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("graph.db");
        let conn = Connection::open(&path).unwrap();
        create_set(&conn, "", true, &[(1, "mul_mat_q"), (2, "mul_mat_vec_q")]);
        conn.execute_batch(
            "INSERT INTO rocpd_kernel_dispatch (kernel_id, start, \"end\", graph_node_id) VALUES
               (1, 1000, 9000, 0), (2, 10000, 10500, 0), (2, 11000, 11500, 5), (2, 12000, 12500, 6);",
        )
        .unwrap();
        drop(conn);
        let src = open_trace(&path).unwrap();
        assert_eq!(src.graph_span().unwrap(), Some((11000, 12500)));
        let (agg, choice, _) = best_window(src.as_ref(), None, None, false).unwrap();
        assert_eq!(choice.method, WindowMethod::CudaGraph);
        assert_eq!(agg.phase_total(Phase::Decode).calls, 2);
        assert_eq!(agg.phase_total(Phase::Prefill).calls, 2);
    }
}
