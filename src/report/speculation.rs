//! A speculative study's acceptance and the server's memory per variant (docs/methodology.md
//! §7.11), as tables of the one table model: drawn by `summarize`'s text and by the study report
//! (HTML and Markdown) alike.
use super::table::{Column, Table};
use super::{num, NONE};
use crate::summary::Summary;

/// Display text cells under `head`, those in `numeric` right-aligned.
fn table(head: &[&str], numeric: &[usize]) -> Table {
    Table::new(
        head.iter()
            .enumerate()
            .map(|(i, h)| if numeric.contains(&i) { Column::number(h) } else { Column::text(h) })
            .collect(),
    )
}

/// A speculative study's acceptance per variant (docs/methodology.md §7.11): every accepted
/// sample's rate, the median with its 95% interval, the tokens one decode step yields and each
/// draft position's median rate; `None` when no variant drafted, so other studies' documents stay
/// as they were.
pub(crate) fn acceptance(s: &Summary) -> Option<Table> {
    if s.variants.iter().all(|v| v.acceptance.is_empty()) {
        return None;
    }
    let mut t = table(
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
    let mut t = table(
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
