//! The thermal gate (docs/methodology.md §9.9): after the idle gate, before a sample's request,
//! wait until the device is back within a band of the study's first idle temperature, or below a
//! ceiling, or give up after a timeout. Pure, as the idle gate is: it judges the samples it is
//! shown, so a study feeds it the sampler's and a test a simulated series.
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::sampler::TelemetrySample;

/// When a device counts as cool enough to start a sample.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub(crate) struct ThermalTarget {
    /// Within this many °C above the reference (the study's first idle reading).
    pub(crate) band_c: f64,
    /// Or at or below this temperature, whatever the reference.
    pub(crate) ceiling_c: Option<f64>,
    /// The study's first idle temperature; None before the study's first sample, which sets it.
    pub(crate) reference_c: Option<f64>,
}

impl ThermalTarget {
    /// The temperature at or below which a sample may start.
    pub(crate) fn bound_c(&self) -> Option<f64> {
        match (self.reference_c.map(|r| r + self.band_c), self.ceiling_c) {
            (Some(b), Some(c)) => Some(b.max(c)),
            (b, c) => b.or(c),
        }
    }

    pub(crate) fn describe(&self) -> String {
        let band = self.reference_c.map(|r| format!("within {} °C of the study's first idle {r:.1} °C", self.band_c));
        match (band, self.ceiling_c) {
            (Some(b), Some(c)) => format!("{b} or at most {c} °C"),
            (Some(b), None) => b,
            (None, Some(c)) => format!("at most {c} °C"),
            (None, None) => "the first idle reading".into(),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ThermalState {
    Waiting,
    /// Cool enough: the temperature it started at, and how long it waited (the cooling time).
    Cool {
        start_c: f64,
        waited: Duration,
    },
    /// The timeout passed first; the last temperature read, if any.
    TimedOut {
        waited: Duration,
        last_c: Option<f64>,
    },
}

pub(crate) struct ThermalGate {
    target: ThermalTarget,
    timeout: Duration,
    start_mono_ns: u64,
    last_c: Option<f64>,
}

impl ThermalGate {
    pub(crate) fn new(target: ThermalTarget, timeout: Duration, start_mono_ns: u64) -> ThermalGate {
        ThermalGate { target, timeout, start_mono_ns, last_c: None }
    }

    /// Feeds one sample (in time order); the hottest sensor of the reading is judged. The first
    /// reading of a study without a reference is the reference, so it passes.
    pub(crate) fn observe(&mut self, s: &TelemetrySample) -> ThermalState {
        if s.at.mono_ns < self.start_mono_ns {
            return ThermalState::Waiting;
        }
        let waited = Duration::from_nanos(s.at.mono_ns - self.start_mono_ns);
        if let Some(t) = s.reading.hottest_c() {
            self.last_c = Some(t);
            if self.target.reference_c.is_none() && self.target.ceiling_c.is_none() {
                self.target.reference_c = Some(t);
            }
            if self.target.bound_c().is_some_and(|b| t <= b) {
                return ThermalState::Cool { start_c: t, waited };
            }
        }
        if waited >= self.timeout {
            ThermalState::TimedOut { waited, last_c: self.last_c }
        } else {
            ThermalState::Waiting
        }
    }

    /// The one line a timed-out gate fails the sample with.
    pub(crate) fn timeout_line(&self, waited: Duration, last_c: Option<f64>) -> String {
        format!(
            "thermal gate: the device did not cool to {} within {:.0} s (last reading {}): let it cool, widen --thermal-band, raise --thermal-ceiling or --thermal-timeout",
            self.target.describe(),
            waited.as_secs_f64(),
            last_c.map_or("no temperature".into(), |t| format!("{t:.1} °C"))
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::Stamp;
    use crate::telemetry::Reading;

    /// A simulated device cooling by Newton's law from `hot` towards 40 °C, read every 100 ms.
    fn cooling(hot: f64, tau_s: f64) -> impl Iterator<Item = TelemetrySample> {
        (0..).map(move |i: u64| {
            let t = i as f64 * 0.1;
            let ns = i * 100_000_000;
            TelemetrySample {
                at: Stamp { mono_ns: ns, boot_ns: ns },
                late_ns: 0,
                reading: Reading { temp_gpu_c: Some(40.0 + (hot - 40.0) * (-t / tau_s).exp()), ..Default::default() },
            }
        })
    }

    fn run(gate: &mut ThermalGate, series: impl Iterator<Item = TelemetrySample>) -> ThermalState {
        for s in series.take(100_000) {
            match gate.observe(&s) {
                ThermalState::Waiting => {}
                done => return done,
            }
        }
        panic!("the series ended first")
    }

    #[test]
    fn waits_until_the_device_is_back_within_the_band_and_records_the_cooling_time() {
        let target = ThermalTarget { band_c: 3.0, ceiling_c: None, reference_c: Some(45.0) };
        let mut gate = ThermalGate::new(target, Duration::from_secs(120), 0);
        // From 85 °C with a 20 s time constant: 40 + 45 e^(−t/20) ≤ 48 at t = 20 ln(45/8) = 34.5 s.
        let ThermalState::Cool { start_c, waited } = run(&mut gate, cooling(85.0, 20.0)) else { panic!() };
        assert!(start_c <= 48.0 && start_c > 47.8, "{start_c}");
        assert!((waited.as_secs_f64() - 34.6).abs() < 0.11, "{waited:?}");
    }

    #[test]
    fn a_ceiling_passes_a_device_below_it_and_the_first_reading_sets_the_reference() {
        let ceiling = ThermalTarget { band_c: 2.0, ceiling_c: Some(70.0), reference_c: Some(45.0) };
        let mut gate = ThermalGate::new(ceiling, Duration::from_secs(60), 0);
        let ThermalState::Cool { waited, .. } = run(&mut gate, cooling(85.0, 20.0)) else { panic!() };
        // 40 + 45 e^(−t/20) ≤ 70 at t = 20 ln(1.5) = 8.1 s.
        assert!((waited.as_secs_f64() - 8.2).abs() < 0.11, "{waited:?}");
        let first = ThermalTarget { band_c: 2.0, ceiling_c: None, reference_c: None };
        let mut gate = ThermalGate::new(first, Duration::from_secs(60), 0);
        assert_eq!(run(&mut gate, cooling(60.0, 20.0)), ThermalState::Cool { start_c: 60.0, waited: Duration::ZERO });
    }

    #[test]
    fn times_out_with_one_line_naming_the_target_and_the_last_reading() {
        let target = ThermalTarget { band_c: 3.0, ceiling_c: None, reference_c: Some(45.0) };
        let mut gate = ThermalGate::new(target, Duration::from_secs(10), 0);
        let ThermalState::TimedOut { waited, last_c } = run(&mut gate, cooling(85.0, 60.0)) else { panic!() };
        assert_eq!(waited, Duration::from_secs(10));
        let line = gate.timeout_line(waited, last_c);
        assert!(!line.contains('\n'), "{line}");
        assert!(
            line.contains("within 3 °C of the study's first idle 45.0 °C") && line.contains("within 10 s"),
            "{line}"
        );
        assert!(line.contains("last reading 78.") && line.contains("--thermal-timeout"), "{line}");
        // A source without a temperature waits to the timeout and says so.
        let mut gate = ThermalGate::new(target, Duration::from_secs(1), 0);
        let blank = (0..20u64).map(|i| TelemetrySample {
            at: Stamp { mono_ns: i * 100_000_000, boot_ns: 0 },
            late_ns: 0,
            reading: Reading::default(),
        });
        let ThermalState::TimedOut { last_c, .. } = run(&mut gate, blank) else { panic!() };
        assert_eq!(last_c, None);
    }
}
