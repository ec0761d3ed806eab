//! One trace's decode kernels, by category and by kernel, per token.
use std::collections::HashMap;

use serde::Serialize;

use super::categories::{Rules, OTHER};
use super::kernels::{Aggregate, Phase, Totals};
use super::names;
use super::window::{WindowChoice, WindowMethod};

#[derive(Debug, Clone, Serialize)]
pub struct CategoryLine {
    pub category: String,
    pub calls: u64,
    /// Exact GPU kernel time; `ms` is the same in milliseconds.
    pub ns: u64,
    pub ms: f64,
    pub calls_per_token: Option<f64>,
    pub ms_per_token: Option<f64>,
    /// Of the phase's traced kernel time, 0..1.
    pub share: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct KernelLine {
    /// Function name with template arguments, parameters dropped.
    pub name: String,
    pub base_name: String,
    pub category: String,
    /// Whether a rule matched (an unmatched kernel's category is "other").
    pub matched: bool,
    pub calls: u64,
    pub ns: u64,
    pub ms: f64,
    pub ms_per_token: Option<f64>,
    pub share: f64,
}

#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct PhaseLine {
    pub calls: u64,
    pub ns: u64,
    pub ms: f64,
}

impl From<Totals> for PhaseLine {
    fn from(t: Totals) -> PhaseLine {
        PhaseLine {
            calls: t.calls,
            ns: t.ns,
            ms: ns_to_ms(t.ns),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Attribution {
    pub trace: String,
    pub format: String,
    pub rules: String,
    pub window: WindowChoice,
    pub output_tokens: Option<u32>,
    /// What per-token figures divide by: decode steps (output tokens − 1, the first token comes
    /// from prefill), or all output tokens when the whole trace is counted.
    pub per_token_divisor: Option<u32>,
    pub decode: PhaseLine,
    /// Traced GPU kernel time per token in decode (the sum of kernel durations).
    pub gpu_ms_per_token: Option<f64>,
    /// GPU busy time per token in decode (union of kernel intervals), when computed: below the
    /// sum when kernels overlap.
    pub gpu_busy_ms_per_token: Option<f64>,
    /// Decode categories, most time first; categories with no kernel are left out.
    pub categories: Vec<CategoryLine>,
    /// Decode kernels, most time first.
    pub kernels: Vec<KernelLine>,
    pub prefill: PhaseLine,
    pub prefill_categories: Vec<CategoryLine>,
    /// Model load and warmup, before the request was sent.
    pub before_prefill: PhaseLine,
    /// After the last token: shutdown.
    pub after_decode: PhaseLine,
    /// Kernels no rule matched, in any phase, most time first.
    pub unmatched: Vec<KernelLine>,
}

fn ns_to_ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

fn share(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 / whole as f64
    }
}

pub struct TraceFacts {
    pub trace: String,
    pub format: String,
    pub output_tokens: Option<u32>,
}

pub fn attribute(agg: &Aggregate, rules: &Rules, window: WindowChoice, facts: TraceFacts) -> Attribution {
    let divisor = facts
        .output_tokens
        .map(|n| {
            if window.method == WindowMethod::WholeTrace {
                n
            } else {
                n.saturating_sub(1)
            }
        })
        .filter(|&n| n > 0);
    let per_token = |x: f64| divisor.map(|d| x / d as f64);

    // Categorize each distinct name once.
    let categorized: Vec<(Option<&str>, &super::kernels::KernelTotals)> =
        agg.kernels.iter().map(|k| (rules.categorize(&k.name), k)).collect();

    let category_lines = |phase: Phase| -> Vec<CategoryLine> {
        let mut by_cat: HashMap<&str, Totals> = HashMap::new();
        for (cat, k) in &categorized {
            let t = k.phase(phase);
            if t.calls > 0 {
                by_cat.entry(cat.unwrap_or(OTHER)).or_default().merge(t);
            }
        }
        let total = agg.phase_total(phase).ns;
        let mut lines: Vec<CategoryLine> = rules
            .categories()
            .iter()
            .filter_map(|c| by_cat.get(c.as_str()).map(|t| (c, *t)))
            .map(|(c, t)| CategoryLine {
                category: c.clone(),
                calls: t.calls,
                ns: t.ns,
                ms: ns_to_ms(t.ns),
                calls_per_token: per_token(t.calls as f64),
                ms_per_token: per_token(ns_to_ms(t.ns)),
                share: share(t.ns, total),
            })
            .collect();
        lines.sort_by(|a, b| b.ms.total_cmp(&a.ms));
        lines
    };

    let kernel_lines = |phase: Option<Phase>, only_unmatched: bool| -> Vec<KernelLine> {
        let mut by_inst: HashMap<String, (Option<&str>, Totals, &str)> = HashMap::new();
        for (cat, k) in &categorized {
            if only_unmatched && cat.is_some() {
                continue;
            }
            let t = phase.map_or_else(|| k.all(), |p| k.phase(p));
            if t.calls == 0 {
                continue;
            }
            by_inst
                .entry(names::instantiation(&k.name))
                .or_insert((*cat, Totals::default(), names::base_name(&k.name)))
                .1
                .merge(t);
        }
        let total = match phase {
            Some(p) => agg.phase_total(p).ns,
            None => agg.total().ns,
        };
        let mut lines: Vec<KernelLine> = by_inst
            .into_iter()
            .map(|(name, (cat, t, base))| KernelLine {
                base_name: base.to_string(),
                category: cat.unwrap_or(OTHER).to_string(),
                matched: cat.is_some(),
                calls: t.calls,
                ns: t.ns,
                ms: ns_to_ms(t.ns),
                ms_per_token: if phase == Some(Phase::Decode) {
                    per_token(ns_to_ms(t.ns))
                } else {
                    None
                },
                share: share(t.ns, total),
                name,
            })
            .collect();
        lines.sort_by(|a, b| b.ms.total_cmp(&a.ms).then_with(|| a.name.cmp(&b.name)));
        lines
    };

    let decode = agg.phase_total(Phase::Decode);
    Attribution {
        trace: facts.trace,
        format: facts.format,
        rules: rules.source.clone(),
        window,
        output_tokens: facts.output_tokens,
        per_token_divisor: divisor,
        decode: decode.into(),
        gpu_ms_per_token: per_token(ns_to_ms(decode.ns)),
        gpu_busy_ms_per_token: None,
        categories: category_lines(Phase::Decode),
        kernels: kernel_lines(Some(Phase::Decode), false),
        prefill: agg.phase_total(Phase::Prefill).into(),
        prefill_categories: category_lines(Phase::Prefill),
        before_prefill: agg.phase_total(Phase::BeforePrefill).into(),
        after_decode: agg.phase_total(Phase::AfterDecode).into(),
        unmatched: kernel_lines(None, true),
    }
}
