//! `exactness.json`: the verdict as stored in a study's evidence folder, for `abprof summarize`
//! and for people.
use super::compare::{Comparison, ExactnessVerdict};
use crate::study::evidence::EvidenceError;
use crate::study::run_folders::ExactnessFolder;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// One side of the comparison: what ran and what it answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct SideReport {
    pub(crate) label: String,
    /// The `--variant` spec as written.
    pub(crate) spec: String,
    pub(crate) binary: PathBuf,
    pub(crate) binary_sha256: Option<String>,
    /// The server's full argv (host/port/log file included) and environment overrides.
    pub(crate) argv: Vec<String>,
    pub(crate) env: Vec<(String, String)>,
    pub(crate) prompt_tokens: Option<u64>,
    pub(crate) completion_tokens: Option<u64>,
    pub(crate) finish_reason: Option<String>,
    pub(crate) system_fingerprint: Option<String>,
    /// The side's sample folder: request.json, response.sse, server.log, sample.json, tokens.json.
    pub(crate) evidence: PathBuf,
}

/// The deterministic request both sides got.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct RequestReport {
    pub(crate) prompt_file: Option<PathBuf>,
    pub(crate) prompt_sha256: String,
    /// The calibrated prompt length, when known.
    pub(crate) prompt_tokens: Option<u64>,
    pub(crate) max_tokens: u32,
    pub(crate) temperature: f64,
    pub(crate) seed: u64,
    pub(crate) cache_prompt: bool,
    pub(crate) ignore_eos: bool,
    pub(crate) top_logprobs: u32,
}

/// Which correctness gate the candidate passes (docs/methodology.md §12): bit exact, else the
/// cosine fallback, else none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Gate {
    Exact,
    CosinePass,
    Fail,
}

impl Gate {
    /// The name exactness.json gives it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Gate::Exact => "exact",
            Gate::CosinePass => "cosine_pass",
            Gate::Fail => "fail",
        }
    }

    pub(crate) fn of(c: &Comparison) -> Gate {
        match (&c.verdict, c.cosine.pass) {
            (ExactnessVerdict::Exact, _) => Gate::Exact,
            (_, true) => Gate::CosinePass,
            _ => Gate::Fail,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct ExactnessReport {
    /// Local time the report was written (RFC 3339).
    pub(crate) created: String,
    pub(crate) baseline: SideReport,
    pub(crate) candidate: SideReport,
    pub(crate) request: RequestReport,
    /// "exact", "equal tokens (…max |Δ|…)" or "diverged at token k".
    pub(crate) headline: String,
    pub(crate) gate: Gate,
    /// The comparison's fields sit at the top level of exactness.json.
    #[serde(flatten)]
    pub(crate) comparison: Comparison,
}

/// The one type an exactness check's `exactness.json` holds.
impl crate::study::documents::ExactnessReportDoc for ExactnessReport {}

impl ExactnessReport {
    pub(crate) fn new(baseline: SideReport, candidate: SideReport, request: RequestReport, c: Comparison) -> Self {
        ExactnessReport {
            created: chrono::Local::now().to_rfc3339(),
            baseline,
            candidate,
            request,
            headline: c.verdict.headline(),
            gate: Gate::of(&c),
            comparison: c,
        }
    }

    /// Writes `DIR/exactness.json` atomically (temp file + rename).
    pub(crate) fn save(&self, folder: &ExactnessFolder) -> Result<PathBuf, EvidenceError> {
        folder.write_report(self)
    }

    /// The report in `folder`.
    pub(crate) fn read(folder: &ExactnessFolder) -> Result<ExactnessReport, EvidenceError> {
        folder.read_report()
    }
}
