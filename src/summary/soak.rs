//! The soak's rate per request (docs/methodology.md §4.2): for each request of the sequence, the
//! median over a variant's accepted samples of its decode and prefill rate and of the telemetry
//! in its span (device temperature at its start, power and gfx clock over it, where measured);
//! and the drift: per sample, the least-squares slope of the log decode rate over requests 2 to N
//! (the first is also the cold server's first decode, whose warm-up is not heat), as the fitted
//! change from request 2 to N, and its t-interval across samples.
use crate::measure::sequence::SequenceRequest;
use crate::measure::Sample;
use crate::stats::median;
use crate::telemetry::sampler::TelemetrySample;
use crate::telemetry::Reading;
use serde::{Deserialize, Serialize};

use super::t_test;
use super::windows::reading_median;

/// One request of the soak, medians over the accepted samples.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct SoakRequestLine {
    /// 1-based position in the sequence.
    pub(crate) request: usize,
    pub(crate) decode_tps: Option<f64>,
    pub(crate) prefill_tps: Option<f64>,
    /// The hottest device sensor at the request's start (the last reading before it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) start_temp_c: Option<f64>,
    /// Medians of the readings inside the request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) power_w: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) gfx_clock_mhz: Option<f64>,
}

/// One variant's soak.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct SoakFigures {
    pub(crate) requests: Vec<SoakRequestLine>,
    /// Per accepted sample: the fitted change of the decode rate from request 2 to N, %
    /// (`100 × (exp(slope × (N − 2)) − 1)`, the slope of ln(rate) per request over 2..N).
    pub(crate) drift_pct: Vec<f64>,
    pub(crate) drift_pct_median: Option<f64>,
    /// The 95% t-interval of the mean slope across samples (3 or more), as the same change.
    pub(crate) drift_ci_pct: Option<[f64; 2]>,
}

/// What one sample's request `r` saw: (decode, prefill, start temperature, power, clock).
type RequestReading = [Option<f64>; 5];

fn reading_of(r: &SequenceRequest, series: &[TelemetrySample]) -> RequestReading {
    let (start, end) = (r.start_mono_ns, r.end_mono_ns);
    let start_temp =
        start.and_then(|a| series.iter().rev().find(|s| s.at.mono_ns <= a).and_then(|s| s.reading.hottest_c()));
    let over = |f: fn(&Reading) -> Option<f64>| start.zip(end).and_then(|(a, b)| reading_median(series, a, b, f));
    [r.decode_tps(), r.prefill_tps(), start_temp, over(|x| x.power_w.or(x.power_avg_w)), over(|x| x.gfx_clock_mhz)]
}

/// The soak of `samples` (a variant's accepted ones, each with its telemetry series, empty where
/// none was recorded); `None` when none ran the soak.
pub(crate) fn figures(samples: &[(&Sample, Vec<TelemetrySample>)]) -> Option<SoakFigures> {
    let runs: Vec<(&[SequenceRequest], &[TelemetrySample])> = samples
        .iter()
        .filter_map(|(s, series)| s.extra.soak.as_ref().map(|k| (k.requests.as_slice(), series.as_slice())))
        .collect();
    if runs.is_empty() {
        return None;
    }
    let readings: Vec<Vec<RequestReading>> =
        runs.iter().map(|(reqs, series)| reqs.iter().map(|r| reading_of(r, series)).collect()).collect();
    let n = readings.iter().map(Vec::len).max().unwrap_or(0);
    let med =
        |i: usize, k: usize| median(&readings.iter().filter_map(|r| r.get(i).and_then(|x| x[k])).collect::<Vec<_>>());
    let requests = (0..n)
        .map(|i| SoakRequestLine {
            request: i + 1,
            decode_tps: med(i, 0),
            prefill_tps: med(i, 1),
            start_temp_c: med(i, 2),
            power_w: med(i, 3),
            gfx_clock_mhz: med(i, 4),
        })
        .collect();
    let slopes: Vec<f64> = readings.iter().filter_map(|r| log_slope(&r[1.min(r.len())..])).collect();
    // The slope as the change it fits over requests 2..N.
    let span = n.saturating_sub(2) as f64;
    let pct = |slope: f64| 100.0 * (slope * span).exp_m1();
    let drift_ci_pct = (slopes.len() >= 3).then(|| {
        let (lo, hi) = t_test::one_sample(&slopes).interval(0.05);
        [pct(lo), pct(hi)]
    });
    let drift_pct: Vec<f64> = slopes.iter().map(|&b| pct(b)).collect();
    Some(SoakFigures { requests, drift_pct_median: median(&drift_pct), drift_pct, drift_ci_pct })
}

/// The least-squares slope of ln(decode rate) against the request's position, over `requests`
/// (each request's reading, in order); `None` below two requests with a rate.
fn log_slope(requests: &[RequestReading]) -> Option<f64> {
    let points: Vec<(f64, f64)> = requests
        .iter()
        .enumerate()
        .filter_map(|(k, r)| r[0].filter(|&v| v > 0.0).map(|v| (k as f64, v.ln())))
        .collect();
    if points.len() < 2 {
        return None;
    }
    let n = points.len() as f64;
    let (mx, my) = (points.iter().map(|p| p.0).sum::<f64>() / n, points.iter().map(|p| p.1).sum::<f64>() / n);
    let sxx: f64 = points.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    (sxx > 0.0).then(|| sxy / sxx)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::Stamp;
    use crate::measure::soak::SoakRun;
    use crate::measure::SampleExtra;

    fn request(i: usize, decode_ms: f64, start: u64) -> SequenceRequest {
        SequenceRequest {
            name: crate::measure::soak::request_name(i),
            wall_ms: Some(1000.0),
            start_mono_ns: Some(start),
            end_mono_ns: Some(start + 1_000_000_000),
            finish_reason: Some("length".into()),
            completion_tokens: Some(512),
            prompt_tokens: Some(20_000),
            prompt_n: Some(20_000),
            prompt_ms: Some(2000.0),
            predicted_n: Some(512),
            predicted_ms: Some(decode_ms),
            draft_n: 0,
            draft_n_accepted: 0,
        }
    }

    fn reading(at_s: u64, temp: f64, power: f64) -> TelemetrySample {
        TelemetrySample {
            at: Stamp { mono_ns: at_s * 1_000_000_000, boot_ns: 0 },
            late_ns: 0,
            reading: Reading { temp_gpu_c: Some(temp), power_w: Some(power), ..Reading::default() },
        }
    }

    fn sample(decode_ms: &[f64]) -> Sample {
        let requests =
            decode_ms.iter().enumerate().map(|(i, &ms)| request(i, ms, (2 * i as u64 + 1) * 1_000_000_000)).collect();
        let extra = SampleExtra { soak: Some(SoakRun { requests }), ..SampleExtra::default() };
        crate::summary::rules::tests::sample(extra)
    }

    #[test]
    fn the_slope_is_the_least_squares_one_of_the_log_rate() {
        let r = |v: f64| [Some(v), None, None, None, None];
        let falling: Vec<RequestReading> = (0..6).map(|k| r(300.0 * (-0.01 * k as f64).exp())).collect();
        assert!((log_slope(&falling).unwrap() + 0.01).abs() < 1e-12);
        // A slow first reading moves the fit less than it moves a last-vs-first ratio.
        let mut noisy = falling.clone();
        noisy[5] = r(300.0 * (-0.05_f64 - 0.1).exp());
        assert!(log_slope(&noisy).unwrap() > (-0.15 - 0.0) / 5.0);
        assert!(log_slope(&falling[..1]).is_none() && log_slope(&[]).is_none());
        assert!(log_slope(&[r(0.0), r(-1.0)]).is_none(), "no rate, no slope");
    }

    #[test]
    fn the_rate_per_request_and_the_drift_of_a_decode_that_slows_as_it_heats() {
        // Three samples whose decode slows request by request (1000 → 1100 ms for 512 tokens); the
        // drift is fitted over requests 2 and 3, the first being the cold server's warm-up.
        let series: Vec<TelemetrySample> =
            (0..8).map(|s| reading(s, 40.0 + 5.0 * s as f64, 300.0 + s as f64)).collect();
        let samples =
            [sample(&[1000.0, 1050.0, 1100.0]), sample(&[1000.0, 1040.0, 1100.0]), sample(&[990.0, 1060.0, 1100.0])];
        let with: Vec<(&Sample, Vec<TelemetrySample>)> = samples.iter().map(|s| (s, series.clone())).collect();
        let f = figures(&with).unwrap();
        assert_eq!(f.requests.len(), 3);
        assert!((f.requests[0].decode_tps.unwrap() - 512.0).abs() < 1e-9, "{:?}", f.requests[0]);
        assert!((f.requests[2].decode_tps.unwrap() - 512.0 / 1.1).abs() < 1e-9);
        assert_eq!(f.requests[0].prefill_tps, Some(10_000.0));
        // Request k starts at 2k+1 s: the reading at its start (2k+1 s) and its one reading inside.
        assert_eq!(f.requests.iter().map(|r| r.start_temp_c.unwrap()).collect::<Vec<_>>(), [45.0, 55.0, 65.0]);
        assert_eq!(f.requests[1].power_w, Some(303.5));
        let drift = f.drift_pct_median.unwrap();
        assert!((drift - (100.0 * 1050.0 / 1100.0 - 100.0)).abs() < 1e-9, "{drift}");
        let [lo, hi] = f.drift_ci_pct.unwrap();
        assert!(lo < drift && drift < hi && hi < 0.0, "{lo} {hi}");
        // No telemetry (the CPU test bed): the rates alone, no readings.
        let bare: Vec<(&Sample, Vec<TelemetrySample>)> = samples.iter().map(|s| (s, Vec::new())).collect();
        let f = figures(&bare).unwrap();
        assert!(f.requests.iter().all(|r| r.start_temp_c.is_none() && r.power_w.is_none() && r.decode_tps.is_some()));
        // Two samples: no interval; no soak sample: no figures.
        assert!(figures(&with[..2]).unwrap().drift_ci_pct.is_none());
        let plain = crate::summary::rules::tests::sample(SampleExtra::default());
        assert!(figures(&[(&plain, Vec::new())]).is_none());
    }
}
