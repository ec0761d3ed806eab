//! Several variants' traces side by side, in measured ms/token.
//!
//! A tracer slows decode, so a trace's absolute times are not the variant's speed. Each
//! category's share of the trace's decode time (of GPU busy time with overlaps resolved, see
//! [`super::overlap`]; of summed kernel time when busy time is missing) is scaled by the variant's measured
//! (untraced) ms/token, so the categories sum to what was measured and their deltas sum to the
//! measured delta. That scaling is only sound when the measurement ran at the trace's output
//! length (per-token cost grows with context), which is checked wherever a manifest tells.
use std::collections::HashMap;
use std::path::PathBuf;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::attribute::Attribution;
use super::categories::Rules;
use super::window::WindowMethod;
use super::{TraceError, TraceInput};

#[derive(Debug, thiserror::Error)]
pub(crate) enum CompareError {
    #[error("--variant `{0}`: expected LABEL=TRACE[:MS_PER_TOK], e.g. f16=/tmp/tr/f16:15.444 (TRACE: a trace file or an `abprof trace` folder)")]
    Spec(String),
    #[error("variant {label}: {source}")]
    Trace { label: String, source: TraceError },
    #[error(
        "variant {label}: no ms/token to scale the trace by: give it as {label}=TRACE:MS_PER_TOK (the median ms/token of \
         untraced runs at the trace's output length) or pass an `abprof trace` folder whose trace.json has untraced samples"
    )]
    NoMeasurement { label: String },
    #[error(
        "variant {label}: its ms/token comes from {bench_tokens}-token runs but the trace is of a {trace_tokens}-token request \
         (a {trace_tokens}-token trace scaled by a {bench_tokens}-token TPS is simply wrong): re-run `abprof trace --tokens \
         {trace_tokens}` so its untraced samples match, or give the ms/token of a {trace_tokens}-token benchmark explicitly"
    )]
    LengthMismatch { label: String, trace_tokens: u32, bench_tokens: u32 },
    #[error(
        "variants were traced at different output lengths ({0}): per-token kernel costs grow with context, so trace every \
         variant with the same --tokens"
    )]
    TokensDiffer(String),
    #[error("compare-traces needs at least two --variant (the first is the baseline)")]
    TooFew,
    #[error("variant label `{0}` is given twice: labels name the columns, make them unique")]
    DuplicateLabel(String),
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct VariantSpec {
    pub(crate) label: String,
    pub(crate) trace: PathBuf,
    pub(crate) ms_per_token: Option<f64>,
}

impl FromStr for VariantSpec {
    type Err = CompareError;

    fn from_str(s: &str) -> Result<VariantSpec, CompareError> {
        let bad = || CompareError::Spec(s.to_string());
        let (label, rest) = s.split_once('=').ok_or_else(bad)?;
        let label = label.trim();
        if label.is_empty() || rest.is_empty() {
            return Err(bad());
        }
        // The number after the last ':' is the ms/token; a path may itself contain ':'.
        let (trace, ms) = match rest.rsplit_once(':') {
            Some((path, num)) if !path.is_empty() && num.trim().parse::<f64>().is_ok() => {
                let v: f64 = num.trim().parse().expect("checked above");
                if !(v.is_finite() && v > 0.0) {
                    return Err(bad());
                }
                (path, Some(v))
            }
            _ => (rest, None),
        };
        Ok(VariantSpec { label: label.to_string(), trace: PathBuf::from(trace), ms_per_token: ms })
    }
}

pub(crate) struct VariantInput {
    pub(crate) label: String,
    /// One per traced sample, in the order they ran; never empty.
    pub(crate) attributions: Vec<Attribution>,
    pub(crate) measured_ms_per_token: f64,
    pub(crate) measured_from: String,
    /// The untraced samples `measured_ms_per_token` is the median of (one value when given).
    pub(crate) measured_samples: Vec<f64>,
    /// The traced samples' own decode ms/token, where their manifest recorded it.
    pub(crate) traced_ms_per_token: Vec<f64>,
}

impl VariantInput {
    fn first(&self) -> &Attribution {
        &self.attributions[0]
    }
}

/// The traced samples at a path: a trace file is one, an `abprof trace` folder holds one per traced
/// sample (the study's layout reads the folder: src/study/trace_folder.rs `trace_inputs`).
pub(crate) type InputsOf<'a> = &'a dyn Fn(&std::path::Path) -> Result<Vec<TraceInput>, TraceError>;

/// Reads a variant's traces (one per traced sample, found by `inputs_of`) and finds its measured
/// ms/token (given, or from the manifest).
pub(crate) fn load_variant(
    spec: &VariantSpec,
    inputs_of: InputsOf<'_>,
    rules: &Rules,
    tokens: Option<u32>,
) -> Result<VariantInput, CompareError> {
    let label = spec.label.clone();
    let wrap = |source| CompareError::Trace { label: label.clone(), source };
    let inputs = inputs_of(&spec.trace).map_err(wrap)?;
    let input = &inputs[0];
    let (measured, from, measured_samples) =
        match (spec.ms_per_token, input.manifest.as_ref().and_then(|m| m.untraced.as_ref().map(|u| (m, u)))) {
            (Some(v), _) => (v, "given on the command line".to_string(), vec![v]),
            (None, Some((m, u))) => {
                if u.output_tokens != m.output_tokens {
                    return Err(CompareError::LengthMismatch {
                        label,
                        trace_tokens: m.output_tokens,
                        bench_tokens: u.output_tokens,
                    });
                }
                (
                    u.median_ms_per_token,
                    format!("median of {} untraced runs at {} tokens", u.ms_per_token.len(), u.output_tokens),
                    u.ms_per_token.clone(),
                )
            }
            (None, None) => return Err(CompareError::NoMeasurement { label }),
        };
    let attributions = inputs
        .iter()
        .map(|i| crate::trace::analyze_with(i, rules, tokens, true))
        .collect::<Result<Vec<_>, _>>()
        .map_err(wrap)?;
    let traced_ms_per_token =
        inputs.iter().filter_map(|i| i.manifest.as_ref().and_then(|m| m.traced_ms_per_token)).collect();
    Ok(VariantInput {
        label: spec.label.clone(),
        attributions,
        measured_ms_per_token: measured,
        measured_from: from,
        measured_samples,
        traced_ms_per_token,
    })
}

fn one(n: &usize) -> bool {
    *n == 1
}

fn default_one() -> usize {
    1
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct VariantColumn {
    pub(crate) label: String,
    pub(crate) trace: String,
    pub(crate) window_method: WindowMethod,
    pub(crate) output_tokens: Option<u32>,
    pub(crate) measured_ms_per_token: f64,
    pub(crate) measured_from: String,
    pub(crate) traced_gpu_ms_per_token: Option<f64>,
    /// Union of the decode kernels' intervals per token (kernels may overlap).
    pub(crate) gpu_busy_ms_per_token: Option<f64>,
    /// Measured − traced GPU time per token: launch gaps and host work.
    pub(crate) unattributed_ms_per_token: Option<f64>,
    /// Traced samples read (`abprof trace --traced N`); with more than one, every figure of the
    /// variant is the median over them.
    #[serde(default = "default_one", skip_serializing_if = "one")]
    pub(crate) traced_samples: usize,
    /// The traced samples' own median decode ms/token (a tracer slows decode), where recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) traced_decode_ms_per_token: Option<f64>,
    /// `100 * (traced / measured - 1)`: what the tracer cost decode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) tracer_overhead_pct: Option<f64>,
    /// With several traced samples: the untraced ms/token values `measured_ms_per_token` is the
    /// median of, whose spread an interval of a category's delta carries too.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) measured_samples: Vec<f64>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct CategoryRow {
    pub(crate) category: String,
    /// Scaled: the category's exclusive share of the trace's decode busy time × measured
    /// ms/token, per variant.
    pub(crate) ms_per_token: Vec<f64>,
    /// Against the baseline (the first variant); 0 for the baseline itself.
    pub(crate) delta: Vec<f64>,
    /// This row's delta over the measured delta; absent when the measured delta is ~0.
    pub(crate) share_of_delta: Vec<Option<f64>>,
    /// Per variant, the category's exclusive share of GPU busy time in each traced sample
    /// (`ms_per_token` is their median × the measured ms/token): what an interval of the delta
    /// resamples. Left out with one traced sample each.
    #[serde(default, skip_serializing_if = "at_most_one_each")]
    pub(crate) shares: Vec<Vec<f64>>,
}

fn at_most_one_each(v: &[Vec<f64>]) -> bool {
    v.iter().all(|s| s.len() <= 1)
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct MovedKernel {
    /// The function name kernels are matched by across variants.
    pub(crate) kernel: String,
    pub(crate) category: String,
    /// Per variant: the instantiation with most time (template arguments kept) and how many
    /// other instantiations were merged into the row.
    pub(crate) names: Vec<Option<String>>,
    pub(crate) ms_per_token: Vec<f64>,
    pub(crate) delta: Vec<f64>,
}

/// What every share in a comparison is a share of: the decode window's GPU busy time, overlaps
/// resolved ([`super::overlap`]); [`load_variant`] always computes it. The only basis there is,
/// named in the JSON for its readers, so a summary naming another is refused when read back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum ShareBasis {
    Exclusive,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Comparison {
    pub(crate) share_basis: ShareBasis,
    pub(crate) variants: Vec<VariantColumn>,
    pub(crate) categories: Vec<CategoryRow>,
    /// Measured ms/token minus the baseline's, per variant.
    pub(crate) measured_delta: Vec<f64>,
    pub(crate) unattributed_delta: Vec<Option<f64>>,
    pub(crate) moved_kernels: Vec<MovedKernel>,
}

const NEGLIGIBLE_MS: f64 = 1e-9;

/// Reads every variant's trace and compares them, the first as the baseline.
pub(crate) fn compare_specs(
    specs: &[VariantSpec],
    inputs_of: InputsOf<'_>,
    rules: &Rules,
    tokens: Option<u32>,
    top: usize,
) -> Result<Comparison, CompareError> {
    let inputs = specs.iter().map(|s| load_variant(s, inputs_of, rules, tokens)).collect::<Result<Vec<_>, _>>()?;
    compare(&inputs, top)
}

fn median_of(xs: &[f64]) -> f64 {
    crate::stats::median(xs).unwrap_or(0.0)
}

fn median_some(xs: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    let v: Option<Vec<f64>> = xs.collect();
    v.and_then(|v| crate::stats::median(&v))
}

pub(crate) fn compare(variants: &[VariantInput], top: usize) -> Result<Comparison, CompareError> {
    if variants.len() < 2 {
        return Err(CompareError::TooFew);
    }
    for (i, v) in variants.iter().enumerate() {
        if variants[..i].iter().any(|w| w.label == v.label) {
            return Err(CompareError::DuplicateLabel(v.label.clone()));
        }
    }
    let lengths: Vec<(String, u32)> = variants
        .iter()
        .flat_map(|v| v.attributions.iter().filter_map(|a| a.output_tokens.map(|t| (v.label.clone(), t))))
        .collect();
    if lengths.windows(2).any(|w| w[0].1 != w[1].1) {
        let mut list: Vec<String> = lengths.iter().map(|(l, t)| format!("{l}: {t}")).collect();
        list.dedup();
        return Err(CompareError::TokensDiffer(list.join(", ")));
    }

    let columns: Vec<VariantColumn> = variants
        .iter()
        .map(|v| {
            let busy = median_some(v.attributions.iter().map(|a| a.gpu_busy_ms_per_token));
            let traced = crate::stats::median(&v.traced_ms_per_token);
            VariantColumn {
                label: v.label.clone(),
                trace: v.first().trace.clone(),
                window_method: v.first().window.method,
                output_tokens: v.first().output_tokens,
                measured_ms_per_token: v.measured_ms_per_token,
                measured_from: v.measured_from.clone(),
                traced_gpu_ms_per_token: median_some(v.attributions.iter().map(|a| a.gpu_ms_per_token)),
                gpu_busy_ms_per_token: busy,
                unattributed_ms_per_token: busy.map(|g| v.measured_ms_per_token - g),
                traced_samples: v.attributions.len(),
                traced_decode_ms_per_token: traced,
                tracer_overhead_pct: traced.map(|t| 100.0 * (t / v.measured_ms_per_token - 1.0)),
                measured_samples: if v.attributions.len() > 1 { v.measured_samples.clone() } else { Vec::new() },
            }
        })
        .collect();
    let measured: Vec<f64> = variants.iter().map(|v| v.measured_ms_per_token).collect();
    let measured_delta: Vec<f64> = measured.iter().map(|m| m - measured[0]).collect();
    let deltas = |values: &[f64]| values.iter().map(|x| x - values[0]).collect::<Vec<f64>>();
    let share_of = |d: &[f64]| -> Vec<Option<f64>> {
        d.iter()
            .zip(&measured_delta)
            .map(|(x, total)| if total.abs() > NEGLIGIBLE_MS { Some(x / total) } else { None })
            .collect()
    };

    // Categories: every one seen in any variant, in order of their largest scaled time.
    let mut order: Vec<String> = Vec::new();
    for a in variants.iter().flat_map(|v| &v.attributions) {
        for c in &a.categories {
            if !order.contains(&c.category) {
                order.push(c.category.clone());
            }
        }
    }
    // Each traced sample's share of its busy time; their median scaled by the measured ms/token.
    let shares_of = |v: &VariantInput, cat: &str| -> Vec<f64> {
        v.attributions
            .iter()
            .map(|a| a.categories.iter().find(|c| c.category == cat).map_or(0.0, |c| c.exclusive_share.unwrap_or(0.0)))
            .collect()
    };
    let mut categories: Vec<CategoryRow> = order
        .iter()
        .map(|cat| {
            let shares: Vec<Vec<f64>> = variants.iter().map(|v| shares_of(v, cat)).collect();
            let ms: Vec<f64> =
                shares.iter().zip(variants).map(|(s, v)| median_of(s) * v.measured_ms_per_token).collect();
            let delta = deltas(&ms);
            CategoryRow { category: cat.clone(), share_of_delta: share_of(&delta), delta, ms_per_token: ms, shares }
        })
        .collect();
    categories.sort_by(|a, b| {
        let max = |r: &CategoryRow| r.ms_per_token.iter().cloned().fold(0.0, f64::max);
        max(b).total_cmp(&max(a))
    });

    let unattributed_delta: Vec<Option<f64>> = {
        let u: Vec<Option<f64>> = columns.iter().map(|c| c.unattributed_ms_per_token).collect();
        u.iter().map(|x| x.zip(u[0]).map(|(a, b)| a - b)).collect()
    };

    Ok(Comparison {
        moved_kernels: moved_kernels(variants, top),
        share_basis: ShareBasis::Exclusive,
        variants: columns,
        categories,
        measured_delta,
        unattributed_delta,
    })
}

/// Kernels matched across variants by function name (instantiations merged), ordered by the
/// largest change against the baseline; with several traced samples, each figure is the median
/// over them.
fn moved_kernels(variants: &[VariantInput], top: usize) -> Vec<MovedKernel> {
    struct Entry {
        category: String,
        /// Per variant, per traced sample.
        share: Vec<Vec<f64>>,
        /// Per variant: the dominant instantiation and every instantiation seen.
        names: Vec<Option<(String, Vec<String>)>>,
    }
    let n = variants.len();
    let mut by_base: HashMap<String, Entry> = HashMap::new();
    let mut order: Vec<String> = Vec::new();
    for (i, v) in variants.iter().enumerate() {
        for (r, a) in v.attributions.iter().enumerate() {
            // Kernel lines come most-time first, so the first instantiation seen dominates.
            for k in &a.kernels {
                let e = by_base.entry(k.base_name.clone()).or_insert_with(|| {
                    order.push(k.base_name.clone());
                    Entry {
                        category: k.category.clone(),
                        share: variants.iter().map(|v| vec![0.0; v.attributions.len()]).collect(),
                        names: vec![None; n],
                    }
                });
                e.share[i][r] += k.exclusive_share.unwrap_or(0.0);
                match &mut e.names[i] {
                    Some((_, seen)) => {
                        if !seen.contains(&k.name) {
                            seen.push(k.name.clone())
                        }
                    }
                    slot @ None => *slot = Some((k.name.clone(), vec![k.name.clone()])),
                }
            }
        }
    }
    let mut rows: Vec<MovedKernel> = order
        .into_iter()
        .map(|base| {
            let e = by_base.remove(&base).expect("every ordered name has an entry");
            let ms: Vec<f64> =
                e.share.iter().zip(variants).map(|(s, v)| median_of(s) * v.measured_ms_per_token).collect();
            let delta: Vec<f64> = ms.iter().map(|x| x - ms[0]).collect();
            let names = e
                .names
                .into_iter()
                .map(|o| {
                    o.map(
                        |(name, seen)| {
                            if seen.len() > 1 {
                                format!("{name} (+{} more)", seen.len() - 1)
                            } else {
                                name
                            }
                        },
                    )
                })
                .collect();
            MovedKernel { kernel: base, category: e.category, names, ms_per_token: ms, delta }
        })
        .filter(|r| r.delta.iter().any(|d| d.abs() > NEGLIGIBLE_MS))
        .collect();
    let biggest = |r: &MovedKernel| r.delta.iter().fold(0.0f64, |m, d| m.max(d.abs()));
    rows.sort_by(|a, b| biggest(b).total_cmp(&biggest(a)).then_with(|| a.kernel.cmp(&b.kernel)));
    rows.truncate(top);
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variant_specs_parse_with_and_without_a_number() {
        let v: VariantSpec = "f16=/tmp/tr/f16:15.444".parse().unwrap();
        assert_eq!(v, VariantSpec { label: "f16".into(), trace: "/tmp/tr/f16".into(), ms_per_token: Some(15.444) });
        let v: VariantSpec = "q4=/tmp/tr/q4".parse().unwrap();
        assert_eq!(v.ms_per_token, None);
        let v: VariantSpec = "x=C:/odd:path/t.db".parse().unwrap();
        assert_eq!((v.trace, v.ms_per_token), (PathBuf::from("C:/odd:path/t.db"), None));
        for bad in ["nolabel", "=x:1", "a=", "a=/t:-1", "a=/t:0"] {
            assert!(bad.parse::<VariantSpec>().is_err(), "{bad}");
        }
    }
}
