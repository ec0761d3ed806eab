//! Nsight Systems SQLite export (`nsys export --type sqlite`).
//!
//! Kernels are rows of `CUPTI_ACTIVITY_KIND_KERNEL`; their names are ids into `StringIds`.
//! Columns differ between export schemas (3.x adds `greenContextId`; the metadata table was
//! `EXPORT_META_DATA` in 2.x and is `META_DATA_EXPORT` in 3.x), so everything is read by name.
//! Timestamps are ns relative to the session, not CLOCK_BOOTTIME: a manifest window will not
//! match and the decode heuristics apply.
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use rusqlite::Connection;

use super::kernels::{Aggregate, Totals};
use super::phase::PhaseWindows;
use super::source::{Dispatch, KernelKey, KernelSource, Swept};
use super::sqlite_scan::{self, KernelTable};
use super::TraceError;

const KERNEL_TABLE: &str = "CUPTI_ACTIVITY_KIND_KERNEL";

pub(crate) struct NsysTrace {
    path: PathBuf,
    kernels: KernelTable,
    has_graph_node: bool,
    schema_version: Option<String>,
    product_version: Option<String>,
}

fn metadata(conn: &Connection, names: &HashSet<String>, key: &str) -> Option<String> {
    ["META_DATA_EXPORT", "EXPORT_META_DATA"]
        .into_iter()
        .filter(|t| names.contains(*t))
        .find_map(|t| conn.query_row(&format!("SELECT value FROM {t} WHERE name = ?1"), [key], |r| r.get(0)).ok())
}

impl NsysTrace {
    pub(crate) fn open(path: &Path, conn: &Connection, names: &HashSet<String>) -> Result<NsysTrace, TraceError> {
        let cols = sqlite_scan::columns(path, conn, KERNEL_TABLE)?;
        let has = |c: &str| cols.iter().any(|x| x == c);
        for need in ["start", "end"] {
            if !has(need) {
                return Err(TraceError::MissingColumn {
                    path: path.into(),
                    table: KERNEL_TABLE.into(),
                    column: need.into(),
                });
            }
        }
        // The demangled name keeps template arguments; shortName is the bare function name.
        let Some(name_col) = ["demangledName", "shortName", "mangledName"].into_iter().find(|c| has(c)) else {
            return Err(TraceError::MissingColumn {
                path: path.into(),
                table: KERNEL_TABLE.into(),
                column: "demangledName".into(),
            });
        };
        if !names.contains("StringIds") {
            return Err(TraceError::MissingTable { path: path.into(), table: "StringIds".into() });
        }
        Ok(NsysTrace {
            path: path.into(),
            kernels: KernelTable {
                table: KERNEL_TABLE.into(),
                key: name_col.into(),
                start: "start".into(),
                end: "\"end\"".into(),
                lane: sqlite_scan::Lane::of(&cols, &["deviceId"], &["streamId"]),
                is_table: true,
                sorted: Default::default(),
            },
            has_graph_node: has("graphNodeId"),
            schema_version: metadata(conn, names, "EXPORT_SCHEMA_VERSION"),
            product_version: metadata(conn, names, "EXPORT_PRODUCT_VERSION"),
        })
    }
}

impl NsysTrace {
    /// Kernel names are ids into `StringIds`.
    fn string_ids(&self, ids: &[i64]) -> Result<HashMap<i64, String>, TraceError> {
        let conn = sqlite_scan::open_read_only(&self.path)?;
        let mut stmt =
            conn.prepare("SELECT value FROM StringIds WHERE id = ?1").map_err(|e| TraceError::sqlite(&self.path, e))?;
        let mut names: HashMap<i64, String> = HashMap::with_capacity(ids.len());
        for id in ids {
            let name: Option<String> = match stmt.query_row([id], |r| r.get(0)) {
                Ok(v) => v,
                Err(rusqlite::Error::QueryReturnedNoRows) => None,
                Err(e) => return Err(TraceError::sqlite(&self.path, e)),
            };
            names.insert(*id, name.unwrap_or_else(|| format!("<StringIds {id} missing>")));
        }
        Ok(names)
    }
}

impl KernelSource for NsysTrace {
    fn describe(&self) -> String {
        format!(
            "Nsight Systems SQLite export (export schema {}, Nsight Systems {}, names from {})",
            self.schema_version.as_deref().unwrap_or("unknown"),
            self.product_version.as_deref().unwrap_or("unknown"),
            self.kernels.key
        )
    }

    fn aggregate(&self, windows: Option<&PhaseWindows>) -> Result<Aggregate, TraceError> {
        let totals = sqlite_scan::aggregate_by_key(&self.path, &self.kernels, windows)?;
        let ids: Vec<i64> = totals.keys().copied().collect();
        let mut names = self.string_ids(&ids)?;
        Ok(Aggregate::from_ids(totals, |id| names.remove(id).unwrap_or_default()))
    }

    fn lane_totals(&self, span: Option<(i64, i64)>) -> Result<Vec<(i64, Totals)>, TraceError> {
        sqlite_scan::lane_totals(&self.path, &self.kernels, span)
    }

    fn aggregate_on_lanes(&self, windows: Option<&PhaseWindows>, lanes: &[i64]) -> Result<Aggregate, TraceError> {
        let totals = sqlite_scan::aggregate_by_key_on_lanes(&self.path, &self.kernels, windows, lanes)?;
        let ids: Vec<i64> = totals.keys().copied().collect();
        let mut names = self.string_ids(&ids)?;
        Ok(Aggregate::from_ids(totals, |id| names.remove(id).unwrap_or_default()))
    }

    fn graph_span(&self) -> Result<Option<(i64, i64)>, TraceError> {
        if !self.has_graph_node {
            return Ok(None);
        }
        sqlite_scan::last_burst_where(&self.path, &self.kernels, "graphNodeId IS NOT NULL AND graphNodeId != 0")
    }

    fn for_each_by_start(&self, f: &mut dyn FnMut(Dispatch)) -> Result<(), TraceError> {
        sqlite_scan::for_each_by_start(&self.path, &[&self.kernels], f)
    }

    fn key_names(&self, keys: &[KernelKey]) -> Result<HashMap<KernelKey, String>, TraceError> {
        let ids: Vec<i64> = keys.iter().map(|k| k.id).collect();
        let names = self.string_ids(&ids)?;
        Ok(keys.iter().filter_map(|k| names.get(&k.id).map(|n| (*k, n.clone()))).collect())
    }

    fn aggregate_and_sweep(
        &self,
        windows: Option<&PhaseWindows>,
        busy: (i64, i64),
    ) -> Result<(Aggregate, Option<Swept>), TraceError> {
        let (totals, swept) = sqlite_scan::aggregate_and_sweep_by_key(&self.path, &self.kernels, windows, busy)?;
        let ids: Vec<i64> = totals.keys().copied().collect();
        let mut names = self.string_ids(&ids)?;
        let swept =
            swept.map(|(b, by_id)| (b, by_id.into_iter().map(|(id, ns)| (KernelKey { set: 0, id }, ns)).collect()));
        Ok((Aggregate::from_ids(totals, |id| names.remove(id).unwrap_or_default()), swept))
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
        Ok(Box::new(NsysTrace::open(path, &conn, &names)?))
    }

    /// An export shaped like Nsight Systems 2024.x (schema 3.x): META_DATA_EXPORT, the extra
    /// greenContextId column, columns in another order, CUDA-graph decode kernels.
    #[test]
    fn schema_3_export_with_graph_nodes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("new.sqlite");
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(
            "CREATE TABLE META_DATA_EXPORT (name TEXT, value TEXT);
             INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION', '3.13.2'), ('EXPORT_PRODUCT_VERSION', '2024.5.1.113');
             CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
             INSERT INTO StringIds VALUES (10, 'void mul_mat_q<(ggml_type)12, 64, false>(char const*)'),
                                          (11, 'void mul_mat_vec_q<(ggml_type)12, 1, false, false, false>(void const*)'),
                                          (20, 'mul_mat_q'), (21, 'mul_mat_vec_q');
             CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (greenContextId INTEGER, shortName INTEGER NOT NULL,
                 \"end\" INTEGER NOT NULL, start INTEGER NOT NULL, demangledName INTEGER NOT NULL, graphNodeId INTEGER);
             INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (NULL, 20, 5000, 1000, 10, NULL),
                 (NULL, 21, 6300, 6000, 11, 42), (NULL, 21, 6800, 6500, 11, 43), (NULL, 21, 7350, 7000, 11, 42);",
        )
        .unwrap();
        drop(conn);
        let src = open_trace(&path).unwrap();
        assert!(src.describe().contains("export schema 3.13.2"), "{}", src.describe());
        let (agg, choice, _) = best_window(src.as_ref(), None, None, false).unwrap();
        assert_eq!(choice.method, WindowMethod::CudaGraph);
        let decode: Vec<(&str, u64, u64)> = agg
            .kernels
            .iter()
            .filter(|k| k.phase(Phase::Decode).calls > 0)
            .map(|k| (k.name.as_str(), k.phase(Phase::Decode).calls, k.phase(Phase::Decode).ns))
            .collect();
        assert_eq!(decode, vec![("void mul_mat_vec_q<(ggml_type)12, 1, false, false, false>(void const*)", 3, 950)]);
        assert_eq!(agg.phase_total(Phase::Prefill).ns, 4000);
    }

    /// As seen on the H200: llama-server replays a warmup decode graph at load, seconds before the
    /// request's eager prefill and its graph-replayed decode steps. Only the last burst is decode.
    #[test]
    fn the_warmup_graph_at_load_is_not_decode() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("warmup.sqlite");
        let conn = Connection::open(&path).unwrap();
        let s = 1_000_000_000i64; // ns
        conn.execute_batch(&format!(
            "CREATE TABLE META_DATA_EXPORT (name TEXT, value TEXT);
             CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
             INSERT INTO StringIds VALUES (1, 'mul_mat_vec_f'), (2, 'mul_mat_f_ids');
             CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, \"end\" INTEGER NOT NULL,
                 demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL, graphNodeId INTEGER);
             INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES
                 ({w}, {w} + 1000, 1, 1, 7), ({w} + 2000, {w} + 3000, 1, 1, 8),
                 ({p}, {p} + 500000, 2, 2, NULL),
                 ({d}, {d} + 1000, 1, 1, 7), ({d} + 2000, {d} + 3000, 1, 1, 8), ({d} + 4000, {d} + 5000, 1, 1, 7);",
            w = 4 * s,
            p = 7 * s,
            d = 7 * s + 600_000
        ))
        .unwrap();
        drop(conn);
        let src = open_trace(&path).unwrap();
        let (agg, choice, _) = best_window(src.as_ref(), None, Some(3), false).unwrap();
        assert_eq!(choice.method, WindowMethod::CudaGraph);
        assert_eq!(choice.decode_start_ns, Some(7 * s + 600_000));
        assert_eq!(agg.phase_total(Phase::Decode).calls, 3);
        assert_eq!(agg.phase_total(Phase::Decode).ns, 3000);
    }
}
