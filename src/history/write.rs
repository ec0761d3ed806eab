//! Writing one finished study: every row in one transaction, so a crash or a kill leaves either
//! the whole study or none of it.
use super::record::{RecordedStudy, StudyRecord};
use super::HistoryError;
use rusqlite::{params, Connection, OptionalExtension};
use std::time::Instant;

fn json<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).expect("history fields serialize")
}

/// Seconds since the epoch of an RFC 3339 time, for date filters.
pub(crate) fn unix_seconds(rfc3339: &str) -> Option<f64> {
    chrono::DateTime::parse_from_rfc3339(rfc3339).ok().map(|t| t.timestamp_millis() as f64 / 1000.0)
}

/// Writes `study`, or finds it already written (same identity).
pub(crate) fn record(conn: &mut Connection, study: &StudyRecord) -> Result<RecordedStudy, HistoryError> {
    let t0 = Instant::now();
    let samples = study.variants.iter().map(|v| v.samples.len()).sum();
    let done = |id, new| RecordedStudy {
        id,
        kind: study.kind,
        folder: study.folder.clone(),
        new,
        samples,
        write_ms: t0.elapsed().as_secs_f64() * 1000.0,
    };
    // IMMEDIATE: the identity check and the insert see one state of the database.
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let known: Option<i64> =
        tx.query_row("SELECT id FROM studies WHERE identity = ?1", [&study.identity], |r| r.get(0)).optional()?;
    if let Some(id) = known {
        return Ok(done(id, false));
    }
    let host = study.host.as_ref();
    tx.execute(
        "INSERT INTO studies (identity, kind, folder, name, aa, started_at, started_unix, recorded_at, abprof, host,
            host_facts, gpu, model_path, model_sha256, workload, output_tokens, prompt_tokens, server_args,
            pure_decode, ignore_eos, samples_per_variant, missing, isolation_restored, outcome)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21,
            ?22, ?23, ?24)",
        params![
            study.identity,
            study.kind.name(),
            study.folder.display().to_string(),
            study.name,
            study.aa,
            study.started_at,
            study.started_at.as_deref().and_then(unix_seconds),
            chrono::Local::now().to_rfc3339(),
            host.map(|h| h.abprof.clone()),
            host.map(|h| h.hostname.clone()),
            host.map(json),
            host.and_then(|h| h.telemetry.clone()),
            study.model_path,
            study.model_sha256,
            study.workload,
            study.output_tokens,
            study.prompt_tokens.map(|n| n as i64),
            json(&study.server_args),
            study.pure_decode,
            study.ignore_eos,
            study.samples_per_variant,
            study.missing as i64,
            study.isolation_restored,
            study.outcome,
        ],
    )?;
    let study_id = tx.last_insert_rowid();
    {
        let mut variant = tx.prepare(
            "INSERT INTO variants (study_id, position, label, spec, binary_path, binary_sha256, version, commit_sha,
                artifact_version, model_path, model_sha256, kv, own_args, argv, env, expect, planned, accepted)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)",
        )?;
        let mut sample = tx.prepare(
            "INSERT INTO samples (variant_id, idx, dir, accepted, decode_tps, prefill_tps, strict_tps, ttft_ms,
                prompt_tokens, output_tokens, draft_acceptance, wall_ms)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
        )?;
        let mut rejection = tx.prepare("INSERT INTO rejections (sample_id, rule, reason) VALUES (?1, ?2, ?3)")?;
        let mut verdict = tx.prepare(
            "INSERT INTO verdicts (variant_id, metric, median, mean, change_pct, ci_lo_pct, ci_hi_pct, confidence,
                resamples, seed, verdict)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
        )?;
        let mut phase = tx.prepare(
            "INSERT INTO phases (variant_id, phase, samples, mean_power_w, mean_busy_pct, mean_cpu_pct, peak_temp_c,
                gfx_clock_mhz, energy_j, j_per_token, energy_from)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
        )?;
        let mut kernel =
            tx.prepare("INSERT INTO kernel_categories (variant_id, category, ms_per_token) VALUES (?1, ?2, ?3)")?;
        for (pos, v) in study.variants.iter().enumerate() {
            variant.execute(params![
                study_id,
                pos as i64,
                v.label,
                v.spec,
                v.binary_path,
                v.binary_sha256,
                v.version,
                v.commit,
                v.artifact_version,
                v.model_path,
                v.model_sha256,
                v.kv,
                json(&v.own_args),
                json(&v.argv),
                json(&v.env),
                v.expect,
                v.planned as i64,
                v.accepted() as i64,
            ])?;
            let variant_id = tx.last_insert_rowid();
            for s in &v.samples {
                sample.execute(params![
                    variant_id,
                    s.index as i64,
                    s.dir,
                    s.accepted(),
                    s.decode_tps,
                    s.prefill_tps,
                    s.strict_tps,
                    s.ttft_ms,
                    s.prompt_tokens.map(|n| n as i64),
                    s.output_tokens.map(|n| n as i64),
                    s.draft_acceptance,
                    s.wall_ms,
                ])?;
                let sample_id = tx.last_insert_rowid();
                for r in &s.rejections {
                    rejection.execute(params![sample_id, r.rule, r.reason])?;
                }
            }
            for d in &v.verdicts {
                verdict.execute(params![
                    variant_id,
                    d.metric,
                    d.median,
                    d.mean,
                    d.change_pct,
                    d.ci.map(|c| c.lo_pct),
                    d.ci.map(|c| c.hi_pct),
                    d.ci.map(|c| c.confidence),
                    d.ci.map(|c| c.resamples as i64),
                    d.ci.map(|c| c.seed as i64),
                    d.verdict,
                ])?;
            }
            for (name, f) in &v.phases {
                phase.execute(params![
                    variant_id,
                    name,
                    f.samples as i64,
                    f.mean_power_w,
                    f.mean_busy_pct,
                    f.mean_cpu_pct,
                    f.peak_temp_c,
                    f.gfx_clock_median_mhz,
                    f.energy_j,
                    f.j_per_token,
                    f.energy_from,
                ])?;
            }
            for (category, ms) in &v.kernels {
                kernel.execute(params![variant_id, category, ms])?;
            }
        }
    }
    tx.commit()?;
    Ok(done(study_id, true))
}

#[cfg(test)]
mod tests {
    use super::super::query::{accepted_values, rows};
    use super::super::record::testing::{study, variant};
    use super::*;

    fn history() -> (tempfile::TempDir, Connection) {
        let d = tempfile::tempdir().unwrap();
        let conn = super::super::migrate::open(&d.path().join("h.db")).unwrap();
        (d, conn)
    }

    fn count(conn: &Connection, table: &str) -> i64 {
        conn.query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0)).unwrap()
    }

    #[test]
    fn a_study_is_written_whole_once_and_reads_back() {
        let (_d, mut conn) = history();
        let mut s = study("one", 0, vec![variant("f16", "1", &[10.0, 11.0, 12.0]), variant("q8_0", "1", &[9.0, 9.5])]);
        s.variants[1].samples[1].rejections =
            vec![crate::summary::rules::Rejection { rule: "other-workload".into(), reason: "busy".into() }];
        let first = record(&mut conn, &s).unwrap();
        assert!(first.new && first.samples == 5, "{first:?}");
        let again = record(&mut conn, &s).unwrap();
        assert!(!again.new && again.id == first.id, "the same identity is recognized");
        assert_eq!((count(&conn, "studies"), count(&conn, "samples"), count(&conn, "rejections")), (1, 5, 1));
        let r = rows(&conn).unwrap();
        assert_eq!(r.len(), 2);
        assert_eq!((r[1].label.as_str(), r[1].accepted, r[1].planned), ("q8_0", 1, 2));
        assert_eq!(
            accepted_values(&conn, r[1].variant_id, "decode_tps").unwrap(),
            [9.0],
            "the rejected one is kept apart"
        );
        assert_eq!(r[0].started_unix, unix_seconds("2026-11-30T10:00:00+00:00"));
    }

    /// One transaction: a write that fails at its last insert leaves no trace of the study.
    #[test]
    fn a_write_that_fails_half_way_leaves_no_row() {
        let (_d, mut conn) = history();
        conn.execute_batch(
            "CREATE TRIGGER fail_last BEFORE INSERT ON kernel_categories BEGIN SELECT RAISE(ABORT, 'disk gone'); END;",
        )
        .unwrap();
        let mut s = study("half", 0, vec![variant("f16", "1", &[10.0, 11.0])]);
        s.variants[0].kernels = vec![("matmul".into(), 1.5)];
        let e = record(&mut conn, &s).unwrap_err().to_string();
        assert!(e.contains("disk gone"), "{e}");
        for table in ["studies", "variants", "samples", "verdicts", "phases"] {
            assert_eq!(count(&conn, table), 0, "{table}");
        }
    }
}
