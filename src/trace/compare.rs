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
use super::{resolve_input, TraceError};

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
    pub(crate) attribution: Attribution,
    pub(crate) measured_ms_per_token: f64,
    pub(crate) measured_from: String,
}

/// Reads a variant's trace and finds its measured ms/token (given, or from the manifest).
pub(crate) fn load_variant(
    spec: &VariantSpec,
    rules: &Rules,
    tokens: Option<u32>,
) -> Result<VariantInput, CompareError> {
    let label = spec.label.clone();
    let wrap = |source| CompareError::Trace { label: label.clone(), source };
    let input = resolve_input(&spec.trace).map_err(wrap)?;
    let (measured, from) =
        match (spec.ms_per_token, input.manifest.as_ref().and_then(|m| m.untraced.as_ref().map(|u| (m, u)))) {
            (Some(v), _) => (v, "given on the command line".to_string()),
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
                )
            }
            (None, None) => return Err(CompareError::NoMeasurement { label }),
        };
    let attribution = crate::trace::analyze_with(&input, rules, tokens, true).map_err(wrap)?;
    Ok(VariantInput { label: spec.label.clone(), attribution, measured_ms_per_token: measured, measured_from: from })
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
    rules: &Rules,
    tokens: Option<u32>,
    top: usize,
) -> Result<Comparison, CompareError> {
    let inputs = specs.iter().map(|s| load_variant(s, rules, tokens)).collect::<Result<Vec<_>, _>>()?;
    compare(&inputs, top)
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
    let lengths: Vec<(String, u32)> =
        variants.iter().filter_map(|v| v.attribution.output_tokens.map(|t| (v.label.clone(), t))).collect();
    if lengths.windows(2).any(|w| w[0].1 != w[1].1) {
        let list = lengths.iter().map(|(l, t)| format!("{l}: {t}")).collect::<Vec<_>>().join(", ");
        return Err(CompareError::TokensDiffer(list));
    }

    let columns: Vec<VariantColumn> = variants
        .iter()
        .map(|v| VariantColumn {
            label: v.label.clone(),
            trace: v.attribution.trace.clone(),
            window_method: v.attribution.window.method,
            output_tokens: v.attribution.output_tokens,
            measured_ms_per_token: v.measured_ms_per_token,
            measured_from: v.measured_from.clone(),
            traced_gpu_ms_per_token: v.attribution.gpu_ms_per_token,
            gpu_busy_ms_per_token: v.attribution.gpu_busy_ms_per_token,
            unattributed_ms_per_token: v.attribution.gpu_busy_ms_per_token.map(|g| v.measured_ms_per_token - g),
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
    for v in variants {
        for c in &v.attribution.categories {
            if !order.contains(&c.category) {
                order.push(c.category.clone());
            }
        }
    }
    let scaled_category = |v: &VariantInput, cat: &str| {
        v.attribution
            .categories
            .iter()
            .find(|c| c.category == cat)
            .map_or(0.0, |c| c.exclusive_share.unwrap_or(0.0) * v.measured_ms_per_token)
    };
    let mut categories: Vec<CategoryRow> = order
        .iter()
        .map(|cat| {
            let ms: Vec<f64> = variants.iter().map(|v| scaled_category(v, cat)).collect();
            let delta = deltas(&ms);
            CategoryRow { category: cat.clone(), share_of_delta: share_of(&delta), delta, ms_per_token: ms }
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
/// largest change against the baseline.
fn moved_kernels(variants: &[VariantInput], top: usize) -> Vec<MovedKernel> {
    struct Entry {
        category: String,
        share: Vec<f64>,
        /// Per variant: (dominant instantiation, number of instantiations).
        names: Vec<Option<(String, usize)>>,
    }
    let n = variants.len();
    let mut by_base: HashMap<String, Entry> = HashMap::new();
    let mut order: Vec<String> = Vec::new();
    for (i, v) in variants.iter().enumerate() {
        // Kernel lines come most-time first, so the first instantiation seen dominates.
        for k in &v.attribution.kernels {
            let e = by_base.entry(k.base_name.clone()).or_insert_with(|| {
                order.push(k.base_name.clone());
                Entry { category: k.category.clone(), share: vec![0.0; n], names: vec![None; n] }
            });
            e.share[i] += k.exclusive_share.unwrap_or(0.0);
            match &mut e.names[i] {
                Some((_, count)) => *count += 1,
                slot @ None => *slot = Some((k.name.clone(), 1)),
            }
        }
    }
    let mut rows: Vec<MovedKernel> = order
        .into_iter()
        .map(|base| {
            let e = by_base.remove(&base).expect("every ordered name has an entry");
            let ms: Vec<f64> = e.share.iter().zip(variants).map(|(s, v)| s * v.measured_ms_per_token).collect();
            let delta: Vec<f64> = ms.iter().map(|x| x - ms[0]).collect();
            let names = e
                .names
                .into_iter()
                .map(|o| o.map(|(name, count)| if count > 1 { format!("{name} (+{} more)", count - 1) } else { name }))
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
