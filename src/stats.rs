//! The plain descriptive statistics every floor uses (summaries, telemetry phases, trace
//! manifests, Pi studies). Non-finite values are ignored: a NaN from a zero-length interval must
//! not poison a median.

/// Fewest usable values a side (and blocks holding both, for the paired interval) that get an
/// interval and a verdict: below 3, a t-interval's spread rests on one degree of freedom a side
/// and simulated A/A studies give 8–13% false verdicts (docs/methodology.md §8). Here, below the
/// summary, so that a study file can refuse a plan that could never reach it.
pub(crate) const MIN_VALUES: usize = 3;

pub(crate) fn mean(xs: &[f64]) -> Option<f64> {
    let mut n = 0usize;
    let mut sum = 0.0;
    for x in xs.iter().filter(|x| x.is_finite()) {
        n += 1;
        sum += x;
    }
    (n > 0).then(|| sum / n as f64)
}

/// The middle value; the mean of the middle two for an even count.
pub fn median(xs: &[f64]) -> Option<f64> {
    let mut v: Vec<f64> = xs.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 })
}

/// Sample standard deviation (n − 1).
pub(crate) fn stdev(xs: &[f64]) -> Option<f64> {
    let m = mean(xs)?;
    let v: Vec<f64> = xs.iter().copied().filter(|x| x.is_finite()).collect();
    (v.len() > 1).then(|| (v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (v.len() - 1) as f64).sqrt())
}

/// The coefficient of variation of `xs`, in %: the sample standard deviation over the mean (at
/// least 2 values, a positive mean). The per-sample noise every summary prints beside a median.
pub(crate) fn cv_pct(xs: &[f64]) -> Option<f64> {
    let m = mean(xs).filter(|m| *m > 0.0)?;
    Some(100.0 * stdev(xs)? / m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_even_and_empty() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&[f64::NAN]), None);
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[1.0, f64::NAN, 3.0]), Some(2.0));
    }

    #[test]
    fn mean_and_stdev() {
        assert_eq!(mean(&[1.0, 2.0, 3.0, f64::INFINITY]), Some(2.0));
        assert_eq!(mean(&[]), None);
        assert_eq!(stdev(&[2.0, 4.0]), Some(2f64.sqrt()));
        assert_eq!(stdev(&[2.0]), None);
    }

    #[test]
    fn cv_is_stdev_over_mean_in_percent() {
        // mean 100, sample stdev 10: 10%.
        let cv = cv_pct(&[90.0, 100.0, 110.0]).unwrap();
        assert!((cv - 10.0).abs() < 1e-12, "{cv}");
        assert_eq!(cv_pct(&[5.0, 5.0, f64::NAN]), Some(0.0), "non-finite values are ignored");
        assert_eq!(cv_pct(&[100.0]), None, "one value has no spread");
        assert_eq!(cv_pct(&[-1.0, 1.0]), None, "no CV without a positive mean");
    }
}
