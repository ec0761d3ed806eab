//! The one row model of the history's schema, for every backend: a [`StudyRecord`] is written as
//! these cells and read back, by column name, into a [`StudyRecord`] again (docs/methodology.md
//! §15). A backend only binds cells and hands rows over; it never knows a column of its own.
use super::error::HistoryError;
use super::record::{RecordKind, SampleRow, StudyRecord, VariantRecord, VerdictOn, VerdictRow};
use crate::summary::phases::PhaseFigures;
use crate::summary::rules::Rejection;
use crate::summary::stats::ChangeCi;
use crate::summary::Metric;
use std::collections::HashMap;
use std::path::PathBuf;

/// A value bound to a statement: SQLite's three storage classes, which PostgreSQL's schema
/// (src/history/postgres.rs) gives as BIGINT, DOUBLE PRECISION and TEXT.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Cell {
    Int(Option<i64>),
    Real(Option<f64>),
    Text(Option<String>),
}

fn int(v: impl Into<i64>) -> Cell {
    Cell::Int(Some(v.into()))
}
fn opt_int<T: TryInto<i64>>(v: Option<T>) -> Cell {
    Cell::Int(v.and_then(|v| v.try_into().ok()))
}
fn real(v: Option<f64>) -> Cell {
    Cell::Real(v)
}
fn text(v: impl Into<String>) -> Cell {
    Cell::Text(Some(v.into()))
}
fn opt_text(v: Option<&str>) -> Cell {
    Cell::Text(v.map(String::from))
}
fn json<T: serde::Serialize>(v: &T) -> Cell {
    text(serde_json::to_string(v).expect("history fields serialize"))
}

/// What a backend does inside its one write transaction: run a statement of `cells`
/// (placeholders numbered from 1, in the backend's own spelling) and give back the first
/// column of the row it returns, if any.
pub(crate) trait Exec {
    fn returning(&mut self, sql: &str, cells: &[Cell]) -> Result<Option<i64>, HistoryError>;
    fn execute(&mut self, sql: &str, cells: &[Cell]) -> Result<(), HistoryError>;
    /// The placeholder of the `n`th cell (from 1).
    fn placeholder(&self, n: usize) -> String;

    /// Inserts `rows` (each of `columns`) into `table`; with `ids`, gives back the `id` each row
    /// got, in the rows' order. This default sends a statement a row, which costs nothing on an
    /// embedded database; a server backend sends the rows together (src/history/postgres.rs).
    fn insert_rows(
        &mut self,
        table: &str,
        columns: &[&str],
        rows: &[Vec<Cell>],
        ids: bool,
    ) -> Result<Vec<i64>, HistoryError> {
        let ph: Vec<String> = (1..=columns.len()).map(|n| self.placeholder(n)).collect();
        let tail = if ids { " RETURNING id" } else { "" };
        let sql = format!("INSERT INTO {table} ({}) VALUES ({}){tail}", columns.join(", "), ph.join(", "));
        let mut out = Vec::new();
        for cells in rows {
            if ids {
                out.push(self.returning(&sql, cells)?.expect("INSERT … RETURNING id returns the id"));
            } else {
                self.execute(&sql, cells)?;
            }
        }
        Ok(out)
    }
}

fn insert(x: &dyn Exec, table: &str, columns: &[&str], tail: &str) -> String {
    let ph: Vec<String> = (1..=columns.len()).map(|n| x.placeholder(n)).collect();
    format!("INSERT INTO {table} ({}) VALUES ({}){tail}", columns.join(", "), ph.join(", "))
}

/// Seconds since the epoch of an RFC 3339 time, for date filters and the listing's order.
pub(crate) fn unix_seconds(rfc3339: &str) -> Option<f64> {
    chrono::DateTime::parse_from_rfc3339(rfc3339).ok().map(|t| t.timestamp_millis() as f64 / 1000.0)
}

/// One row to write: each cell beside the column it goes in, so that a column's name and its value
/// are written in one place (the read side, below, asks for the same names).
type Row = Vec<(&'static str, Cell)>;

/// Inserts `rows` (each naming the same columns, in the same order) into `table` through
/// [`Exec::insert_rows`]; the `id` each row got with `ids`.
fn insert_named(x: &mut dyn Exec, table: &str, rows: Vec<Row>, ids: bool) -> Result<Vec<i64>, HistoryError> {
    let columns: Vec<&str> = rows.first().map(|r| r.iter().map(|(c, _)| *c).collect()).unwrap_or_default();
    let cells: Vec<Vec<Cell>> = rows
        .into_iter()
        .map(|r| {
            debug_assert!(r.iter().map(|(c, _)| *c).eq(columns.iter().copied()), "{table}: rows name other columns");
            r.into_iter().map(|(_, cell)| cell).collect()
        })
        .collect();
    x.insert_rows(table, &columns, &cells, ids)
}

fn study_row(s: &StudyRecord) -> Row {
    let host = s.host.as_ref();
    vec![
        ("identity", text(&s.identity)),
        ("kind", text(s.kind.name())),
        ("folder", text(s.folder.display().to_string())),
        ("name", opt_text(s.name.as_deref())),
        ("aa", int(s.aa)),
        ("started_at", opt_text(s.started_at.as_deref())),
        ("started_unix", real(s.started_at.as_deref().and_then(unix_seconds))),
        ("recorded_at", text(chrono::Local::now().to_rfc3339())),
        ("abprof", opt_text(host.map(|h| h.abprof.as_str()))),
        ("host", opt_text(host.map(|h| h.hostname.as_str()))),
        ("host_facts", host.map_or(Cell::Text(None), json)),
        ("gpu", opt_text(host.and_then(|h| h.telemetry.as_deref()))),
        ("model_path", opt_text(s.model_path.as_deref())),
        ("model_sha256", opt_text(s.model_sha256.as_deref())),
        ("workload", opt_text(s.workload.as_deref())),
        ("output_tokens", opt_int(s.output_tokens)),
        ("prompt_tokens", opt_int(s.prompt_tokens)),
        ("server_args", json(&s.server_args)),
        ("pure_decode", int(s.pure_decode)),
        ("ignore_eos", int(s.ignore_eos)),
        ("samples_per_variant", opt_int(s.samples_per_variant)),
        ("missing", opt_int(Some(s.missing))),
        ("isolation_restored", opt_int(s.isolation_restored.map(i64::from))),
        ("outcome", opt_text(s.outcome.as_deref())),
        ("mei_pct", real(s.mei_pct)),
    ]
}

fn variant_row(study_id: i64, position: usize, v: &VariantRecord) -> Row {
    vec![
        ("study_id", int(study_id)),
        ("position", opt_int(Some(position))),
        ("label", text(&v.label)),
        ("spec", text(&v.spec)),
        ("binary_path", opt_text(v.binary_path.as_deref())),
        ("binary_sha256", opt_text(v.binary_sha256.as_deref())),
        ("version", opt_text(v.version.as_deref())),
        ("commit_sha", opt_text(v.commit.as_deref())),
        ("artifact_version", opt_text(v.artifact_version.as_deref())),
        ("model_path", opt_text(v.model_path.as_deref())),
        ("model_sha256", opt_text(v.model_sha256.as_deref())),
        ("kv", opt_text(v.kv.as_deref())),
        ("own_args", json(&v.own_args)),
        ("argv", json(&v.argv)),
        ("env", json(&v.env)),
        ("expect", opt_text(v.expect.as_deref())),
        ("planned", opt_int(Some(v.planned))),
        ("accepted", opt_int(Some(v.accepted()))),
    ]
}

fn sample_row(variant_id: i64, s: &SampleRow) -> Row {
    vec![
        ("variant_id", int(variant_id)),
        ("idx", opt_int(Some(s.index))),
        ("dir", text(&s.dir)),
        ("accepted", int(s.accepted())),
        ("decode_tps", real(s.decode_tps)),
        ("prefill_tps", real(s.prefill_tps)),
        ("strict_tps", real(s.strict_tps)),
        ("ttft_ms", real(s.ttft_ms)),
        ("prompt_tokens", opt_int(s.prompt_tokens)),
        ("output_tokens", opt_int(s.output_tokens)),
        ("draft_acceptance", real(s.draft_acceptance)),
        ("wall_ms", real(s.wall_ms)),
    ]
}

fn verdict_row(variant_id: i64, d: &VerdictRow) -> Row {
    vec![
        ("variant_id", int(variant_id)),
        ("metric", text(d.metric.name())),
        ("median", real(d.median)),
        ("mean", real(d.mean)),
        ("change_pct", real(d.change_pct)),
        ("ci_lo_pct", real(d.ci.map(|c| c.lo_pct))),
        ("ci_hi_pct", real(d.ci.map(|c| c.hi_pct))),
        ("confidence", real(d.ci.map(|c| c.confidence))),
        ("verdict", opt_text(d.verdict.as_deref())),
    ]
}

fn phase_row(variant_id: i64, name: &str, f: &PhaseFigures) -> Row {
    vec![
        ("variant_id", int(variant_id)),
        ("phase", text(name)),
        ("samples", opt_int(Some(f.samples))),
        ("mean_power_w", real(f.mean_power_w)),
        ("mean_busy_pct", real(f.mean_busy_pct)),
        ("mean_cpu_pct", real(f.mean_cpu_pct)),
        ("peak_temp_c", real(f.peak_temp_c)),
        ("gfx_clock_mhz", real(f.gfx_clock_median_mhz)),
        ("energy_j", real(f.energy_j)),
        ("j_per_token", real(f.j_per_token)),
        ("energy_from", opt_text(f.energy_from.as_deref())),
    ]
}

/// Writes `study` through `x` (inside the backend's transaction): `(id, true)` when written,
/// `(id, false)` when a study of its identity was already there (nothing written; a concurrent
/// writer of the same study waits on the identity's unique index, then finds it). Each table's
/// rows of the study go in one [`Exec::insert_rows`], so a server backend pays a round trip a
/// table, not a row.
pub(crate) fn write_study(x: &mut dyn Exec, study: &StudyRecord) -> Result<(i64, bool), HistoryError> {
    if let Some(earlier) = &study.folder_identity {
        // Recorded by an abprof whose identity held the folder's path (src/history/record.rs).
        let find = format!("SELECT id FROM studies WHERE identity = {}", x.placeholder(1));
        if let Some(id) = x.returning(&find, &[text(earlier)])? {
            return Ok((id, false));
        }
    }
    let row = study_row(study);
    let columns: Vec<&str> = row.iter().map(|(c, _)| *c).collect();
    let cells: Vec<Cell> = row.into_iter().map(|(_, cell)| cell).collect();
    let sql = insert(x, "studies", &columns, " ON CONFLICT (identity) DO NOTHING RETURNING id");
    let Some(study_id) = x.returning(&sql, &cells)? else {
        let find = format!("SELECT id FROM studies WHERE identity = {}", x.placeholder(1));
        let id = x.returning(&find, &[text(&study.identity)])?;
        return Ok((id.ok_or_else(|| HistoryError::Sql("a study vanished while being recorded".into()))?, false));
    };
    let variants = study.variants.iter().enumerate().map(|(pos, v)| variant_row(study_id, pos, v)).collect();
    let variant_ids = insert_named(x, "variants", variants, true)?;
    let with_ids = || study.variants.iter().zip(variant_ids.iter().copied());
    let samples: Vec<&SampleRow> = with_ids().flat_map(|(v, _)| &v.samples).collect();
    let sample_rows = with_ids().flat_map(|(v, id)| v.samples.iter().map(move |s| sample_row(id, s))).collect();
    let sample_ids = insert_named(x, "samples", sample_rows, true)?;
    let by_sample = || samples.iter().copied().zip(sample_ids.iter().copied());
    let rejections: Vec<Row> = by_sample()
        .flat_map(|(s, id)| {
            s.rejections.iter().map(move |r| {
                vec![("sample_id", int(id)), ("rule", text(r.rule.as_str())), ("reason", text(&r.reason))]
            })
        })
        .collect();
    let energy: Vec<Row> = by_sample()
        .flat_map(|(s, id)| {
            s.more_metrics.iter().map(move |(m, v)| {
                vec![("sample_id", int(id)), ("metric", text(m.stored_name())), ("value", real(Some(*v)))]
            })
        })
        .collect();
    let verdicts: Vec<Row> =
        with_ids().flat_map(|(v, id)| v.verdicts.iter().map(move |d| verdict_row(id, d))).collect();
    let phases: Vec<Row> =
        with_ids().flat_map(|(v, id)| v.phases.iter().map(move |(name, f)| phase_row(id, name, f))).collect();
    let kernels: Vec<Row> = with_ids()
        .flat_map(|(v, id)| {
            v.kernels.iter().map(move |(c, ms)| {
                vec![("variant_id", int(id)), ("category", text(c)), ("ms_per_token", real(Some(*ms)))]
            })
        })
        .collect();
    for (table, rows) in [
        ("rejections", rejections),
        ("sample_energy", energy),
        ("verdicts", verdicts),
        ("phases", phases),
        ("kernel_categories", kernels),
    ] {
        // A table with no row of this study is not touched (a database at an earlier schema
        // version may not have it yet: postgres.rs's migration test writes one).
        if !rows.is_empty() {
            insert_named(x, table, rows, false)?;
        }
    }
    Ok((study_id, true))
}

/// One row a backend read, by column name.
pub(crate) trait Columns {
    fn int(&self, column: &str) -> Result<Option<i64>, HistoryError>;
    fn real(&self, column: &str) -> Result<Option<f64>, HistoryError>;
    fn text(&self, column: &str) -> Result<Option<String>, HistoryError>;
}

/// What a backend reads with: every row of `sql` (no parameters) handed to `each`.
pub(crate) trait Select {
    fn each(
        &mut self,
        sql: &str,
        each: &mut dyn FnMut(&dyn Columns) -> Result<(), HistoryError>,
    ) -> Result<(), HistoryError>;
}

/// A recorded study as read back: its ids beside the record it was written from.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct StoredStudy {
    pub(crate) id: i64,
    /// The database id of each of `record.variants`, in order.
    pub(crate) variant_ids: Vec<i64>,
    pub(crate) record: StudyRecord,
}

fn need<T>(v: Option<T>, column: &str) -> Result<T, HistoryError> {
    v.ok_or_else(|| HistoryError::Sql(format!("{column} is NULL in a history row")))
}

fn from_json<T: serde::de::DeserializeOwned + Default>(text: Option<String>) -> T {
    text.and_then(|t| serde_json::from_str(&t).ok()).unwrap_or_default()
}

fn count(r: &dyn Columns, column: &str) -> Result<usize, HistoryError> {
    Ok(need(r.int(column)?, column)?.max(0) as usize)
}

fn flag(r: &dyn Columns, column: &str) -> Result<bool, HistoryError> {
    Ok(need(r.int(column)?, column)? != 0)
}

fn study_of(r: &dyn Columns) -> Result<StudyRecord, HistoryError> {
    let kind = need(r.text("kind")?, "kind")?;
    Ok(StudyRecord {
        identity: need(r.text("identity")?, "identity")?,
        folder_identity: None,
        kind: RecordKind::from_name(&kind).unwrap_or(RecordKind::Ab),
        folder: PathBuf::from(need(r.text("folder")?, "folder")?),
        name: r.text("name")?,
        aa: flag(r, "aa")?,
        started_at: r.text("started_at")?,
        host: r.text("host_facts")?.and_then(|h| serde_json::from_str(&h).ok()),
        model_path: r.text("model_path")?,
        model_sha256: r.text("model_sha256")?,
        workload: r.text("workload")?,
        output_tokens: r.int("output_tokens")?.map(|n| n as u32),
        prompt_tokens: r.int("prompt_tokens")?.map(|n| n as u64),
        server_args: from_json(r.text("server_args")?),
        pure_decode: flag(r, "pure_decode")?,
        ignore_eos: flag(r, "ignore_eos")?,
        samples_per_variant: r.int("samples_per_variant")?.map(|n| n as u32),
        missing: count(r, "missing")?,
        isolation_restored: r.int("isolation_restored")?.map(|n| n != 0),
        outcome: r.text("outcome")?,
        mei_pct: r.real("mei_pct")?,
        variants: Vec::new(),
    })
}

fn variant_of(r: &dyn Columns) -> Result<VariantRecord, HistoryError> {
    Ok(VariantRecord {
        label: need(r.text("label")?, "label")?,
        spec: need(r.text("spec")?, "spec")?,
        binary_path: r.text("binary_path")?,
        binary_sha256: r.text("binary_sha256")?,
        version: r.text("version")?,
        commit: r.text("commit_sha")?,
        artifact_version: r.text("artifact_version")?,
        model_path: r.text("model_path")?,
        model_sha256: r.text("model_sha256")?,
        kv: r.text("kv")?,
        own_args: from_json(r.text("own_args")?),
        argv: from_json(r.text("argv")?),
        env: from_json(r.text("env")?),
        expect: r.text("expect")?,
        planned: count(r, "planned")?,
        samples: Vec::new(),
        verdicts: Vec::new(),
        phases: Vec::new(),
        kernels: Vec::new(),
    })
}

fn sample_of(r: &dyn Columns) -> Result<SampleRow, HistoryError> {
    Ok(SampleRow {
        index: count(r, "idx")?,
        dir: need(r.text("dir")?, "dir")?,
        rejections: Vec::new(),
        decode_tps: r.real("decode_tps")?,
        prefill_tps: r.real("prefill_tps")?,
        strict_tps: r.real("strict_tps")?,
        ttft_ms: r.real("ttft_ms")?,
        prompt_tokens: r.int("prompt_tokens")?.map(|n| n as u64),
        output_tokens: r.int("output_tokens")?.map(|n| n as u64),
        draft_acceptance: r.real("draft_acceptance")?,
        wall_ms: r.real("wall_ms")?,
        more_metrics: Vec::new(),
    })
}

fn verdict_of(r: &dyn Columns) -> Result<Option<VerdictRow>, HistoryError> {
    let Some(metric) = VerdictOn::named(&need(r.text("metric")?, "metric")?) else { return Ok(None) };
    let ci = match (r.real("ci_lo_pct")?, r.real("ci_hi_pct")?) {
        (Some(lo_pct), Some(hi_pct)) => Some(ChangeCi::bounds(lo_pct, hi_pct, r.real("confidence")?.unwrap_or(0.95))),
        _ => None,
    };
    Ok(Some(VerdictRow {
        metric,
        median: r.real("median")?,
        mean: r.real("mean")?,
        change_pct: r.real("change_pct")?,
        ci,
        verdict: r.text("verdict")?,
    }))
}

fn phase_of(r: &dyn Columns) -> Result<(String, PhaseFigures), HistoryError> {
    Ok((
        need(r.text("phase")?, "phase")?,
        PhaseFigures {
            samples: count(r, "samples")?,
            mean_power_w: r.real("mean_power_w")?,
            mean_busy_pct: r.real("mean_busy_pct")?,
            mean_cpu_pct: r.real("mean_cpu_pct")?,
            peak_temp_c: r.real("peak_temp_c")?,
            gfx_clock_min_mhz: None,
            gfx_clock_median_mhz: r.real("gfx_clock_mhz")?,
            gfx_clock_max_mhz: None,
            energy_j: r.real("energy_j")?,
            j_per_token: r.real("j_per_token")?,
            energy_from: r.text("energy_from")?,
            throttle: Vec::new(),
        },
    ))
}

/// Every recorded study, oldest first (then by id), each whole: the same queries on every
/// backend, so that every backend answers alike.
pub(crate) fn read_studies(q: &mut dyn Select) -> Result<Vec<StoredStudy>, HistoryError> {
    let mut studies: Vec<StoredStudy> = Vec::new();
    q.each("SELECT * FROM studies ORDER BY coalesce(started_unix, 0), id", &mut |r| {
        let id = need(r.int("id")?, "id")?;
        studies.push(StoredStudy { id, variant_ids: Vec::new(), record: study_of(r)? });
        Ok(())
    })?;
    let at: HashMap<i64, usize> = studies.iter().enumerate().map(|(i, s)| (s.id, i)).collect();
    // variant id → (study index, variant index)
    let mut variants: HashMap<i64, (usize, usize)> = HashMap::new();
    q.each("SELECT * FROM variants ORDER BY study_id, position", &mut |r| {
        let Some(&i) = at.get(&need(r.int("study_id")?, "study_id")?) else { return Ok(()) };
        let id = need(r.int("id")?, "id")?;
        let s = &mut studies[i];
        variants.insert(id, (i, s.record.variants.len()));
        s.variant_ids.push(id);
        s.record.variants.push(variant_of(r)?);
        Ok(())
    })?;
    let mut samples: HashMap<i64, (usize, usize, usize)> = HashMap::new();
    q.each("SELECT * FROM samples ORDER BY variant_id, idx, id", &mut |r| {
        let Some(&(i, j)) = variants.get(&need(r.int("variant_id")?, "variant_id")?) else { return Ok(()) };
        let v = &mut studies[i].record.variants[j];
        samples.insert(need(r.int("id")?, "id")?, (i, j, v.samples.len()));
        v.samples.push(sample_of(r)?);
        Ok(())
    })?;
    q.each("SELECT * FROM sample_energy ORDER BY sample_id, metric", &mut |r| {
        let Some(&(i, j, k)) = samples.get(&need(r.int("sample_id")?, "sample_id")?) else { return Ok(()) };
        // A metric a later abprof added is kept by that abprof; this one has no name for it.
        if let Some(m) = Metric::named(&need(r.text("metric")?, "metric")?) {
            studies[i].record.variants[j].samples[k].more_metrics.push((m, need(r.real("value")?, "value")?));
        }
        Ok(())
    })?;
    q.each("SELECT * FROM rejections ORDER BY sample_id, rule, reason", &mut |r| {
        let Some(&(i, j, k)) = samples.get(&need(r.int("sample_id")?, "sample_id")?) else { return Ok(()) };
        let rule = crate::summary::rules::Rule::named(&need(r.text("rule")?, "rule")?);
        let reason = need(r.text("reason")?, "reason")?;
        studies[i].record.variants[j].samples[k].rejections.push(Rejection { rule, reason });
        Ok(())
    })?;
    let find = |r: &dyn Columns| -> Result<Option<(usize, usize)>, HistoryError> {
        Ok(variants.get(&need(r.int("variant_id")?, "variant_id")?).copied())
    };
    q.each("SELECT * FROM verdicts ORDER BY variant_id, metric", &mut |r| {
        if let Some((i, j)) = find(r)? {
            // A verdict on something a later abprof added is kept by that abprof.
            if let Some(v) = verdict_of(r)? {
                studies[i].record.variants[j].verdicts.push(v);
            }
        }
        Ok(())
    })?;
    q.each("SELECT * FROM phases ORDER BY variant_id, phase DESC", &mut |r| {
        if let Some((i, j)) = find(r)? {
            studies[i].record.variants[j].phases.push(phase_of(r)?);
        }
        Ok(())
    })?;
    q.each("SELECT * FROM kernel_categories ORDER BY variant_id, category", &mut |r| {
        if let Some((i, j)) = find(r)? {
            let category = need(r.text("category")?, "category")?;
            studies[i].record.variants[j].kernels.push((category, need(r.real("ms_per_token")?, "ms_per_token")?));
        }
        Ok(())
    })?;
    for s in &mut studies {
        for v in &mut s.record.variants {
            v.verdicts.sort_by_key(|d| d.metric.rank());
            for sample in &mut v.samples {
                sample.more_metrics.sort_by_key(|(m, _)| *m);
            }
        }
    }
    Ok(studies)
}

/// A backend of the history: it writes a study in one transaction and reads every study back,
/// through the one row model of src/history/row.rs.
pub(crate) trait Store {
    /// `(id, true)` when written; `(id, false)` when a study of its identity was there already.
    fn record(&mut self, study: &StudyRecord) -> Result<(i64, bool), HistoryError>;
    /// Every recorded study, oldest first.
    fn studies(&mut self) -> Result<Vec<StoredStudy>, HistoryError>;
    /// Writes llama-bench results in one transaction, each once (by identity); how many were new.
    fn record_bench(&mut self, results: &[super::bench_results::BenchResult]) -> Result<usize, HistoryError>;
    /// Every recorded llama-bench result, in the order imported.
    fn bench_results(&mut self) -> Result<Vec<super::bench_results::BenchResult>, HistoryError>;
}
