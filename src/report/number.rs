//! How the reports print one number: the placeholder for a missing one, decimals, signed
//! changes, intervals and p-values, the same in every renderer.

/// What a missing or non-finite number prints as.
pub(crate) const NONE: &str = "—";

/// A number to `digits` decimals, or [`NONE`].
pub(crate) fn num(v: Option<f64>, digits: usize) -> String {
    v.filter(|x| x.is_finite()).map_or_else(|| NONE.into(), |x| format!("{x:.digits$}"))
}

/// Every run of a metric for people: each at the metric's decimals, space-separated
/// (`259.19 275.91`). The machine formats carry the runs as numbers at full precision.
pub(crate) fn runs(values: &[f64], digits: usize) -> String {
    values.iter().map(|x| format!("{x:.digits$}")).collect::<Vec<_>>().join(" ")
}

/// A signed % change to two decimals (`+3.94%`), or [`NONE`].
pub(crate) fn signed_pct(v: Option<f64>) -> String {
    v.filter(|x| x.is_finite()).map_or_else(|| NONE.into(), |x| format!("{x:+.2}%"))
}

/// A change's confidence interval as `[-18.65%, +20.55%]`, or [`NONE`].
pub(crate) fn ci_pct(ci: Option<crate::summary::stats::ChangeCi>) -> String {
    ci.map_or_else(|| NONE.into(), |c| format!("[{:+.2}%, {:+.2}%]", c.lo_pct, c.hi_pct))
}

/// A p-value to four decimals (`<0.0001` below that), or [`NONE`].
pub(crate) fn p_value(p: Option<f64>) -> String {
    match p {
        Some(x) if x < 0.0001 => "<0.0001".into(),
        Some(x) => format!("{x:.4}"),
        None => NONE.into(),
    }
}

/// A per-sample coefficient of variation to two decimals (`1.23%`), or [`NONE`].
pub(crate) fn cv_pct(v: Option<f64>) -> String {
    v.filter(|x| x.is_finite()).map_or_else(|| NONE.into(), |x| format!("{x:.2}%"))
}
/// A phase's gfx clock as `min/median/max` MHz, or [`NONE`] where any is missing.
pub(crate) fn clock_range(min: Option<f64>, median: Option<f64>, max: Option<f64>) -> String {
    match (min, median, max) {
        (Some(a), Some(b), Some(c)) => format!("{a:.0}/{b:.0}/{c:.0}"),
        _ => NONE.into(),
    }
}
