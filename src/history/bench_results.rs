//! llama-bench's results in the history (docs/methodology.md §15 "llama-bench results"): each
//! test of an imported file one row of its own kind, with the build, model, test and tokens per
//! second as llama-bench measured them. They sit beside abprof's studies of the same build and
//! model in a listing and never enter a study's statistics.
use crate::llama_bench::BenchRow;
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::path::Path;

/// One imported llama-bench test.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct BenchResult {
    pub(crate) identity: String,
    pub(crate) imported_at: String,
    /// The file it came from, as named on the command line.
    pub(crate) source: String,
    pub(crate) format: String,
    pub(crate) host: Option<String>,
    #[serde(flatten)]
    pub(crate) row: BenchRow,
}

/// Every test of the llama-bench output `path`, ready to record; one line naming the file and
/// what is wrong where it is not one.
pub(crate) fn results_in(path: &Path, host: Option<String>) -> Result<Vec<BenchResult>, String> {
    let text = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let text = String::from_utf8_lossy(&text);
    let (format, rows) = crate::llama_bench::parse(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let imported_at = chrono::Utc::now().to_rfc3339();
    Ok(rows
        .into_iter()
        .map(|row| {
            // The row as llama-bench wrote it: the same test imported again is the same row.
            let canonical = serde_json::to_string(&row).expect("a row serializes");
            BenchResult {
                identity: hex::encode(Sha256::digest(canonical.as_bytes())),
                imported_at: imported_at.clone(),
                source: path.display().to_string(),
                format: format.name().to_string(),
                host: host.clone(),
                row,
            }
        })
        .collect())
}
