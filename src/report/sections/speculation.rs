//! A speculative study's acceptance and the server's memory per variant (docs/methodology.md
//! §7.11), as tables of the one table model: drawn by `summarize`'s text and by the study report
//! (HTML and Markdown) alike.
use crate::report::section::Section;
use crate::report::table::Table;
use crate::report::{num, NONE};
use crate::summary::Summary;

/// The MTP yardstick's section (§4.1), in that workload only.
pub(crate) fn yardstick_sections(s: &Summary) -> Vec<Section> {
    mtp_yardstick(s)
        .map(|t| {
            Section::new("MTP yardstick (§4.1): the nine prompts' aggregate per sample, medians over accepted samples")
                .table(t)
        })
        .into_iter()
        .collect()
}

/// Draft acceptance, where some variant drafted (§7.11).
pub(crate) fn acceptance_sections(s: &Summary) -> Vec<Section> {
    acceptance(s).map(|t| Section::new("draft acceptance (accepted samples; §7.11)").table(t)).into_iter().collect()
}

/// The server's memory, where some log sized its buffers (§7.11).
pub(crate) fn memory_sections(s: &Summary) -> Vec<Section> {
    memory(s).map(|t| Section::new("server memory (MiB, the log's buffers, medians)").table(t)).into_iter().collect()
}

/// A speculative study's acceptance per variant (docs/methodology.md §7.11): every accepted
/// sample's rate, the median with its 95% interval, the tokens one decode step yields and each
/// draft position's median rate; `None` when no variant drafted, so other studies' documents stay
/// as they were.
pub(crate) fn acceptance(s: &Summary) -> Option<Table> {
    if s.variants.iter().all(|v| v.acceptance.is_empty()) {
        return None;
    }
    let mut t = Table::of_cells(
        &["variant", "acceptance per sample", "median", "95% CI", "tok/step", "per position (median)"],
        &[2, 3, 4],
    );
    let pct = |a: f64| format!("{:.1}%", a * 100.0);
    for v in &s.variants {
        let runs = v.acceptance.iter().map(|&a| pct(a)).collect::<Vec<_>>().join(" ");
        t.push_text(vec![
            v.label.clone(),
            if runs.is_empty() { "no drafts".into() } else { runs },
            v.acceptance_median.map_or(NONE.into(), pct),
            v.acceptance_ci.map_or(NONE.into(), |[lo, hi]| format!("[{}, {}]", pct(lo), pct(hi))),
            num(v.mean_acceptance_length_median, 2),
            v.acceptance_per_position_median.as_ref().map_or(NONE.into(), |p| {
                format!("({})", p.iter().map(|x| format!("{x:.3}")).collect::<Vec<_>>().join(", "))
            }),
        ]);
    }
    Some(t)
}

/// The server's buffers per variant, MiB, medians over the samples whose log sized them
/// (docs/methodology.md §7.11 "memory"); `None` when no log did.
pub(crate) fn memory(s: &Summary) -> Option<Table> {
    if s.variants.iter().all(|v| v.memory.is_none()) {
        return None;
    }
    let mut t = Table::of_cells(
        &[
            "variant",
            "samples",
            "model",
            "KV",
            "recurrent",
            "compute",
            "MTP/draft ctx",
            "total",
            "on device",
            "ctx share",
        ],
        &[1, 2, 3, 4, 5, 6, 7, 8, 9],
    );
    for v in &s.variants {
        let Some(m) = &v.memory else {
            t.push_text(vec![
                v.label.clone(),
                "0".into(),
                NONE.into(),
                NONE.into(),
                NONE.into(),
                NONE.into(),
                NONE.into(),
                NONE.into(),
                NONE.into(),
                NONE.into(),
            ]);
            continue;
        };
        let mib = |x: f64| format!("{x:.2}");
        t.push_text(vec![
            v.label.clone(),
            m.samples.to_string(),
            mib(m.model_mib),
            mib(m.kv_mib),
            mib(m.recurrent_mib),
            mib(m.compute_mib),
            mib(m.speculative_context_mib),
            mib(m.total_mib),
            mib(m.device_mib),
            m.speculative_share_pct().map_or(NONE.into(), |p| format!("{p:.1}%")),
        ]);
    }
    Some(t)
}

/// The MTP yardstick's aggregate block per variant (docs/methodology.md §4.1), the fields of the
/// MTP pull requests' script — aggregate acceptance, total drafted, wall time — as medians over
/// the accepted samples, the acceptance with its 95% interval; `None` in other workloads.
pub(crate) fn mtp_yardstick(s: &Summary) -> Option<Table> {
    if s.variants.iter().all(|v| v.mtp_yardstick.is_none()) {
        return None;
    }
    let mut t = Table::of_cells(
        &[
            "variant",
            "samples",
            "requests",
            "aggregate acceptance",
            "95% CI",
            "total drafted",
            "total accepted",
            "wall time (s)",
            "decode tok/s",
        ],
        &[1, 2, 3, 4, 5, 6, 7, 8],
    );
    let pct = |a: f64| format!("{:.1}%", a * 100.0);
    let med_u = |xs: &[u64]| crate::stats::median(&xs.iter().map(|&x| x as f64).collect::<Vec<_>>());
    for v in &s.variants {
        let Some(y) = &v.mtp_yardstick else {
            let mut row = vec![v.label.clone(), "0".into()];
            row.extend(std::iter::repeat_n(NONE.to_string(), 7));
            t.push_text(row);
            continue;
        };
        let requests: Vec<String> = {
            let mut r: Vec<usize> = y.requests.clone();
            r.dedup();
            r.iter().map(|n| n.to_string()).collect()
        };
        t.push_text(vec![
            v.label.clone(),
            y.requests.len().to_string(),
            requests.join("/"),
            y.acceptance_median.map_or("none drafted".into(), pct),
            y.acceptance_ci.map_or(NONE.into(), |[lo, hi]| format!("[{}, {}]", pct(lo), pct(hi))),
            num(y.drafted_median, 0),
            num(med_u(&y.accepted), 0),
            num(y.wall_ms_median.map(|ms| ms / 1000.0), 2),
            num(y.decode_tps_median, 2),
        ]);
    }
    Some(t)
}
