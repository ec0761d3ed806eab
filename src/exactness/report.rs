//! `exactness.json`: the verdict as stored in a study's evidence folder, for `abprof summarize`
//! and for people.
use super::compare::{Comparison, Verdict};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

pub const REPORT_FILE: &str = "exactness.json";
pub const SCHEMA_VERSION: u32 = 1;

/// One side of the comparison: what ran and what it answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SideReport {
    pub label: String,
    /// The `--variant` spec as written.
    pub spec: String,
    pub binary: PathBuf,
    pub binary_sha256: Option<String>,
    /// The server's full argv (host/port/log file included) and environment overrides.
    pub argv: Vec<String>,
    pub env: Vec<(String, String)>,
    pub prompt_tokens: Option<u64>,
    pub completion_tokens: Option<u64>,
    pub finish_reason: Option<String>,
    pub system_fingerprint: Option<String>,
    /// The side's sample folder: request.json, response.sse, server.log, sample.json, tokens.json.
    pub evidence: PathBuf,
}

/// The deterministic request both sides got.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RequestReport {
    pub prompt_file: Option<PathBuf>,
    pub prompt_sha256: String,
    /// The calibrated prompt length, when known.
    pub prompt_tokens: Option<u64>,
    pub max_tokens: u32,
    pub temperature: f64,
    pub seed: u64,
    pub cache_prompt: bool,
    pub ignore_eos: bool,
    pub top_logprobs: u32,
}

/// Which correctness gate the candidate passes (docs/methodology.md §12): bit exact, else the
/// cosine fallback, else none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Gate {
    Exact,
    CosinePass,
    Fail,
}

impl Gate {
    pub fn of(c: &Comparison) -> Gate {
        match (&c.verdict, c.cosine.pass) {
            (Verdict::Exact, _) => Gate::Exact,
            (_, true) => Gate::CosinePass,
            _ => Gate::Fail,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExactnessReport {
    pub schema_version: u32,
    /// Local time the report was written (RFC 3339).
    pub created: String,
    pub baseline: SideReport,
    pub candidate: SideReport,
    pub request: RequestReport,
    /// "exact", "equal tokens (…max |Δ|…)" or "diverged at token k".
    pub headline: String,
    pub gate: Gate,
    /// The comparison's fields sit at the top level of exactness.json.
    #[serde(flatten)]
    pub comparison: Comparison,
}

impl ExactnessReport {
    pub fn new(baseline: SideReport, candidate: SideReport, request: RequestReport, c: Comparison) -> Self {
        ExactnessReport {
            schema_version: SCHEMA_VERSION,
            created: chrono::Local::now().to_rfc3339(),
            baseline,
            candidate,
            request,
            headline: c.verdict.headline(),
            gate: Gate::of(&c),
            comparison: c,
        }
    }

    pub fn path_in(dir: &Path) -> PathBuf {
        dir.join(REPORT_FILE)
    }

    /// Writes `DIR/exactness.json` atomically (temp file + rename).
    pub fn save(&self, dir: &Path) -> std::io::Result<PathBuf> {
        std::fs::create_dir_all(dir)?;
        let path = Self::path_in(dir);
        crate::atomic_file::write_json(&path, self)?;
        Ok(path)
    }

    /// `DIR/exactness.json` if the study has one.
    pub fn load(dir: &Path) -> Result<Option<ExactnessReport>, String> {
        let path = Self::path_in(dir);
        match std::fs::read_to_string(&path) {
            Ok(text) => serde_json::from_str(&text)
                .map(Some)
                .map_err(|e| format!("{} is not an exactness report: {e}", path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(format!("cannot read {}: {e}", path.display())),
        }
    }
}
