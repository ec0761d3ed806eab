//! Splits one request's telemetry series into prefill (request start → first token) and decode
//! (first token → last token), with power, busy, temperature, clock spread, energy and J/token
//! per phase.
//!
//! Energy comes from the device's energy counter when it brackets the phase closely and only
//! ever rises; otherwise from the time integral (trapezoids) of power — the driver's own 20 ms
//! power samples where there are any in the phase, else the sampled power. `energy_from` says
//! which, because a counter difference and an integral of a filtered power value are not the
//! same measurement.
use crate::stats::{mean, median};
use serde::{Deserialize, Serialize};

use super::power_field::PowerField;
use super::sampler::{Series, TelemetrySample};
use super::{DriverPowerSample, Field};
use crate::clock::Stamp;

/// The request's timeline, as the client observed it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub(crate) struct RequestMarks {
    pub(crate) start: Stamp,
    pub(crate) first_token: Stamp,
    pub(crate) last_token: Stamp,
    pub(crate) prompt_tokens: u64,
    pub(crate) output_tokens: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Phase {
    Prefill,
    Decode,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum EnergyFrom {
    /// Increase of the device energy counter between its first and last update in the phase,
    /// scaled to the phase; only where those updates span most of it (see `COUNTER_MIN_SPAN`).
    Counter,
    /// Integral of the driver's own buffered power samples (NVML, 20 ms).
    DriverPowerIntegral,
    /// Integral of the sampled power (instant where the source has it, else averaged).
    PowerIntegral,
    /// No energy counter and no power in the series.
    Unavailable,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum PowerFrom {
    DriverSamples,
    Instant,
    Averaged,
    Unavailable,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct PhaseStats {
    pub(crate) phase: Phase,
    pub(crate) duration_s: f64,
    /// Telemetry samples inside the phase.
    pub(crate) samples: usize,
    /// Time-weighted mean (energy ÷ duration when energy comes from power).
    pub(crate) mean_power_w: Option<f64>,
    pub(crate) median_power_w: Option<f64>,
    pub(crate) power_from: PowerFrom,
    pub(crate) mean_busy_pct: Option<f64>,
    pub(crate) mean_cpu_pct: Option<f64>,
    pub(crate) peak_temp_c: Option<f64>,
    pub(crate) gfx_clock_min_mhz: Option<f64>,
    pub(crate) gfx_clock_median_mhz: Option<f64>,
    pub(crate) gfx_clock_max_mhz: Option<f64>,
    pub(crate) energy_j: Option<f64>,
    pub(crate) energy_from: EnergyFrom,
    /// Prompt tokens for prefill, output tokens for decode.
    pub(crate) tokens: u64,
    pub(crate) j_per_token: Option<f64>,
    /// The power the mean and (for an integral) the energy are of: whose, how averaged, from
    /// which field (docs/methodology.md §9.7); absent in records of earlier releases.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) power_field: Option<PowerField>,
    /// The phase is shorter than the time constant of that power's firmware filter: its mean
    /// still holds much of what came before it (docs/methodology.md §9.7).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) shorter_than_filter: bool,
    /// Each firmware throttle-residency counter's rise over the phase, where the source has them
    /// (an APU's gpu_metrics v3_0, docs/methodology.md §9.5); a limit that held the clocks down
    /// rose above 0. Empty elsewhere and in records of earlier releases.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) throttle: Vec<ThrottleResidency>,
    /// The integral of the gfx-only power over the phase, where the source reads it (an APU's
    /// `average_gfx_power`, docs/methodology.md §9.6): the socket's energy less the CPU cores'
    /// and the rest of the SoC's. Absent elsewhere and in records of earlier releases.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) gfx_energy_j: Option<f64>,
}

/// One throttle limit's residency over a phase: the rise of its counter, in the firmware's ticks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct ThrottleResidency {
    /// The limit, as a reader says it ("fast PPT", "gfx thermal").
    pub(crate) limit: String,
    pub(crate) ticks: f64,
}

impl PhaseStats {
    /// The limits whose residency rose over the phase; None where the source has no counters.
    pub(crate) fn throttling_limits(&self) -> Option<Vec<String>> {
        (!self.throttle.is_empty())
            .then(|| self.throttle.iter().filter(|t| t.ticks > 0.0).map(|t| t.limit.clone()).collect())
    }
}

/// Each throttle counter's rise from its last reading at or before `t0` (its first in the phase
/// where none came before) to its last at or before `t1`; a counter that fell (a reset, a wrap)
/// counts its last value alone.
fn throttle_residency(samples: &[TelemetrySample], t0: u64, t1: u64) -> Vec<ThrottleResidency> {
    let mut out = Vec::new();
    for (field, limit) in super::reading::THROTTLE_LIMITS {
        let points: Vec<(u64, f64)> =
            samples.iter().filter_map(|s| s.reading.get(field).map(|v| (s.at.mono_ns, v))).collect();
        let before = points.iter().rev().find(|p| p.0 <= t0).or_else(|| points.iter().find(|p| p.0 <= t1));
        let end = points.iter().rev().find(|p| p.0 <= t1);
        if let (Some(&(_, a)), Some(&(_, b))) = (before, end) {
            let ticks = if b >= a { b - a } else { b };
            out.push(ThrottleResidency { limit: limit.to_string(), ticks });
        }
    }
    out
}

/// What an energy figure is: its source, the power it integrates where it is an integral, and
/// whether a phase was shorter than that power's filter.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct EnergyBasis {
    pub(crate) from: EnergyFrom,
    pub(crate) power: Option<PowerField>,
    pub(crate) shorter_than_filter: bool,
}

impl From<EnergyFrom> for EnergyBasis {
    fn from(from: EnergyFrom) -> EnergyBasis {
        EnergyBasis { from, power: None, shorter_than_filter: false }
    }
}

impl PhaseStats {
    /// What this phase's energy is (docs/methodology.md §9.7).
    pub(crate) fn energy_basis(&self) -> EnergyBasis {
        let integral = matches!(self.energy_from, EnergyFrom::PowerIntegral | EnergyFrom::DriverPowerIntegral);
        EnergyBasis {
            from: self.energy_from,
            power: self.power_field.clone().filter(|_| integral),
            shorter_than_filter: integral && self.shorter_than_filter,
        }
    }
}

/// Prefill and decode statistics of one request.
pub(crate) fn split(
    samples: &[TelemetrySample],
    driver_power: &[DriverPowerSample],
    marks: &RequestMarks,
) -> [PhaseStats; 2] {
    [
        phase_stats(
            Phase::Prefill,
            samples,
            driver_power,
            marks.start.mono_ns,
            marks.first_token.mono_ns,
            marks.prompt_tokens,
        ),
        phase_stats(
            Phase::Decode,
            samples,
            driver_power,
            marks.first_token.mono_ns,
            marks.last_token.mono_ns,
            marks.output_tokens,
        ),
    ]
}

/// One window's statistics over a series' readings, `tokens` done in it: a llama-bench test's
/// (docs/methodology.md §4.4).
pub(crate) fn window_stats(samples: &[TelemetrySample], t0: u64, t1: u64, tokens: u64) -> PhaseStats {
    phase_stats(Phase::Decode, samples, &[], t0, t1, tokens)
}

/// `split` over a sampler's series (its samples and the driver's power samples), each phase's
/// power named by the fields the source said it fills.
pub(crate) fn split_series(series: &Series, marks: &RequestMarks) -> [PhaseStats; 2] {
    split(&series.samples, &series.driver_power, marks).map(|p| name_power(p, &series.stats.power_fields))
}

/// Names the power a phase's figures are of, and marks a phase shorter than its filter.
pub(crate) fn name_power(mut p: PhaseStats, fields: &[PowerField]) -> PhaseStats {
    let field = match p.power_from {
        PowerFrom::Instant => Field::PowerW,
        PowerFrom::Averaged => Field::PowerAvgW,
        PowerFrom::DriverSamples | PowerFrom::Unavailable => return p,
    };
    p.power_field = PowerField::of(fields, field).cloned();
    let filter_s = p.power_field.as_ref().and_then(|f| f.filter_ms).map(|ms| ms / 1000.0);
    p.shorter_than_filter = filter_s.is_some_and(|tau| p.duration_s < tau);
    p
}

/// Value at `t` from time-sorted points: linear between neighbours, held beyond the ends.
fn value_at(points: &[(u64, f64)], t: u64) -> Option<f64> {
    let i = points.partition_point(|p| p.0 < t);
    match (i.checked_sub(1).map(|j| points[j]), points.get(i)) {
        (Some(a), Some(b)) if b.0 > a.0 => Some(a.1 + (b.1 - a.1) * (t - a.0) as f64 / (b.0 - a.0) as f64),
        (_, Some(b)) => Some(b.1),
        (Some(a), None) => Some(a.1),
        (None, None) => None,
    }
}

/// ∫ power dt over [t0, t1] in J, by trapezoids through the points inside and the interpolated
/// values at both ends.
fn integral_j(points: &[(u64, f64)], t0: u64, t1: u64) -> Option<f64> {
    let mut path = vec![(t0, value_at(points, t0)?)];
    path.extend(points.iter().copied().filter(|p| p.0 > t0 && p.0 < t1));
    path.push((t1, value_at(points, t1)?));
    Some(path.windows(2).map(|w| (w[1].0 - w[0].0) as f64 / 1e9 * (w[0].1 + w[1].1) / 2.0).sum())
}

/// Of a phase, the part the counter's first and last update inside it must span for the counter
/// to be used. NVML's energy counter moves about once a second: across a 2.7 s prefill its
/// updates span 2 s at best, and the rest would be extrapolated.
const COUNTER_MIN_SPAN: f64 = 0.8;

/// Energy from the counter: its increase between the first and the last update seen inside the
/// phase (an update is a reading whose value differs from the one before), scaled to the whole
/// phase. Timing the updates, not the readings, keeps a slow counter's staleness out; `None`
/// where the updates span less than [`COUNTER_MIN_SPAN`] of the phase or the counter falls (a
/// wrap or a reset).
fn counter_energy_j(samples: &[TelemetrySample], t0: u64, t1: u64) -> Option<f64> {
    let with_energy: Vec<(u64, f64)> =
        samples.iter().filter_map(|s| s.reading.energy_j.map(|e| (s.at.mono_ns, e))).collect();
    if with_energy.windows(2).any(|w| w[1].1 < w[0].1) {
        return None;
    }
    let updates: Vec<(u64, f64)> =
        with_energy.windows(2).filter(|w| w[1].1 != w[0].1).map(|w| w[1]).filter(|p| p.0 >= t0 && p.0 <= t1).collect();
    let (a, b) = (updates.first()?, updates.last()?);
    if ((b.0 - a.0) as f64) < COUNTER_MIN_SPAN * (t1 - t0) as f64 {
        return None;
    }
    Some((b.1 - a.1) * (t1 - t0) as f64 / (b.0 - a.0) as f64)
}

/// The phases of several requests of one sample (a sequence, docs/methodology.md §4.2) as one
/// prefill and one decode: durations, samples, energies and tokens summed (energy only where
/// every request has it), means weighted by duration, the hottest peak, the clock's extremes, the
/// medians of the requests' medians, and the energy and power sources most requests used. `None` for none.
pub(crate) fn combined(parts: &[[PhaseStats; 2]]) -> Option<[PhaseStats; 2]> {
    let first = parts.first()?;
    Some([0, 1].map(|i| combine(first[i].phase, parts.iter().map(|p| &p[i]))))
}

fn combine<'a>(phase: Phase, parts: impl Iterator<Item = &'a PhaseStats> + Clone) -> PhaseStats {
    let duration_s: f64 = parts.clone().map(|p| p.duration_s).sum();
    let weighted = |f: fn(&PhaseStats) -> Option<f64>| -> Option<f64> {
        let (sum, dur) = parts
            .clone()
            .filter_map(|p| f(p).map(|x| (x * p.duration_s, p.duration_s)))
            .fold((0.0, 0.0), |a, b| (a.0 + b.0, a.1 + b.1));
        (dur > 0.0).then(|| sum / dur)
    };
    let medians = |f: fn(&PhaseStats) -> Option<f64>| median(&parts.clone().filter_map(f).collect::<Vec<_>>());
    let energy_j: Option<f64> = parts.clone().map(|p| p.energy_j).sum();
    let tokens: u64 = parts.clone().map(|p| p.tokens).sum();
    PhaseStats {
        phase,
        duration_s,
        samples: parts.clone().map(|p| p.samples).sum(),
        mean_power_w: energy_j
            .filter(|_| duration_s > 0.0)
            .map(|e| e / duration_s)
            .or_else(|| weighted(|p| p.mean_power_w)),
        median_power_w: medians(|p| p.median_power_w),
        power_from: majority(parts.clone().map(|p| p.power_from)).unwrap_or(PowerFrom::Unavailable),
        mean_busy_pct: weighted(|p| p.mean_busy_pct),
        mean_cpu_pct: weighted(|p| p.mean_cpu_pct),
        peak_temp_c: parts.clone().filter_map(|p| p.peak_temp_c).reduce(f64::max),
        gfx_clock_min_mhz: parts.clone().filter_map(|p| p.gfx_clock_min_mhz).reduce(f64::min),
        gfx_clock_median_mhz: medians(|p| p.gfx_clock_median_mhz),
        gfx_clock_max_mhz: parts.clone().filter_map(|p| p.gfx_clock_max_mhz).reduce(f64::max),
        energy_j,
        energy_from: if energy_j.is_some() {
            majority(parts.clone().map(|p| p.energy_from)).unwrap_or(EnergyFrom::Unavailable)
        } else {
            EnergyFrom::Unavailable
        },
        tokens,
        j_per_token: energy_j.filter(|_| tokens > 0).map(|e| e / tokens as f64),
        power_field: parts.clone().find_map(|p| p.power_field.clone()),
        shorter_than_filter: parts.clone().any(|p| p.shorter_than_filter),
        throttle: summed_throttle(parts.clone()),
        gfx_energy_j: parts.clone().map(|p| p.gfx_energy_j).sum(),
    }
}

/// Each limit's residency summed over parts (requests of a sequence, devices of a server).
fn summed_throttle<'a>(parts: impl Iterator<Item = &'a PhaseStats>) -> Vec<ThrottleResidency> {
    let mut out: Vec<ThrottleResidency> = Vec::new();
    for t in parts.flat_map(|p| p.throttle.iter()) {
        match out.iter_mut().find(|o| o.limit == t.limit) {
            Some(o) => o.ticks += t.ticks,
            None => out.push(t.clone()),
        }
    }
    out
}

/// One request's phases on several devices (a server on several GPUs, docs/methodology.md
/// §9.11) as the server's: energy and mean power summed (only where every device has them), busy
/// averaged over the devices, the hottest peak, the lowest clock minimum and median (the slowest
/// device paces a split model) and the highest maximum. Durations, samples and tokens are the
/// request's own, the first device's. There is no median power of the sum (each device's
/// median is its own), so it is left out. `None` for no device.
pub(crate) fn summed(devices: &[[PhaseStats; 2]]) -> Option<[PhaseStats; 2]> {
    let first = devices.first()?;
    Some([0, 1].map(|i| {
        let all = || devices.iter().map(move |d| &d[i]);
        let sum = |f: fn(&PhaseStats) -> Option<f64>| -> Option<f64> { all().map(f).sum() };
        let energy_j = sum(|p| p.energy_j);
        let tokens = first[i].tokens;
        PhaseStats {
            mean_power_w: sum(|p| p.mean_power_w),
            median_power_w: if devices.len() == 1 { first[i].median_power_w } else { None },
            power_from: majority(all().map(|p| p.power_from)).unwrap_or(PowerFrom::Unavailable),
            mean_busy_pct: mean(&all().filter_map(|p| p.mean_busy_pct).collect::<Vec<_>>()),
            peak_temp_c: all().filter_map(|p| p.peak_temp_c).reduce(f64::max),
            gfx_clock_min_mhz: all().filter_map(|p| p.gfx_clock_min_mhz).reduce(f64::min),
            gfx_clock_median_mhz: all().filter_map(|p| p.gfx_clock_median_mhz).reduce(f64::min),
            gfx_clock_max_mhz: all().filter_map(|p| p.gfx_clock_max_mhz).reduce(f64::max),
            energy_j,
            energy_from: match energy_j {
                Some(_) => majority(all().map(|p| p.energy_from)).unwrap_or(EnergyFrom::Unavailable),
                None => EnergyFrom::Unavailable,
            },
            j_per_token: energy_j.filter(|_| tokens > 0).map(|e| e / tokens as f64),
            throttle: summed_throttle(all()),
            gfx_energy_j: sum(|p| p.gfx_energy_j),
            ..first[i].clone()
        }
    }))
}

/// The value most of `all` hold; a tie goes to the one that came first.
fn majority<T: Copy + PartialEq>(all: impl Iterator<Item = T>) -> Option<T> {
    let all: Vec<T> = all.collect();
    let count = |x: &T| all.iter().filter(|y| *y == x).count();
    all.iter().copied().fold(None, |best: Option<T>, x| match best {
        Some(b) if count(&b) >= count(&x) => Some(b),
        _ => Some(x),
    })
}

fn phase_stats(
    phase: Phase,
    samples: &[TelemetrySample],
    driver: &[DriverPowerSample],
    t0: u64,
    t1: u64,
    tokens: u64,
) -> PhaseStats {
    let t1 = t1.max(t0);
    let duration_s = (t1 - t0) as f64 / 1e9;
    let inside: Vec<&TelemetrySample> = samples.iter().filter(|s| s.at.mono_ns >= t0 && s.at.mono_ns <= t1).collect();
    let collect = |f: fn(&TelemetrySample) -> Option<f64>| -> Vec<f64> { inside.iter().filter_map(|s| f(s)).collect() };

    let mut driver_points: Vec<(u64, f64)> = driver.iter().map(|d| (d.mono_ns, d.power_w)).collect();
    driver_points.sort_by_key(|p| p.0);
    let driver_inside = driver_points.iter().filter(|p| p.0 >= t0 && p.0 <= t1).count();
    let series_points = |f: fn(&TelemetrySample) -> Option<f64>| -> Vec<(u64, f64)> {
        samples.iter().filter_map(|s| f(s).map(|v| (s.at.mono_ns, v))).collect()
    };
    let instant = series_points(|s| s.reading.power_w);
    let averaged = series_points(|s| s.reading.power_avg_w);
    let (points, power_from) = if driver_inside >= 2 {
        (driver_points, PowerFrom::DriverSamples)
    } else if !instant.is_empty() {
        (instant, PowerFrom::Instant)
    } else if !averaged.is_empty() {
        (averaged, PowerFrom::Averaged)
    } else {
        (Vec::new(), PowerFrom::Unavailable)
    };
    let power_inside: Vec<f64> = points.iter().filter(|p| p.0 >= t0 && p.0 <= t1).map(|p| p.1).collect();
    let power_integral = if duration_s > 0.0 { integral_j(&points, t0, t1) } else { None };

    let (energy_j, energy_from) = match (counter_energy_j(samples, t0, t1), power_integral) {
        (Some(e), _) => (Some(e), EnergyFrom::Counter),
        (None, Some(e)) if power_from == PowerFrom::DriverSamples => (Some(e), EnergyFrom::DriverPowerIntegral),
        (None, Some(e)) => (Some(e), EnergyFrom::PowerIntegral),
        (None, None) => (None, EnergyFrom::Unavailable),
    };
    let clocks = collect(|s| s.reading.gfx_clock_mhz);

    PhaseStats {
        phase,
        duration_s,
        samples: inside.len(),
        mean_power_w: power_integral.filter(|_| duration_s > 0.0).map(|e| e / duration_s),
        median_power_w: median(&power_inside),
        power_from,
        mean_busy_pct: mean(&collect(|s| s.reading.busy_pct)),
        mean_cpu_pct: mean(&collect(|s| s.reading.cpu_pct)),
        peak_temp_c: collect(|s| s.reading.hottest_c()).into_iter().reduce(f64::max),
        gfx_clock_min_mhz: clocks.iter().copied().reduce(f64::min),
        gfx_clock_max_mhz: clocks.iter().copied().reduce(f64::max),
        gfx_clock_median_mhz: median(&clocks),
        energy_j,
        energy_from,
        tokens,
        j_per_token: energy_j.filter(|_| tokens > 0).map(|e| e / tokens as f64),
        power_field: None,
        shorter_than_filter: false,
        throttle: throttle_residency(samples, t0, t1),
        gfx_energy_j: if duration_s > 0.0 {
            integral_j(&series_points(|s| s.reading.gfx_power_w), t0, t1)
        } else {
            None
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::telemetry::Reading;

    const MS: u64 = 1_000_000;

    fn at(ms: u64) -> Stamp {
        Stamp { mono_ns: ms * MS, boot_ns: ms * MS }
    }

    fn sample(ms: u64, r: Reading) -> TelemetrySample {
        TelemetrySample { at: at(ms), late_ns: 0, reading: r }
    }

    fn marks() -> RequestMarks {
        RequestMarks {
            start: at(1000),
            first_token: at(2000),
            last_token: at(4000),
            prompt_tokens: 500,
            output_tokens: 100,
        }
    }

    /// 100 W before the first token, 300 W after, read every 100 ms from t = 0 to 5 s.
    fn square_wave(energy: bool) -> Vec<TelemetrySample> {
        let mut joules = 0.0;
        (0..=50)
            .map(|i| {
                let ms = i * 100;
                let w = if ms < 2000 { 100.0 } else { 300.0 };
                let r = Reading {
                    power_w: Some(w),
                    busy_pct: Some(if ms < 1000 { 0.0 } else { 90.0 }),
                    gfx_clock_mhz: Some(if ms < 3000 { 1800.0 } else { 1500.0 }),
                    temp_gpu_c: Some(50.0 + ms as f64 / 100.0),
                    energy_j: energy.then_some(joules),
                    ..Default::default()
                };
                joules += w * 0.1;
                sample(ms, r)
            })
            .collect()
    }

    #[test]
    fn integrates_power_per_phase_without_a_counter() {
        let [prefill, decode] = split(&square_wave(false), &[], &marks());
        assert_eq!(prefill.energy_from, EnergyFrom::PowerIntegral);
        assert_eq!(prefill.power_from, PowerFrom::Instant);
        // 0.9 s at 100 W, then the trapezoid of the 100→300 W step read at 1.9 s and 2.0 s: 20 J.
        assert!((prefill.energy_j.unwrap() - 110.0).abs() < 1e-9, "{prefill:?}");
        assert!((decode.energy_j.unwrap() - 600.0).abs() < 1e-9, "{decode:?}");
        assert!((prefill.j_per_token.unwrap() - 0.22).abs() < 1e-9);
        assert!((prefill.mean_power_w.unwrap() - 110.0).abs() < 1e-9);
        assert!((decode.j_per_token.unwrap() - 6.0).abs() < 1e-9);
        assert_eq!(decode.median_power_w, Some(300.0));
        assert_eq!((decode.gfx_clock_min_mhz, decode.gfx_clock_max_mhz), (Some(1500.0), Some(1800.0)));
        assert_eq!(decode.peak_temp_c, Some(90.0));
        assert_eq!(prefill.samples, 11);
        assert!((prefill.mean_busy_pct.unwrap() - 90.0).abs() < 1e-9);
    }

    /// Two requests back to back (a sequence, §4.2): 100 W prefills of 1 s and 300 W decodes of
    /// 2 s, at 0–3 s and 3–6 s. Combined per request, decode energy is the decodes' alone; the
    /// span from the first token to the last would have held the second request's prefill.
    #[test]
    fn a_sequences_phases_are_its_requests_combined() {
        let series: Vec<TelemetrySample> = (0..=60)
            .map(|i| {
                let ms = i * 100;
                let in_prefill = ms % 3000 < 1000;
                let r = Reading {
                    power_w: Some(if in_prefill { 100.0 } else { 300.0 }),
                    gfx_clock_mhz: Some(if ms < 3000 { 1800.0 } else { 1500.0 }),
                    temp_gpu_c: Some(40.0 + ms as f64 / 1000.0),
                    ..Default::default()
                };
                sample(ms, r)
            })
            .collect();
        let request = |t0: u64| RequestMarks {
            start: at(t0),
            first_token: at(t0 + 1000),
            last_token: at(t0 + 2900),
            prompt_tokens: 500,
            output_tokens: 100,
        };
        let parts = [split(&series, &[], &request(0)), split(&series, &[], &request(3000))];
        let [prefill, decode] = combined(&parts).unwrap();
        let sum = |i: usize| parts[0][i].energy_j.unwrap() + parts[1][i].energy_j.unwrap();
        assert!((decode.energy_j.unwrap() - sum(1)).abs() < 1e-9 && (prefill.energy_j.unwrap() - sum(0)).abs() < 1e-9);
        assert_eq!((decode.tokens, prefill.tokens), (200, 1000));
        assert!((decode.duration_s - 3.8).abs() < 1e-9, "{decode:?}");
        assert!((decode.j_per_token.unwrap() - sum(1) / 200.0).abs() < 1e-12);
        assert!(decode.mean_power_w.unwrap() > 280.0, "no prefill inside: {decode:?}");
        assert_eq!((decode.gfx_clock_min_mhz, decode.gfx_clock_max_mhz), (Some(1500.0), Some(1800.0)));
        assert_eq!(decode.peak_temp_c, Some(45.9));
        assert_eq!(decode.energy_from, EnergyFrom::PowerIntegral);
        let whole = split(&series, &[], &RequestMarks { last_token: at(5900), ..request(0) });
        assert!(whole[1].mean_power_w.unwrap() < decode.mean_power_w.unwrap() - 20.0, "the span holds a prefill");
        assert!(combined(&[]).is_none());
    }

    /// Two GPUs under one request: the server's energy is theirs together, its clock the slower
    /// one's, its temperature the hotter one's; one device is its own sum.
    #[test]
    fn a_server_on_two_devices_sums_their_energy() {
        let hot: Vec<TelemetrySample> = square_wave(false);
        let cool: Vec<TelemetrySample> = square_wave(false)
            .into_iter()
            .map(|mut s| {
                s.reading.power_w = s.reading.power_w.map(|w| w / 2.0);
                s.reading.gfx_clock_mhz = s.reading.gfx_clock_mhz.map(|c| c - 300.0);
                s.reading.temp_gpu_c = s.reading.temp_gpu_c.map(|t| t - 20.0);
                s.reading.busy_pct = s.reading.busy_pct.map(|b| b / 3.0);
                s
            })
            .collect();
        let (a, b) = (split(&hot, &[], &marks()), split(&cool, &[], &marks()));
        let [prefill, decode] = summed(&[a.clone(), b.clone()]).unwrap();
        assert!((decode.energy_j.unwrap() - 900.0).abs() < 1e-9, "600 J + 300 J: {decode:?}");
        assert!((decode.j_per_token.unwrap() - 9.0).abs() < 1e-9);
        assert!((decode.mean_power_w.unwrap() - 450.0).abs() < 1e-9);
        assert!((prefill.energy_j.unwrap() - 165.0).abs() < 1e-9);
        assert_eq!((decode.gfx_clock_min_mhz, decode.gfx_clock_max_mhz), (Some(1200.0), Some(1800.0)));
        assert_eq!(decode.peak_temp_c, Some(90.0));
        assert!((decode.mean_busy_pct.unwrap() - 60.0).abs() < 1e-9, "90% and 30%");
        assert_eq!((decode.tokens, decode.samples, decode.duration_s), (100, a[1].samples, a[1].duration_s));
        assert_eq!(decode.median_power_w, None, "no median of the sum");
        assert_eq!(decode.energy_from, EnergyFrom::PowerIntegral);
        assert_eq!(summed(std::slice::from_ref(&a)).unwrap(), a, "one device is its own sum");
        let mut unmetered = b;
        unmetered[1].energy_j = None;
        let [_, decode] = summed(&[a, unmetered]).unwrap();
        assert_eq!((decode.energy_j, decode.energy_from), (None, EnergyFrom::Unavailable), "a device without energy");
        assert!(summed(&[]).is_none());
    }

    #[test]
    fn prefers_a_monotonic_counter_and_rejects_a_falling_one() {
        let mut series = square_wave(true);
        let [prefill, decode] = split(&series, &[], &marks());
        // The counter integrates by holding each value (100 J), not by trapezoids (110 J).
        assert_eq!(prefill.energy_from, EnergyFrom::Counter);
        assert!((prefill.energy_j.unwrap() - 100.0).abs() < 1e-6, "{prefill:?}");
        assert!((decode.energy_j.unwrap() - 600.0).abs() < 1e-6, "{decode:?}");
        series[30].reading.energy_j = Some(0.0);
        let [_, decode] = split(&series, &[], &marks());
        assert_eq!(decode.energy_from, EnergyFrom::PowerIntegral);
    }

    /// NVML's counter moves once a second; read at 100 ms it looks fresh but is up to 1 s old.
    #[test]
    fn a_counter_that_updates_once_a_second_is_not_used_for_short_phases() {
        let energy_at = |ms: u64| if ms < 2000 { ms as f64 / 10.0 } else { 200.0 + (ms - 2000) as f64 * 0.3 };
        let mut series = square_wave(true);
        for s in series.iter_mut() {
            let ms = s.at.mono_ns / MS;
            // Updated at 0.5 s, 1.5 s, 2.5 s, …: each reading holds the last update's value.
            let updated = if ms < 500 { 0 } else { (ms - 500) / 1000 * 1000 + 500 };
            s.reading.energy_j = Some(if ms < 500 { 0.0 } else { energy_at(updated) });
        }
        let [prefill, decode] = split(&series, &[], &marks());
        // Prefill (1–2 s) holds one update, decode (2–4 s) two that span 1 of its 2 s.
        assert_eq!(prefill.energy_from, EnergyFrom::PowerIntegral);
        assert_eq!(decode.energy_from, EnergyFrom::PowerIntegral);
        assert!((decode.energy_j.unwrap() - 600.0).abs() < 1e-9, "{decode:?}");
    }

    #[test]
    fn uses_driver_samples_when_they_cover_the_phase() {
        let driver: Vec<DriverPowerSample> = (0..250)
            .map(|i| DriverPowerSample { mono_ns: i * 20 * MS, driver_us: i * 20_000, power_w: 250.0 })
            .collect();
        let [_, decode] = split(&square_wave(false), &driver, &marks());
        assert_eq!(decode.energy_from, EnergyFrom::DriverPowerIntegral);
        assert!((decode.energy_j.unwrap() - 500.0).abs() < 1e-9);
        assert_eq!(decode.mean_power_w, Some(250.0));
    }

    /// A real Strix Halo table (tests/fixtures/gpu_metrics/README.md) read every 100 ms, its fast
    /// PPT counter rising by 40 ticks a reading from 2.5 s on: the decode (2–4 s) sees fast PPT
    /// and nothing else throttle, the prefill (1–2 s) none; its socket power is the firmware's
    /// 1 s average, so a 1 s prefill is not "shorter than the filter" and a 0.5 s one is.
    #[test]
    fn throttle_residency_rises_per_phase_and_names_the_limit_on_a_real_table() {
        use crate::telemetry::power_field::{PowerKind, PowerScope};
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/gpu_metrics/v3_0_strix_halo_amdtop.bin");
        let table = super::super::gpu_metrics::GpuMetrics::decode(&std::fs::read(path).unwrap()).unwrap();
        let real = table.to_reading(table.default_interpretation());
        assert_eq!((real.throttle_fppt, real.throttle_sppt), (Some(461_257.0), Some(134_744.0)));
        let series: Vec<TelemetrySample> = (0..=50u64)
            .map(|i| {
                let mut r = real;
                r.power_w = r.power_avg_w;
                r.throttle_fppt = r.throttle_fppt.map(|t| t + 40.0 * i.saturating_sub(25) as f64);
                sample(i * 100, r)
            })
            .collect();
        let [prefill, decode] = split(&series, &[], &marks());
        let ticks = |p: &PhaseStats, limit: &str| p.throttle.iter().find(|t| t.limit == limit).map(|t| t.ticks);
        assert_eq!(ticks(&decode, "fast PPT"), Some(600.0), "15 readings × 40 from 2.5 s to 4 s: {decode:?}");
        assert_eq!(ticks(&decode, "slow PPT"), Some(0.0));
        assert_eq!(decode.throttle.len(), 7, "every counter the table has, zero or not");
        assert_eq!(decode.throttling_limits(), Some(vec!["fast PPT".to_string()]));
        assert_eq!(prefill.throttling_limits(), Some(Vec::new()), "counted, and nothing rose");
        // The same sample's label: the firmware's filter read from the table.
        let fields = [PowerField::new(
            Field::PowerW,
            "hwmon power1_input (the firmware's filtered socket power)",
            PowerScope::ApuSocket,
            PowerKind::Average,
            table.filter_us().map(|us| us as f64 / 1000.0),
        )];
        assert_eq!(fields[0].filter_ms, Some(1000.0));
        assert!(!name_power(prefill, &fields).shorter_than_filter, "1 s is not shorter than 1 s");
        let half = RequestMarks { first_token: at(1500), ..marks() };
        let [short, _] = split(&series, &[], &half).map(|p| name_power(p, &fields));
        assert!(short.shorter_than_filter, "0.5 s < the 1 s filter");
        // A source without the counters records none, and says nothing of throttling.
        let plain: Vec<TelemetrySample> = series
            .iter()
            .map(|s| sample(s.at.mono_ns / MS, Reading { power_w: Some(50.0), ..Default::default() }))
            .collect();
        assert_eq!(split(&plain, &[], &marks())[1].throttling_limits(), None);
    }

    /// An APU: only the table's filtered socket average, a 10 ms filter, and a 5 ms prefill.
    #[test]
    fn a_phase_names_its_power_and_one_shorter_than_the_filter_is_marked() {
        use crate::telemetry::power_field::{PowerKind, PowerScope};
        let fields = [PowerField::new(
            Field::PowerAvgW,
            "gpu_metrics average_socket_power",
            PowerScope::ApuSocket,
            PowerKind::Average,
            Some(10.0),
        )];
        let series: Vec<TelemetrySample> =
            (0..=400).map(|i| sample(990 + i, Reading { power_avg_w: Some(80.0), ..Default::default() })).collect();
        let short = RequestMarks {
            start: at(1000),
            first_token: at(1005),
            last_token: at(1300),
            prompt_tokens: 8,
            output_tokens: 30,
        };
        let [prefill, decode] = split(&series, &[], &short).map(|p| name_power(p, &fields));
        assert_eq!(prefill.power_field.as_ref(), Some(&fields[0]));
        assert!(prefill.shorter_than_filter, "5 ms < 10 ms: {prefill:?}");
        assert!(!decode.shorter_than_filter, "295 ms: {decode:?}");
        let basis = prefill.energy_basis();
        assert_eq!(
            (basis.from, basis.power.as_ref(), basis.shorter_than_filter),
            (EnergyFrom::PowerIntegral, Some(&fields[0]), true)
        );
        // Instant power is named by its own field; a counter's energy names no power.
        let instant = name_power(split(&square_wave(false), &[], &marks())[1].clone(), &fields);
        assert_eq!((instant.power_field, instant.shorter_than_filter), (None, false), "no power_w field was named");
        let counted = name_power(split(&square_wave(true), &[], &marks())[1].clone(), &fields);
        assert_eq!(counted.energy_basis().power, None);
        // A record of an earlier release has neither field and still loads.
        let old = serde_json::to_value(&decode).unwrap();
        let mut old = old.as_object().unwrap().clone();
        old.remove("power_field");
        let back: PhaseStats = serde_json::from_value(serde_json::Value::Object(old)).unwrap();
        assert_eq!((back.power_field, back.shorter_than_filter), (None, false));
    }

    #[test]
    fn a_series_without_power_says_so() {
        let series: Vec<TelemetrySample> =
            (0..50).map(|i| sample(i * 100, Reading { cpu_pct: Some(3.0), ..Default::default() })).collect();
        let [prefill, _] = split(&series, &[], &marks());
        assert_eq!((prefill.energy_j, prefill.energy_from), (None, EnergyFrom::Unavailable));
        assert_eq!(prefill.mean_cpu_pct, Some(3.0));
        assert_eq!(prefill.j_per_token, None);
    }
}
