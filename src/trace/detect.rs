//! Tells a trace's format from its content (never from its name alone) and opens the right
//! reader; anything else is refused with what it is and what to pass instead.
use std::io::Read;
use std::path::Path;

use super::nsys::NsysTrace;
use super::rocpd::RocpdTrace;
use super::rocprof_csv::CsvTrace;
use super::source::KernelSource;
use super::sqlite_scan::{open_read_only, schema_names};
use super::TraceError;

const SQLITE_MAGIC: &[u8] = b"SQLite format 3\0";

/// Opens a kernel trace: a rocprofv3 rocpd database, a rocprofv3 kernel_trace CSV (direct or
/// from `rocpd convert`), or an Nsight Systems SQLite export.
pub(crate) fn open_trace(path: &Path) -> Result<Box<dyn KernelSource>, TraceError> {
    let io = |source| TraceError::Io { path: path.into(), source };
    let mut head = Vec::with_capacity(4096);
    std::fs::File::open(path).map_err(io)?.take(4096).read_to_end(&mut head).map_err(io)?;
    if head.is_empty() {
        return Err(TraceError::Empty { path: path.into() });
    }
    if head.starts_with(SQLITE_MAGIC) {
        return open_sqlite(path);
    }
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("").to_ascii_lowercase();
    if ext == "nsys-rep" || ext == "qdrep" {
        return Err(TraceError::NsysReport { path: path.into() });
    }
    let text_head = String::from_utf8_lossy(&head);
    let first_line = text_head.lines().next().unwrap_or("");
    let looks_textual = !head.contains(&0) && std::str::from_utf8(first_line.as_bytes()).is_ok();
    match text_head.trim_start().chars().next() {
        Some('{') | Some('[') if looks_textual => {
            return Err(TraceError::UnknownFormat {
                path: path.into(),
                what: "a JSON file (rocprofv3 `--output-format json`?), not a supported trace".into(),
            })
        }
        _ => {}
    }
    if looks_textual && is_rocprof_v1_stats(first_line) {
        return Err(TraceError::RocprofV1Stats { path: path.into() });
    }
    if looks_textual && first_line.contains(',') {
        return Ok(Box::new(CsvTrace::open(path, first_line)?));
    }
    let what = match ext.as_str() {
        "pftrace" => "a Perfetto trace (rocprofv3 `--output-format pftrace`)".to_string(),
        "otf2" | "def" | "evt" => "an OTF2 trace (rocprofv3 `--output-format otf2`)".to_string(),
        "db" | "sqlite" | "rpd" => {
            "not an SQLite database (no SQLite header): the file is corrupt or not a trace".to_string()
        }
        _ if looks_textual => format!("a text file whose first line is not a CSV header ({:.60})", first_line),
        _ => "neither an SQLite database nor a CSV file".to_string(),
    };
    Err(TraceError::UnknownFormat { path: path.into(), what })
}

/// rocprof v1's `--stats` header (`"Name","Calls","TotalDurationNs","AverageNs","Percentage"`,
/// tests/fixtures/llama-server-wild/rocprof-v1-results.stats.csv); rocprofv3's kernel_stats.csv
/// shares those columns but adds MinNs, MaxNs and StdDev.
fn is_rocprof_v1_stats(first_line: &str) -> bool {
    let cols: Vec<&str> = first_line.split(',').map(|c| c.trim().trim_matches('"')).collect();
    let has = |c: &str| cols.contains(&c);
    has("Calls") && has("TotalDurationNs") && has("Percentage") && !has("MinNs")
}

fn open_sqlite(path: &Path) -> Result<Box<dyn KernelSource>, TraceError> {
    let conn = open_read_only(path)?;
    let names = schema_names(path, &conn)?;
    let has = |n: &str| names.contains(n);
    if has("rocpd_kernel_dispatch") || names.iter().any(|n| n.starts_with("rocpd_kernel_dispatch_")) {
        return Ok(Box::new(RocpdTrace::open(path, &conn, &names)?));
    }
    if has("rocpd_op") {
        return Err(TraceError::LegacyRpd { path: path.into() });
    }
    if has("CUPTI_ACTIVITY_KIND_KERNEL") {
        return Ok(Box::new(NsysTrace::open(path, &conn, &names)?));
    }
    if has("StringIds") || has("EXPORT_META_DATA") || has("META_DATA_EXPORT") || has("TARGET_INFO_GPU") {
        return Err(TraceError::NsysWithoutKernels { path: path.into() });
    }
    if has("KERN") {
        return Err(TraceError::RocprofV1 { path: path.into() });
    }
    let mut sample: Vec<&str> = names.iter().map(String::as_str).collect();
    sample.sort_unstable();
    let hint = if sample.is_empty() {
        " (it has no tables at all)".to_string()
    } else {
        format!(
            " (its tables: {}{})",
            sample.iter().take(5).cloned().collect::<Vec<_>>().join(", "),
            if sample.len() > 5 { ", ..." } else { "" }
        )
    };
    Err(TraceError::ForeignDatabase { path: path.into(), hint })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn export_without_kernel_table_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("osrt-only.sqlite");
        rusqlite::Connection::open(&path)
            .unwrap()
            .execute_batch("CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);")
            .unwrap();
        let e = open_trace(&path).err().unwrap().to_string();
        assert!(e.contains("without kernel records") && e.contains("-t cuda"), "{e}");
    }

    #[test]
    fn a_rocprof_v1_stats_file_is_named_with_what_to_do() {
        let path =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/llama-server-wild/rocprof-v1-results.stats.csv");
        let err = open_trace(&path).err().expect("refused").to_string();
        assert!(err.contains("a rocprof (v1) --stats summary") && err.contains("rocprofv3 --kernel-trace"), "{err}");
        assert!(!err.contains('\n'), "{err}");
        // rocprofv3's kernel_stats.csv keeps its own refusal.
        assert!(!is_rocprof_v1_stats(
            "\"Name\",\"Calls\",\"TotalDurationNs\",\"AverageNs\",\"Percentage\",\"MinNs\",\"MaxNs\",\"StdDev\""
        ));
    }
}
