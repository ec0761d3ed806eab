//! Reading the history back: every recorded variant with its study's setup and its verdicts, and
//! the filters `abprof history` takes.
use super::record::RecordKind;
use super::HistoryError;
use rusqlite::{params, Connection};
use serde::Serialize;
use std::path::PathBuf;

/// A variant's stored median of one metric with its change against its study's baseline.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub(crate) struct StoredVerdict {
    pub(crate) metric: String,
    pub(crate) median: Option<f64>,
    pub(crate) change_pct: Option<f64>,
    pub(crate) ci_lo_pct: Option<f64>,
    pub(crate) ci_hi_pct: Option<f64>,
    pub(crate) verdict: Option<String>,
}

/// One variant of one recorded study, with the study's setup: a row of `abprof history`, and a
/// point of a series in `--regressions`.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct HistoryRow {
    pub(crate) study: i64,
    pub(crate) kind: RecordKind,
    pub(crate) started_at: Option<String>,
    #[serde(skip)]
    pub(crate) started_unix: Option<f64>,
    pub(crate) folder: String,
    pub(crate) name: Option<String>,
    pub(crate) aa: bool,
    pub(crate) host: Option<String>,
    pub(crate) cpu: Option<String>,
    pub(crate) gpu: Option<String>,
    /// The study's power state as one line (docs/methodology.md §9.7); None for a study that did
    /// not record one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) power_state: Option<String>,
    pub(crate) workload: Option<String>,
    pub(crate) output_tokens: Option<u32>,
    pub(crate) prompt_tokens: Option<u64>,
    pub(crate) server_args: Vec<String>,
    pub(crate) pure_decode: bool,
    pub(crate) ignore_eos: bool,
    pub(crate) outcome: Option<String>,
    #[serde(skip)]
    pub(crate) variant_id: i64,
    pub(crate) position: usize,
    pub(crate) label: String,
    pub(crate) spec: String,
    pub(crate) binary_path: Option<String>,
    pub(crate) binary_sha256: Option<String>,
    pub(crate) version: Option<String>,
    pub(crate) commit: Option<String>,
    pub(crate) model_path: Option<String>,
    pub(crate) model_sha256: Option<String>,
    pub(crate) kv: Option<String>,
    pub(crate) own_args: Vec<String>,
    pub(crate) env: Vec<(String, String)>,
    pub(crate) expect: Option<String>,
    pub(crate) planned: usize,
    pub(crate) accepted: usize,
    pub(crate) verdicts: Vec<StoredVerdict>,
}

/// The power state in a study's stored host facts, as [`PowerState::line`] writes it.
///
/// [`PowerState::line`]: crate::telemetry::power_state::PowerState::line
fn power_state_line(host_facts: Option<&str>) -> Option<String> {
    let facts: serde_json::Value = serde_json::from_str(host_facts?).ok()?;
    let state: crate::telemetry::power_state::PowerState = serde_json::from_value(facts.get("power")?.clone()).ok()?;
    Some(state.line())
}

impl HistoryRow {
    pub(crate) fn verdict(&self, metric: &str) -> Option<&StoredVerdict> {
        self.verdicts.iter().find(|v| v.metric == metric)
    }

    /// The model's file name, for people.
    pub(crate) fn model_name(&self) -> Option<String> {
        let p = PathBuf::from(self.model_path.as_deref()?);
        Some(p.file_name().map_or_else(|| p.display().to_string(), |n| n.to_string_lossy().to_string()))
    }
}

/// What `abprof history` keeps: every given filter must match.
#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct Filters {
    pub(crate) label: Option<String>,
    /// A binary sha256 prefix, or part of its path.
    pub(crate) binary: Option<String>,
    /// A commit prefix.
    pub(crate) commit: Option<String>,
    /// A model sha256 prefix, or part of its path.
    pub(crate) model: Option<String>,
    pub(crate) workload: Option<String>,
    /// Studies started at or after this time (seconds since the epoch)…
    pub(crate) since: Option<f64>,
    /// …and before this one.
    pub(crate) until: Option<f64>,
}

fn hash_or_path(want: &str, sha: Option<&str>, path: Option<&str>) -> bool {
    let want_lc = want.to_ascii_lowercase();
    sha.is_some_and(|s| s.starts_with(&want_lc)) || path.is_some_and(|p| p.contains(want))
}

impl Filters {
    pub(crate) fn matches(&self, r: &HistoryRow) -> bool {
        let date_ok = |bound: Option<f64>, after: bool| match (bound, r.started_unix) {
            (None, _) => true,
            (Some(_), None) => false,
            (Some(b), Some(t)) => (t >= b) == after,
        };
        self.label.as_ref().is_none_or(|l| *l == r.label)
            && self
                .binary
                .as_ref()
                .is_none_or(|b| hash_or_path(b, r.binary_sha256.as_deref(), r.binary_path.as_deref()))
            && self.commit.as_ref().is_none_or(|c| {
                r.commit.as_deref().is_some_and(|have| {
                    let (a, b) = (have.to_ascii_lowercase(), c.to_ascii_lowercase());
                    a.starts_with(&b) || b.starts_with(&a)
                })
            })
            && self.model.as_ref().is_none_or(|m| hash_or_path(m, r.model_sha256.as_deref(), r.model_path.as_deref()))
            && self.workload.as_ref().is_none_or(|w| r.workload.as_deref() == Some(w.as_str()))
            && date_ok(self.since, true)
            && date_ok(self.until, false)
    }
}

fn from_json<T: serde::de::DeserializeOwned + Default>(text: Option<String>) -> T {
    text.and_then(|t| serde_json::from_str(&t).ok()).unwrap_or_default()
}

/// Every recorded variant, oldest study first.
pub(crate) fn rows(conn: &Connection) -> Result<Vec<HistoryRow>, HistoryError> {
    let mut stmt = conn.prepare(
        "SELECT s.id AS study, s.kind, s.started_at, s.started_unix, s.folder, s.name, s.aa, s.host, s.host_facts,
                s.gpu, s.workload, s.output_tokens, s.prompt_tokens, s.server_args, s.pure_decode, s.ignore_eos,
                s.outcome, v.id AS variant_id, v.position, v.label, v.spec, v.binary_path, v.binary_sha256,
                v.version, v.commit_sha, v.model_path, v.model_sha256, v.kv, v.own_args, v.env, v.expect,
                v.planned, v.accepted
         FROM variants v JOIN studies s ON s.id = v.study_id
         ORDER BY coalesce(s.started_unix, 0), s.id, v.position",
    )?;
    // Read by column name: a column added to the query cannot shift the others.
    let mut out = stmt
        .query_map([], |r| {
            let kind: String = r.get("kind")?;
            let host_facts: Option<String> = r.get("host_facts")?;
            Ok(HistoryRow {
                study: r.get("study")?,
                kind: RecordKind::from_name(&kind).unwrap_or(RecordKind::Ab),
                started_at: r.get("started_at")?,
                started_unix: r.get("started_unix")?,
                folder: r.get("folder")?,
                name: r.get("name")?,
                aa: r.get("aa")?,
                host: r.get("host")?,
                cpu: host_facts
                    .as_ref()
                    .and_then(|h| serde_json::from_str::<serde_json::Value>(h).ok())
                    .and_then(|h| h["cpu"].as_str().map(String::from)),
                power_state: power_state_line(host_facts.as_deref()),
                gpu: r.get("gpu")?,
                workload: r.get("workload")?,
                output_tokens: r.get("output_tokens")?,
                prompt_tokens: r.get::<_, Option<i64>>("prompt_tokens")?.map(|n| n as u64),
                server_args: from_json(r.get("server_args")?),
                pure_decode: r.get("pure_decode")?,
                ignore_eos: r.get("ignore_eos")?,
                outcome: r.get("outcome")?,
                variant_id: r.get("variant_id")?,
                position: r.get::<_, i64>("position")? as usize,
                label: r.get("label")?,
                spec: r.get("spec")?,
                binary_path: r.get("binary_path")?,
                binary_sha256: r.get("binary_sha256")?,
                version: r.get("version")?,
                commit: r.get("commit_sha")?,
                model_path: r.get("model_path")?,
                model_sha256: r.get("model_sha256")?,
                kv: r.get("kv")?,
                own_args: from_json(r.get("own_args")?),
                env: from_json(r.get("env")?),
                expect: r.get("expect")?,
                planned: r.get::<_, i64>("planned")? as usize,
                accepted: r.get::<_, i64>("accepted")? as usize,
                verdicts: Vec::new(),
            })
        })?
        .collect::<Result<Vec<_>, _>>()?;
    let mut stmt = conn.prepare(
        "SELECT variant_id, metric, median, change_pct, ci_lo_pct, ci_hi_pct, verdict FROM verdicts ORDER BY rowid",
    )?;
    let mut verdicts: std::collections::HashMap<i64, Vec<StoredVerdict>> = Default::default();
    for v in stmt.query_map([], |r| {
        Ok((
            r.get::<_, i64>("variant_id")?,
            StoredVerdict {
                metric: r.get("metric")?,
                median: r.get("median")?,
                change_pct: r.get("change_pct")?,
                ci_lo_pct: r.get("ci_lo_pct")?,
                ci_hi_pct: r.get("ci_hi_pct")?,
                verdict: r.get("verdict")?,
            },
        ))
    })? {
        let (id, v) = v?;
        verdicts.entry(id).or_default().push(v);
    }
    for row in &mut out {
        row.verdicts = verdicts.remove(&row.variant_id).unwrap_or_default();
    }
    Ok(out)
}

/// The accepted samples' values of `column` (one of the samples table's metric columns).
pub(crate) fn accepted_values(conn: &Connection, variant_id: i64, column: &str) -> Result<Vec<f64>, HistoryError> {
    debug_assert!(["decode_tps", "prefill_tps", "strict_tps", "ttft_ms"].contains(&column));
    let sql = format!(
        "SELECT {column} FROM samples WHERE variant_id = ?1 AND accepted = 1 AND {column} IS NOT NULL ORDER BY idx"
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let values = stmt.query_map(params![variant_id], |r| r.get::<_, f64>(0))?.collect::<Result<Vec<_>, _>>()?;
    Ok(values)
}

/// `abprof history`: the recorded variants the filters keep.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct HistoryList {
    pub(crate) history: PathBuf,
    pub(crate) filters: Filters,
    /// Studies in the whole history.
    pub(crate) studies_total: usize,
    pub(crate) rows: Vec<HistoryRow>,
}

pub(crate) fn list(conn: &Connection, history: PathBuf, filters: Filters) -> Result<HistoryList, HistoryError> {
    let all = rows(conn)?;
    let mut studies: Vec<i64> = all.iter().map(|r| r.study).collect();
    studies.dedup();
    let rows = all.into_iter().filter(|r| filters.matches(r)).collect();
    Ok(HistoryList { history, filters, studies_total: studies.len(), rows })
}
