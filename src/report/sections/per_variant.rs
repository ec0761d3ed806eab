//! Per variant: ms/token, the decode rate without the first token, draft acceptance, token
//! counts, the idle gate's wait and the accepted count, each variant's caveats under its row.
use crate::report::section::{Group, Section};
use crate::report::table::{Column, Table};
use crate::report::{num, NONE};
use crate::summary::Summary;

pub(crate) fn sections(s: &Summary) -> Vec<Section> {
    if s.llama_bench_args.is_some() {
        return llama_bench(s);
    }
    // A speculative study also shows each variant's acceptance interval and tokens per decode
    // step (§7.11); a study without drafts keeps the table it always had.
    let drafted = s.variants.iter().any(|v| !v.acceptance.is_empty());
    let mut t = Table::new(vec![
        Column::text("variant"),
        Column::number("ms/token"),
        Column::number("(N−1) TPS"),
        Column::number("accept"),
        Column::number("output tokens"),
        Column::number("prompt tok"),
        Column::number("idle gate"),
        Column::text("accepted"),
    ]);
    if drafted {
        t.columns.insert(4, Column::number("accept 95% CI"));
        t.columns.insert(5, Column::number("tok/step"));
    }
    let mut groups = Vec::new();
    for v in &s.variants {
        let mut row = vec![
            v.label.clone(),
            num(v.ms_per_token, 3),
            num(v.decode_tps_n_minus_1_median, 2),
            v.acceptance_median.map_or(NONE.into(), |a| format!("{:.2}%", a * 100.0)),
            counts(&v.output_tokens),
            counts(&v.prompt_tokens),
            v.idle_gate_ms_median.map_or(NONE.into(), |g| format!("{g:.0} ms")),
            format!("{}/{}", v.accepted, v.planned),
        ];
        if drafted {
            let ci =
                v.acceptance_ci.map_or(NONE.into(), |[lo, hi]| format!("[{:.1}%, {:.1}%]", lo * 100.0, hi * 100.0));
            row.insert(4, ci);
            row.insert(5, num(v.mean_acceptance_length_median, 2));
        }
        t.push_text(row);
        groups.push(Group { rows: 1, notes: v.caveats.iter().map(|c| format!("{}: {c}", v.label)).collect() });
    }
    vec![Section::new("per variant").grouped(t, groups)]
}

/// A llama-bench study's variants (docs/methodology.md §4.4): the build and backends llama-bench
/// printed, the idle gate's wait and the accepted count; a server's columns would all be empty.
fn llama_bench(s: &Summary) -> Vec<Section> {
    let mut t = Table::new(vec![
        Column::text("variant"),
        Column::text("llama-bench build"),
        Column::text("backends"),
        Column::number("idle gate"),
        Column::text("accepted"),
    ]);
    let mut groups = Vec::new();
    for v in &s.variants {
        let build = v.llama_bench.as_ref();
        t.push_text(vec![
            v.label.clone(),
            build.map_or(NONE.into(), |b| b.build_commit.clone()),
            build.map_or(NONE.into(), |b| b.backends.clone()),
            v.idle_gate_ms_median.map_or(NONE.into(), |g| format!("{g:.0} ms")),
            format!("{}/{}", v.accepted, v.planned),
        ]);
        groups.push(Group { rows: 1, notes: v.caveats.iter().map(|c| format!("{}: {c}", v.label)).collect() });
    }
    vec![Section::new("per variant").grouped(t, groups)]
}

/// "128×3" when all equal, else the list.
fn counts(v: &[u64]) -> String {
    match v.first() {
        None => NONE.into(),
        Some(first) if v.iter().all(|x| x == first) => format!("{first}×{}", v.len()),
        _ => v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(","),
    }
}
