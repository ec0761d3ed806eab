//! Decode under heat (docs/methodology.md §9.8): each sample's decode rate in windows of
//! [`WINDOW_TOKENS`] streamed tokens, the gfx clock, power and temperature over each window where
//! the telemetry measured them, and the sag from the first window to the last with the signal that
//! showed a throttle. From the streamed token times alone, so it works on a host without telemetry.
use crate::telemetry::sampler::TelemetrySample;
use crate::telemetry::Reading;
use serde::{Deserialize, Serialize};

use super::stats::median;

/// Tokens per window: enough inter-token gaps that one slow step moves a window's rate by about 3%.
pub(crate) const WINDOW_TOKENS: usize = 32;

/// A last window this much slower than the first is a sagging decode (docs/methodology.md §9.8).
pub(crate) const SAG_THROTTLED_PCT: f64 = 10.0;

/// One window of a decode.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub(crate) struct DecodeWindow {
    /// The window's first token, ms after the decode's first token.
    pub(crate) start_ms: f64,
    pub(crate) end_ms: f64,
    /// [`WINDOW_TOKENS`] over the window's duration.
    pub(crate) tokens_per_s: f64,
    /// Medians of the readings inside the window, where the source measured them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) gfx_clock_mhz: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) power_w: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) temp_c: Option<f64>,
}

/// One sample's windows and their sag.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub(crate) struct SampleWindows {
    /// The study index, 1-based.
    pub(crate) index: usize,
    pub(crate) windows: Vec<DecodeWindow>,
    /// `100 × (last window's rate ÷ first's − 1)`; None below 2 windows.
    pub(crate) sag_pct: Option<f64>,
    /// The same change of the windows' median gfx clock, where measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) clock_change_pct: Option<f64>,
    /// The signals that showed a throttle: "decode rate" (sag below −[`SAG_THROTTLED_PCT`]%),
    /// "gfx clock" (the decode clock's minimum more than 10% below the study's median, §9.5), or
    /// the firmware's limits whose throttle residency rose during decode ("fast PPT", §9.5).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) throttled_by: Vec<String>,
}

/// The median of `f` over the readings of `series` from `a` to `b` (CLOCK_MONOTONIC ns).
pub(crate) fn reading_median(
    series: &[TelemetrySample],
    a: u64,
    b: u64,
    f: fn(&Reading) -> Option<f64>,
) -> Option<f64> {
    median(
        &series
            .iter()
            .filter(|s| s.at.mono_ns >= a && s.at.mono_ns <= b)
            .filter_map(|s| f(&s.reading))
            .collect::<Vec<_>>(),
    )
}

/// The decode windows of the token times `tokens` (ns, CLOCK_MONOTONIC), each with the median
/// readings of `series` inside it: window k spans tokens 32k to 32(k+1), 32 inter-token gaps.
pub(crate) fn decode_windows(tokens: &[u64], series: &[TelemetrySample]) -> Vec<DecodeWindow> {
    let Some(&t0) = tokens.first() else { return Vec::new() };
    let ms = |t: u64| t.saturating_sub(t0) as f64 / 1e6;
    (0..tokens.len().saturating_sub(1) / WINDOW_TOKENS)
        .filter_map(|k| {
            let (a, b) = (tokens[k * WINDOW_TOKENS], tokens[(k + 1) * WINDOW_TOKENS]);
            (b > a).then(|| DecodeWindow {
                start_ms: ms(a),
                end_ms: ms(b),
                tokens_per_s: WINDOW_TOKENS as f64 / ((b - a) as f64 / 1e9),
                gfx_clock_mhz: reading_median(series, a, b, |r| r.gfx_clock_mhz),
                power_w: reading_median(series, a, b, |r| r.power_w.or(r.power_avg_w)),
                temp_c: reading_median(series, a, b, |r| r.hottest_c()),
            })
        })
        .collect()
}

/// A sample's windows with the sag and the throttle signals; `throttled_by` is §9.5's verdict on
/// its decode (the firmware's limits, or "gfx clock").
pub(crate) fn sample_windows(index: usize, windows: Vec<DecodeWindow>, throttled_by: Vec<String>) -> SampleWindows {
    let change = |f: fn(&DecodeWindow) -> Option<f64>| match (windows.first(), windows.last()) {
        (Some(a), Some(b)) if windows.len() >= 2 => {
            f(a).zip(f(b)).filter(|(x, _)| *x > 0.0).map(|(x, y)| super::stats::pct_change(x, y))
        }
        _ => None,
    };
    let sag_pct = change(|w| Some(w.tokens_per_s));
    let clock_change_pct = change(|w| w.gfx_clock_mhz);
    let mut signals = Vec::new();
    if sag_pct.is_some_and(|s| s < -SAG_THROTTLED_PCT) {
        signals.push("decode rate".to_string());
    }
    signals.extend(throttled_by);
    let throttled_by = signals;
    SampleWindows { index, windows, sag_pct, clock_change_pct, throttled_by }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::Stamp;

    const MS: u64 = 1_000_000;

    /// 128 tokens: 10 ms apart for the first 64, 12.5 ms after (the rate falls from 100 to
    /// 80 tok/s), the clock 2000 MHz then 1600 MHz.
    fn tokens() -> Vec<u64> {
        let mut t = vec![0u64];
        for i in 1..128u64 {
            t.push(t[i as usize - 1] + if i <= 64 { 10 * MS } else { 12_500_000 });
        }
        t
    }

    #[test]
    fn windows_of_32_tokens_give_the_rate_and_the_readings_inside_them() {
        let t = tokens();
        let series: Vec<TelemetrySample> = (0..200)
            .map(|i| TelemetrySample {
                at: Stamp { mono_ns: i * 10 * MS, boot_ns: i * 10 * MS },
                late_ns: 0,
                reading: Reading {
                    gfx_clock_mhz: Some(if i * 10 < 640 { 2000.0 } else { 1600.0 }),
                    power_w: Some(300.0),
                    ..Default::default()
                },
            })
            .collect();
        let w = decode_windows(&t, &series);
        // 127 gaps: three full windows of 32 (the last 31 gaps make none).
        assert_eq!(w.len(), 3);
        assert!((w[0].tokens_per_s - 100.0).abs() < 1e-9 && (w[2].tokens_per_s - 80.0).abs() < 1e-9, "{w:?}");
        assert_eq!((w[0].gfx_clock_mhz, w[2].gfx_clock_mhz), (Some(2000.0), Some(1600.0)));
        assert_eq!(w[1].power_w, Some(300.0));
        let s = sample_windows(4, w, Vec::new());
        assert!((s.sag_pct.unwrap() + 20.0).abs() < 1e-9);
        assert!((s.clock_change_pct.unwrap() + 20.0).abs() < 1e-9);
        assert_eq!(s.throttled_by, ["decode rate"]);
    }

    #[test]
    fn the_streamed_tokens_alone_give_windows_and_a_short_decode_none() {
        let w = decode_windows(&tokens(), &[]);
        assert_eq!(w.len(), 3);
        assert!(w.iter().all(|x| x.gfx_clock_mhz.is_none() && x.power_w.is_none()));
        let s = sample_windows(1, w, vec!["gfx clock".into()]);
        assert_eq!(s.clock_change_pct, None);
        assert_eq!(s.throttled_by, ["decode rate", "gfx clock"]);
        assert!(decode_windows(&tokens()[..32], &[]).is_empty(), "31 gaps make no window");
        let one = sample_windows(1, decode_windows(&tokens()[..40], &[]), Vec::new());
        assert_eq!((one.windows.len(), one.sag_pct), (1, None));
    }
}
