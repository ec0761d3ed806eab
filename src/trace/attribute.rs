//! One trace's decode kernels, by category and by kernel, per token.
use std::collections::HashMap;

use serde::Serialize;

use super::categories::{Rules, OTHER};
use super::kernels::{Aggregate, Totals};
use super::lanes::SpeculationLanes;
use super::names;
use super::overlap::OverlapSplit;
use super::phase::Phase;
use super::window::{WindowChoice, WindowMethod};

#[derive(Debug, Clone, Serialize)]
pub(crate) struct CategoryLine {
    pub(crate) category: String,
    pub(crate) calls: u64,
    /// Exact GPU kernel time; `ms` is the same in milliseconds.
    pub(crate) ns: u64,
    pub(crate) ms: f64,
    pub(crate) calls_per_token: Option<f64>,
    pub(crate) ms_per_token: Option<f64>,
    /// Of the phase's traced kernel time, 0..1.
    pub(crate) share: f64,
    /// Decode only, when busy time was computed: the time these kernels own once overlaps are
    /// resolved (see [`super::overlap`]); the categories' exclusive times sum to GPU busy.
    pub(crate) exclusive_ms_per_token: Option<f64>,
    /// Of the decode window's GPU busy time, 0..1.
    pub(crate) exclusive_share: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct KernelLine {
    /// Function name with template arguments, parameters dropped.
    pub(crate) name: String,
    pub(crate) base_name: String,
    pub(crate) category: String,
    /// Whether a rule matched (an unmatched kernel's category is "other").
    pub(crate) matched: bool,
    pub(crate) calls: u64,
    pub(crate) ns: u64,
    pub(crate) ms: f64,
    pub(crate) ms_per_token: Option<f64>,
    pub(crate) share: f64,
    pub(crate) exclusive_ms_per_token: Option<f64>,
    pub(crate) exclusive_share: Option<f64>,
}

#[derive(Debug, Clone, Copy, Default, Serialize)]
pub(crate) struct PhaseLine {
    pub(crate) calls: u64,
    pub(crate) ns: u64,
    pub(crate) ms: f64,
}

impl From<Totals> for PhaseLine {
    fn from(t: Totals) -> PhaseLine {
        PhaseLine { calls: t.calls, ns: t.ns, ms: ns_to_ms(t.ns) }
    }
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct Attribution {
    pub(crate) trace: String,
    pub(crate) format: String,
    pub(crate) rules: String,
    pub(crate) window: WindowChoice,
    pub(crate) output_tokens: Option<u32>,
    /// What per-token figures divide by: decode steps (output tokens − 1, the first token comes
    /// from prefill), or all output tokens when the whole trace is counted.
    pub(crate) per_token_divisor: Option<u32>,
    pub(crate) decode: PhaseLine,
    /// Traced GPU kernel time per token in decode (the sum of kernel durations).
    pub(crate) gpu_ms_per_token: Option<f64>,
    /// GPU busy time per token in decode (union of kernel intervals), when computed: below the
    /// sum when kernels overlap.
    pub(crate) gpu_busy_ms_per_token: Option<f64>,
    /// Summed kernel time over busy time in decode: above 1 when kernels overlap.
    pub(crate) overlap_ratio: Option<f64>,
    /// Decode categories, most time first; categories with no kernel are left out.
    pub(crate) categories: Vec<CategoryLine>,
    /// Decode kernels, most time first.
    pub(crate) kernels: Vec<KernelLine>,
    pub(crate) prefill: PhaseLine,
    pub(crate) prefill_categories: Vec<CategoryLine>,
    /// Model load and warmup, before the request was sent.
    pub(crate) before_prefill: PhaseLine,
    /// After the last token: shutdown.
    pub(crate) after_decode: PhaseLine,
    /// Kernels no rule matched, in any phase, most time first.
    pub(crate) unmatched: Vec<KernelLine>,
    /// A speculative server's draft context on lanes of its own (§10.2): its kernels' categories
    /// and names carry [`DRAFT_SUFFIX`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) speculation_lanes: Option<SpeculationLanes>,
}

/// Appended to the category and the kernel name of work the draft context ran (§10.2), so a
/// comparison against a variant without speculation shows it as added.
pub(crate) const DRAFT_SUFFIX: &str = " (draft)";

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

pub(crate) struct TraceFacts {
    pub(crate) trace: String,
    pub(crate) format: String,
    pub(crate) output_tokens: Option<u32>,
    pub(crate) speculation_lanes: Option<SpeculationLanes>,
}

/// `overlap`, when given, is the decode window's busy time and exclusive split.
pub(crate) fn attribute(
    agg: &Aggregate,
    rules: &Rules,
    window: WindowChoice,
    facts: TraceFacts,
    overlap: Option<&OverlapSplit>,
) -> Attribution {
    let divisor = facts
        .output_tokens
        .map(|n| if window.method == WindowMethod::WholeTrace { n } else { n.saturating_sub(1) })
        .filter(|&n| n > 0);
    let per_token = |x: f64| divisor.map(|d| x / d as f64);
    // The sweep gives exclusive time by name; a name both contexts ran shares it in proportion
    // to each one's summed decode time.
    let mut decode_ns_of_name: HashMap<&str, u64> = HashMap::new();
    for k in &agg.kernels {
        *decode_ns_of_name.entry(k.name.as_str()).or_default() += k.phase(Phase::Decode).ns;
    }
    let exclusive_ns = |k: &super::kernels::KernelTotals| {
        overlap.map(|o| {
            let all = o.exclusive_ns.get(&k.name).copied().unwrap_or(0.0);
            match decode_ns_of_name.get(k.name.as_str()) {
                Some(&whole) if whole > 0 => all * k.phase(Phase::Decode).ns as f64 / whole as f64,
                _ => all,
            }
        })
    };
    let busy_ns = overlap.map(|o| o.busy_ns);
    let exclusive_figures = |ns: Option<f64>| -> (Option<f64>, Option<f64>) {
        match (ns, busy_ns) {
            (Some(ns), Some(busy)) => (per_token(ns / 1e6), Some(if busy == 0 { 0.0 } else { ns / busy as f64 })),
            _ => (None, None),
        }
    };

    // Categorize each distinct name once.
    let categorized: Vec<(Option<&str>, &super::kernels::KernelTotals)> =
        agg.kernels.iter().map(|k| (rules.categorize(&k.name), k)).collect();

    let category_lines = |phase: Phase| -> Vec<CategoryLine> {
        let mut by_cat: HashMap<(&str, bool), (Totals, Option<f64>)> = HashMap::new();
        for (cat, k) in &categorized {
            let t = k.phase(phase);
            if t.calls > 0 {
                let e = by_cat.entry((cat.unwrap_or(OTHER), k.draft)).or_insert((Totals::default(), None));
                e.0.merge(t);
                if phase == Phase::Decode {
                    e.1 = exclusive_ns(k).map(|x| x + e.1.unwrap_or(0.0));
                }
            }
        }
        let total = agg.phase_total(phase).ns;
        let mut lines: Vec<CategoryLine> = [false, true]
            .into_iter()
            .flat_map(|draft| rules.categories().iter().map(move |c| (c, draft)))
            .filter_map(|(c, draft)| by_cat.get(&(c.as_str(), draft)).map(|t| (c, draft, *t)))
            .map(|(c, draft, (t, excl))| {
                let (exclusive_ms_per_token, exclusive_share) = exclusive_figures(excl);
                CategoryLine {
                    category: if draft { format!("{c}{DRAFT_SUFFIX}") } else { c.clone() },
                    calls: t.calls,
                    ns: t.ns,
                    ms: ns_to_ms(t.ns),
                    calls_per_token: per_token(t.calls as f64),
                    ms_per_token: per_token(ns_to_ms(t.ns)),
                    share: share(t.ns, total),
                    exclusive_ms_per_token,
                    exclusive_share,
                }
            })
            .collect();
        // Where kernels overlap, what a category owns says more than its summed durations.
        lines.sort_by(|a, b| {
            let key = |c: &CategoryLine| c.exclusive_ms_per_token.unwrap_or(c.ms);
            key(b).total_cmp(&key(a))
        });
        lines
    };

    let kernel_lines = |phase: Option<Phase>, only_unmatched: bool| -> Vec<KernelLine> {
        struct Instantiation<'a> {
            category: Option<&'a str>,
            base: &'a str,
            totals: Totals,
            exclusive_ns: Option<f64>,
        }
        let mut by_inst: HashMap<String, Instantiation> = HashMap::new();
        for (cat, k) in &categorized {
            if only_unmatched && cat.is_some() {
                continue;
            }
            let t = phase.map_or_else(|| k.all(), |p| k.phase(p));
            if t.calls == 0 {
                continue;
            }
            let mut name = names::instantiation(&k.name);
            if k.draft {
                name.push_str(DRAFT_SUFFIX);
            }
            let e = by_inst.entry(name).or_insert(Instantiation {
                category: *cat,
                base: names::base_name(&k.name),
                totals: Totals::default(),
                exclusive_ns: None,
            });
            e.totals.merge(t);
            if phase == Some(Phase::Decode) {
                e.exclusive_ns = exclusive_ns(k).map(|x| x + e.exclusive_ns.unwrap_or(0.0));
            }
        }
        let total = match phase {
            Some(p) => agg.phase_total(p).ns,
            None => agg.total().ns,
        };
        let mut lines: Vec<KernelLine> = by_inst
            .into_iter()
            .map(|(name, i)| {
                let (exclusive_ms_per_token, exclusive_share) = exclusive_figures(i.exclusive_ns);
                let t = i.totals;
                KernelLine {
                    base_name: if draft_name(&name) { format!("{}{DRAFT_SUFFIX}", i.base) } else { i.base.to_string() },
                    category: match i.category.unwrap_or(OTHER) {
                        c if draft_name(&name) => format!("{c}{DRAFT_SUFFIX}"),
                        c => c.to_string(),
                    },
                    matched: i.category.is_some(),
                    calls: t.calls,
                    ns: t.ns,
                    ms: ns_to_ms(t.ns),
                    ms_per_token: if phase == Some(Phase::Decode) { per_token(ns_to_ms(t.ns)) } else { None },
                    share: share(t.ns, total),
                    exclusive_ms_per_token,
                    exclusive_share,
                    name,
                }
            })
            .collect();
        lines.sort_by(|a, b| {
            let key = |k: &KernelLine| k.exclusive_ms_per_token.unwrap_or(k.ms);
            key(b).total_cmp(&key(a)).then_with(|| a.name.cmp(&b.name))
        });
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
        gpu_busy_ms_per_token: busy_ns.and_then(|b| per_token(ns_to_ms(b))),
        overlap_ratio: busy_ns.filter(|b| *b > 0).map(|b| decode.ns as f64 / b as f64),
        categories: category_lines(Phase::Decode),
        kernels: kernel_lines(Some(Phase::Decode), false),
        prefill: agg.phase_total(Phase::Prefill).into(),
        prefill_categories: category_lines(Phase::Prefill),
        before_prefill: agg.phase_total(Phase::BeforePrefill).into(),
        after_decode: agg.phase_total(Phase::AfterDecode).into(),
        unmatched: kernel_lines(None, true),
        speculation_lanes: facts.speculation_lanes,
    }
}

fn draft_name(name: &str) -> bool {
    name.ends_with(DRAFT_SUFFIX)
}
