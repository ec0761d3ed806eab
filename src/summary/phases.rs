//! Per-phase telemetry across a variant's samples: prefill (request → first token) and decode
//! (first → last token) power, busy, temperature, clocks and energy per token, and the samples
//! whose GPU clock sagged during decode ("throttled").
use crate::measure::Sample;
use crate::telemetry::phases::{EnergyFrom, PhaseStats};
use serde::{Deserialize, Serialize};

use super::stats::median;

/// A decode whose lowest gfx clock fell more than this below the study's median is throttled.
pub(crate) const THROTTLE_DROP: f64 = 0.10;

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub(crate) struct PhaseFigures {
    pub(crate) samples: usize,
    pub(crate) mean_power_w: Option<f64>,
    pub(crate) mean_busy_pct: Option<f64>,
    pub(crate) mean_cpu_pct: Option<f64>,
    pub(crate) peak_temp_c: Option<f64>,
    pub(crate) gfx_clock_min_mhz: Option<f64>,
    pub(crate) gfx_clock_median_mhz: Option<f64>,
    pub(crate) gfx_clock_max_mhz: Option<f64>,
    pub(crate) energy_j: Option<f64>,
    pub(crate) j_per_token: Option<f64>,
    /// Where the energy came from (the energy counter, or the integral of power).
    pub(crate) energy_from: Option<String>,
}

/// The [prefill, decode] phase stats a sample's telemetry recorded.
pub(crate) fn sample_phases(s: &Sample) -> Option<[PhaseStats; 2]> {
    s.extra.telemetry.as_ref()?.phases.clone()
}

fn med(v: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    median(&v.flatten().filter(|x| x.is_finite()).collect::<Vec<_>>())
}

/// Medians over samples (peak temperature: the highest; clock min/max: the extremes).
pub(crate) fn figures(phases: &[&PhaseStats]) -> Option<PhaseFigures> {
    if phases.is_empty() {
        return None;
    }
    let it = || phases.iter();
    let ext = |f: fn(&PhaseStats) -> Option<f64>, max: bool| {
        it().filter_map(|p| f(p)).reduce(|a, b| if max { a.max(b) } else { a.min(b) })
    };
    Some(PhaseFigures {
        samples: phases.len(),
        mean_power_w: med(it().map(|p| p.mean_power_w)),
        mean_busy_pct: med(it().map(|p| p.mean_busy_pct)),
        mean_cpu_pct: med(it().map(|p| p.mean_cpu_pct)),
        peak_temp_c: ext(|p| p.peak_temp_c, true),
        gfx_clock_min_mhz: ext(|p| p.gfx_clock_min_mhz, false),
        gfx_clock_median_mhz: med(it().map(|p| p.gfx_clock_median_mhz)),
        gfx_clock_max_mhz: ext(|p| p.gfx_clock_max_mhz, true),
        energy_j: med(it().map(|p| p.energy_j)),
        j_per_token: med(it().map(|p| p.j_per_token)),
        energy_from: phases.first().map(|p| format!("{:?}", p.energy_from)),
    })
}

/// True when this decode's lowest gfx clock is more than [`THROTTLE_DROP`] below `study_median`.
pub(crate) fn throttled(decode: &PhaseStats, study_median_mhz: Option<f64>) -> bool {
    match (decode.gfx_clock_min_mhz, study_median_mhz) {
        (Some(min), Some(m)) => min < (1.0 - THROTTLE_DROP) * m,
        _ => false,
    }
}

/// What an energy metric's values came from, in words: one source, or each source with its count
/// where samples differ; None where none was measured.
pub(crate) fn energy_from_line(sources: impl Iterator<Item = EnergyFrom>) -> Option<String> {
    let mut counts: Vec<(EnergyFrom, usize)> = Vec::new();
    for e in sources.filter(|e| *e != EnergyFrom::Unavailable) {
        match counts.iter_mut().find(|(x, _)| *x == e) {
            Some((_, n)) => *n += 1,
            None => counts.push((e, 1)),
        }
    }
    match counts.as_slice() {
        [] => None,
        [(e, _)] => Some(energy_from_words(*e).into()),
        many => {
            Some(many.iter().map(|(e, n)| format!("{} ({n})", energy_from_words(*e))).collect::<Vec<_>>().join(", "))
        }
    }
}

/// The source of a phase's energy, for people (docs/methodology.md §9.6).
pub(crate) fn energy_from_words(e: EnergyFrom) -> &'static str {
    match e {
        EnergyFrom::Counter => "energy counter",
        EnergyFrom::DriverPowerIntegral => "power integral (driver's power samples)",
        EnergyFrom::PowerIntegral => "power integral (sampled power)",
        EnergyFrom::Unavailable => "not measured",
    }
}

/// The summary's line where no sample measured power or energy.
pub(crate) fn not_measured_line(telemetry: Option<&str>) -> String {
    format!(
        "not measured on this host: the telemetry ({}) read no power or energy",
        telemetry.unwrap_or("none recorded")
    )
}
