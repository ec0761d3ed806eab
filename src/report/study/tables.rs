//! The study report's tables, built once from the [`StudyView`] and drawn by both the HTML page and
//! the Markdown file, so the two never disagree.
use crate::report::table::{Column, Table};
use crate::report::{num, NONE};
use crate::summary::pi::PiReport;
use crate::summary::view::StudyView;
use crate::summary::{Metric, Summary};
use crate::trace::compare::Comparison;

/// A table of the study report, drawn on the page and in the Markdown file: display text cells
/// under the columns `head`, those in `numeric` right-aligned.
pub(crate) fn page_table(head: &[&str], numeric: &[usize]) -> Table {
    Table::new(
        head.iter()
            .enumerate()
            .map(|(i, h)| if numeric.contains(&i) { Column::number(h) } else { Column::text(h) })
            .collect(),
    )
}

/// The metrics the page draws a chart of (strict streamed TPS only in the tables).
pub(crate) const REPORT_METRICS: [Metric; 3] = [Metric::ServerDecodeTps, Metric::ServerPrefillTps, Metric::TtftMs];

/// Rejected samples, one row per broken rule.
pub(crate) fn rejected(s: &Summary) -> Table {
    let mut t = page_table(&["#", "variant", "folder", "rule", "reason"], &[0]);
    for r in &s.rejected {
        for x in &r.reasons {
            t.push_text(vec![
                (r.index + 1).to_string(),
                r.label.clone(),
                r.dir.clone(),
                x.rule.to_string(),
                x.reason.clone(),
            ]);
        }
    }
    t
}

/// Each traced variant: the measured ms/token a trace is scaled to, and what the trace saw.
pub(crate) fn trace_columns(c: &Comparison) -> Table {
    let mut t = page_table(
        &[
            "variant",
            "measured ms/token",
            "measured from",
            "traced GPU ms/token",
            "GPU busy ms/token",
            "unattributed",
            "decode window",
        ],
        &[1, 3, 4, 5],
    );
    for v in &c.variants {
        t.push_text(vec![
            v.label.clone(),
            format!("{:.3}", v.measured_ms_per_token),
            v.measured_from.clone(),
            num(v.traced_gpu_ms_per_token, 3),
            num(v.gpu_busy_ms_per_token, 3),
            num(v.unattributed_ms_per_token, 3),
            format!("{:?}", v.window_method),
        ]);
    }
    t
}

/// The exactness gate's result, one row per side.
pub(crate) fn exactness(x: &crate::exactness::ExactnessReport) -> Table {
    let mut t = page_table(
        &["side", "variant", "binary sha256", "prompt tokens", "generated", "finish", "verdict", "gate"],
        &[3, 4],
    );
    for (side, r) in [("baseline", &x.baseline), ("candidate", &x.candidate)] {
        t.push_text(vec![
            side.into(),
            r.label.clone(),
            r.binary_sha256.as_deref().map_or(NONE.into(), short_sha),
            r.prompt_tokens.map_or(NONE.into(), |n| n.to_string()),
            r.completion_tokens.map_or(NONE.into(), |n| n.to_string()),
            r.finish_reason.clone().unwrap_or_else(|| NONE.into()),
            x.headline.clone(),
            format!("{:?}", x.gate).to_lowercase(),
        ]);
    }
    t
}

/// The Pi study's medians over valid samples.
pub(crate) fn pi_variants(p: &PiReport) -> Table {
    let mut t = page_table(
        &[
            "variant",
            "valid",
            "Pi wall ms",
            "prefill ms",
            "prefill TPS",
            "decode ms",
            "decode TPS",
            "output tokens",
            "draft accept",
        ],
        &[2, 3, 4, 5, 6, 7],
    );
    for v in &p.variants {
        t.push_text(vec![
            v.label.clone(),
            format!("{}/{}", v.valid, v.samples),
            num(v.median_pi_wall_ms, 0),
            num(v.median_prefill_ms, 1),
            num(v.median_prefill_tps, 1),
            num(v.median_decode_ms, 1),
            num(v.median_decode_tps, 2),
            num(v.median_output_tokens, 0),
            v.median_acceptance.map_or(NONE.into(), |a| format!("{:.2}%", a * 100.0)),
        ]);
    }
    t
}

/// Every Pi sample with its checks.
pub(crate) fn pi_samples(p: &PiReport) -> Table {
    let mut t = page_table(&["#", "variant", "Pi wall ms", "exit", "valid", "failures"], &[0, 2]);
    for s in &p.samples {
        t.push_text(vec![
            (s.index + 1).to_string(),
            s.label.clone(),
            format!("{:.0}", s.run.pi_wall_ms),
            s.run.pi_exit.describe(),
            if s.valid { "yes" } else { "no" }.into(),
            s.failures.join("; "),
        ]);
    }
    t
}

pub(crate) fn short_sha(s: &str) -> String {
    s.chars().take(16).collect()
}

/// Where the study ran.
pub(crate) fn host(v: &StudyView) -> Table {
    let mut t = page_table(&["fact", "value"], &[]);
    let s = &v.summary;
    t.push_text(vec!["study folder".into(), s.root.clone()]);
    if let Some(h) = &v.host {
        t.push_text(vec!["host".into(), h.hostname.clone()]);
        t.push_text(vec!["kernel".into(), h.kernel.clone()]);
        t.push_text(vec!["CPU".into(), format!("{} ({} cores)", h.cpu, h.cores)]);
        t.push_text(vec![
            "memory".into(),
            h.memory_kib.map_or(NONE.into(), |k| format!("{:.1} GiB", k as f64 / 1048576.0)),
        ]);
        t.push_text(vec!["abprof".into(), h.abprof.clone()]);
        t.push_text(vec!["started".into(), h.started_at.clone()]);
    } else {
        t.push_text(vec!["host".into(), "host.json absent".into()]);
    }
    t.push_text(vec!["telemetry".into(), s.telemetry.clone().unwrap_or_else(|| NONE.into())]);
    if let Some(p) = &s.power_state {
        t.push_text(vec!["power state".into(), p.clone()]);
    }
    t.push_text(vec!["isolation".into(), isolation_status(s.isolation_restored).into()]);
    let order: Vec<&str> = s
        .order
        .iter()
        .filter(|e| e.status != crate::study::evidence::AttemptStatus::Interrupted)
        .map(|e| e.label.as_str())
        .collect();
    t.push_text(vec!["run order".into(), if order.is_empty() { NONE.into() } else { order.join(" ") }]);
    if let (Some(med), Some(max)) = (s.dead_time_ms_median, s.dead_time_ms_max) {
        t.push_text(vec!["driver dead time per sample".into(), format!("median {med:.1} ms, max {max:.1} ms")]);
    }
    t
}

pub(crate) fn isolation_status(restored: Option<bool>) -> &'static str {
    match restored {
        Some(true) => "restore and verify hooks succeeded",
        Some(false) => "RESTORE OR VERIFY FAILED: every sample is rejected",
        None => "no hooks recorded",
    }
}

/// Each variant's exact binary and model, by sha256, and what `--version` printed.
pub(crate) fn binaries(v: &StudyView) -> Table {
    let mut t = page_table(&["variant", "binary", "sha256", "version", "model", "model sha256"], &[]);
    for f in &v.variants {
        t.push_text(vec![
            f.label.clone(),
            f.binary.real_path.display().to_string(),
            f.binary.sha256.clone(),
            f.artifact_version.clone().map_or_else(|| f.version.clone(), |a| format!("{} (artifact {a})", f.version)),
            f.model.real_path.display().to_string(),
            f.model.sha256.clone(),
        ]);
    }
    t
}

/// How each variant's server was launched.
pub(crate) fn launch(v: &StudyView) -> Table {
    let mut t = page_table(&["variant", "spec", "server argv", "env", "expect="], &[]);
    for f in &v.variants {
        t.push_text(vec![
            f.label.clone(),
            f.spec.clone(),
            shlex::try_join(f.server_args.iter().map(String::as_str)).unwrap_or_else(|_| f.server_args.join(" ")),
            if f.env.is_empty() {
                NONE.into()
            } else {
                f.env.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" ")
            },
            f.expect.clone().unwrap_or_else(|| NONE.into()),
        ]);
    }
    t
}

/// Every isolation hook that ran.
pub(crate) fn hooks(v: &StudyView) -> Option<Table> {
    let iso = v.isolation.as_ref()?;
    let mut t = page_table(&["phase", "argv", "status", "ms", "output"], &[3]);
    for r in &iso.runs {
        t.push_text(vec![
            r.phase.clone(),
            shlex::try_join(r.argv.iter().map(String::as_str)).unwrap_or_else(|_| r.argv.join(" ")),
            r.status.clone(),
            format!("{:.0}", r.ms),
            r.output.clone(),
        ]);
    }
    (!t.rows.is_empty()).then_some(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_captured_study_fills_every_table_it_has() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/evidence-pre-engine/study");
        let v = StudyView::load(&dir).unwrap();
        let sections = crate::report::sections::of(&v.summary);
        let table_of = |title: &str| {
            let sec = sections.iter().find(|x| x.title.starts_with(title)).unwrap_or_else(|| panic!("{title}"));
            match &sec.parts[0] {
                crate::report::section::Part::Table(t) | crate::report::section::Part::Grouped(t, _) => t.clone(),
                p => panic!("{p:?}"),
            }
        };
        let t = table_of("server decode TPS");
        assert_eq!(t.rows.len(), 2, "2 variants");
        assert!(t.rows.iter().all(|r| r.len() == t.columns.len()));
        assert_eq!(t.rows[0][8], "baseline");
        // 2 samples a side: no interval and no verdict (docs/methodology.md §8).
        assert_eq!(t.rows[1][8].as_str().unwrap(), "too few samples", "{:?}", t.rows[1]);
        assert_eq!(t.rows[0][4].as_str().unwrap(), "4.42%", "the baseline's per-sample CV: {:?}", t.rows[0]);
        let per_variant = table_of("per variant");
        assert_eq!(per_variant.rows[0].last().unwrap(), "2/2");
        let p = table_of("per phase");
        assert_eq!(p.rows.len(), 4, "prefill and decode of two variants");
        assert_eq!(p.rows[0][2], NONE, "no power on a GPU-less host");
        assert!(rejected(&v.summary).rows.is_empty());
        let b = binaries(&v);
        assert_eq!(b.rows[0][2].as_str().unwrap().len(), 64);
        assert!(b.rows[0][3].as_str().unwrap().contains("0c1e57098"));
        assert!(launch(&v).rows[0][2].as_str().unwrap().contains("--cache-type-k f16"));
        assert!(hooks(&v).is_none(), "the study declared no hooks");
        assert_eq!(host(&v).rows[1][1], "vm");
    }
}
