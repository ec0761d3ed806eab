//! Per-phase telemetry across a variant's samples: prefill (request → first token) and decode
//! (first → last token) power, busy, temperature, clocks and energy per token, and the samples
//! whose GPU clock sagged during decode ("throttled").
use crate::measure::Sample;
use crate::telemetry::phases::{EnergyBasis, EnergyFrom, PhaseStats, ThrottleResidency};
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
    /// Each firmware throttle limit's median residency over the phase, in its ticks, where the
    /// source counts them (docs/methodology.md §9.5).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) throttle: Vec<ThrottleResidency>,
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
        throttle: throttle_medians(phases),
    })
}

/// What throttled this decode (docs/methodology.md §9.5): on a source with the firmware's
/// throttle-residency counters, each limit whose residency rose ("fast PPT", "gfx thermal");
/// elsewhere "gfx clock" when the lowest gfx clock is more than [`THROTTLE_DROP`] below
/// `study_median`. Empty: not throttled.
pub(crate) fn throttled_by(decode: &PhaseStats, study_median_mhz: Option<f64>) -> Vec<String> {
    if let Some(limits) = decode.throttling_limits() {
        return limits;
    }
    match (decode.gfx_clock_min_mhz, study_median_mhz) {
        (Some(min), Some(m)) if min < (1.0 - THROTTLE_DROP) * m => vec!["gfx clock".to_string()],
        _ => Vec::new(),
    }
}

/// Each throttle limit's median residency over the phases, where their source counts them.
fn throttle_medians(phases: &[&PhaseStats]) -> Vec<ThrottleResidency> {
    let mut limits: Vec<&str> = Vec::new();
    for t in phases.iter().flat_map(|p| p.throttle.iter()) {
        if !limits.contains(&t.limit.as_str()) {
            limits.push(&t.limit);
        }
    }
    limits
        .into_iter()
        .filter_map(|limit| {
            let ticks = med(phases.iter().map(|p| p.throttle.iter().find(|t| t.limit == limit).map(|t| t.ticks)))?;
            Some(ThrottleResidency { limit: limit.to_string(), ticks })
        })
        .collect()
}

/// What an energy metric's values came from, in words: one source, or each source with its count
/// where samples differ; the power an integral is of, named (docs/methodology.md §9.7); None
/// where none was measured.
pub(crate) fn energy_from_line<E: Into<EnergyBasis>>(sources: impl Iterator<Item = E>) -> Option<String> {
    let mut counts: Vec<(EnergyBasis, usize)> = Vec::new();
    for e in sources.map(Into::into).filter(|e| e.from != EnergyFrom::Unavailable) {
        match counts.iter_mut().find(|(x, _)| *x == e) {
            Some((_, n)) => *n += 1,
            None => counts.push((e, 1)),
        }
    }
    match counts.as_slice() {
        [] => None,
        [(e, _)] => Some(basis_words(e)),
        many => Some(many.iter().map(|(e, n)| format!("{} ({n})", basis_words(e))).collect::<Vec<_>>().join(", ")),
    }
}

/// An energy source, the power it integrates, and a phase shorter than that power's filter.
fn basis_words(e: &EnergyBasis) -> String {
    let mut words = energy_from_words(e.from).to_string();
    if let Some(p) = &e.power {
        words += &format!(" of {}", p.words());
    }
    if e.shorter_than_filter {
        words += "; a phase was shorter than that filter, so its mean still holds what came before it";
    }
    words
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

/// The study's telemetry line (host.json's), with the torn gpu_metrics reads its samples rejected
/// (docs/methodology.md §9.2) where there were any.
pub(crate) fn telemetry_line(host: Option<String>, torn_reads: u64) -> Option<String> {
    match (host, torn_reads) {
        (host, 0) => host,
        (Some(h), n) => Some(format!("{h}; {n} torn gpu_metrics reads rejected")),
        (None, n) => Some(format!("{n} torn gpu_metrics reads rejected")),
    }
}

/// The summary's line where no sample measured power or energy.
pub(crate) fn not_measured_line(telemetry: Option<&str>) -> String {
    format!(
        "not measured on this host: the telemetry ({}) read no power or energy",
        telemetry.unwrap_or("none recorded")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::telemetry::power_field::{PowerField, PowerKind, PowerScope};
    use crate::telemetry::Field;

    /// An APU's J/token says it integrates a filtered socket average, which one, and that a phase
    /// was shorter than the filter (docs/methodology.md §9.7).
    #[test]
    fn the_energy_line_names_the_power_it_integrates() {
        let socket = PowerField::new(
            Field::PowerAvgW,
            "gpu_metrics average_socket_power",
            PowerScope::ApuSocket,
            PowerKind::Average,
            Some(10.0),
        );
        let basis =
            EnergyBasis { from: EnergyFrom::PowerIntegral, power: Some(socket.clone()), shorter_than_filter: false };
        assert_eq!(
            energy_from_line([basis.clone(), basis.clone()].into_iter()).as_deref(),
            Some("power integral (sampled power) of APU socket power (CPU and GPU), firmware average (filter 10.0 ms), gpu_metrics average_socket_power")
        );
        let short = EnergyBasis { shorter_than_filter: true, ..basis };
        assert!(energy_from_line([short].into_iter())
            .unwrap()
            .ends_with("so its mean still holds what came before it"));
    }

    #[test]
    fn the_telemetry_line_counts_torn_reads_where_there_were_any() {
        assert_eq!(telemetry_line(Some("amdgpu sysfs card1".into()), 0).as_deref(), Some("amdgpu sysfs card1"));
        assert_eq!(
            telemetry_line(Some("amdgpu sysfs card1".into()), 3).as_deref(),
            Some("amdgpu sysfs card1; 3 torn gpu_metrics reads rejected")
        );
        assert_eq!(telemetry_line(None, 0), None);
    }
}
