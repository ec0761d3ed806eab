//! The idle gate: before a sample's request is sent, wait for N consecutive readings below the
//! study's thresholds (GPU busy %, power W, server CPU %), or give up after a timeout. Pure: it
//! only looks at the samples it is shown, so the study decides where they come from.
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::sampler::TelemetrySample;
use super::Reading;

/// Upper bounds for "idle"; `None` = not checked.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct IdleThresholds {
    pub(crate) max_busy_pct: Option<f64>,
    /// Compared with instant power where the source has it, else its averaged power.
    pub(crate) max_power_w: Option<f64>,
    pub(crate) max_cpu_pct: Option<f64>,
}

/// What one reading says about idleness.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum IdleVerdict {
    Idle,
    /// A checked value is over its bound: field name, value, bound.
    Busy {
        field: &'static str,
        value: f64,
        max: f64,
    },
    /// None of the checked values is in this reading, so it proves nothing.
    NoData,
}

impl IdleThresholds {
    pub(crate) fn classify(&self, r: &Reading) -> IdleVerdict {
        let checks = [
            ("busy_pct", self.max_busy_pct, r.busy_pct),
            ("power_w", self.max_power_w, r.best_power_w()),
            ("cpu_pct", self.max_cpu_pct, r.cpu_pct),
        ];
        let mut checked = 0;
        for (field, max, value) in checks {
            if let (Some(max), Some(value)) = (max, value) {
                checked += 1;
                if value > max {
                    return IdleVerdict::Busy { field, value, max };
                }
            }
        }
        if checked == 0 {
            IdleVerdict::NoData
        } else {
            IdleVerdict::Idle
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum GateState {
    Waiting,
    /// `consecutive` idle samples in a row; `waited` from the gate's start to the last of them.
    Idle {
        waited: Duration,
    },
    /// The timeout passed first; `last` says what the latest sample showed.
    TimedOut {
        waited: Duration,
        last: IdleVerdict,
    },
}

pub(crate) struct IdleGate {
    thresholds: IdleThresholds,
    consecutive: usize,
    timeout: Duration,
    start_mono_ns: u64,
    run: usize,
    last: IdleVerdict,
}

impl IdleGate {
    /// `start_mono_ns`: when waiting began (CLOCK_MONOTONIC, e.g. `crate::clock::mono_ns()`).
    pub(crate) fn new(
        thresholds: IdleThresholds,
        consecutive: usize,
        timeout: Duration,
        start_mono_ns: u64,
    ) -> IdleGate {
        IdleGate {
            thresholds,
            consecutive: consecutive.max(1),
            timeout,
            start_mono_ns,
            run: 0,
            last: IdleVerdict::NoData,
        }
    }

    /// Feeds one sample (in time order). Samples from before the start are ignored.
    pub(crate) fn observe(&mut self, s: &TelemetrySample) -> GateState {
        if s.at.mono_ns < self.start_mono_ns {
            return GateState::Waiting;
        }
        let waited = Duration::from_nanos(s.at.mono_ns - self.start_mono_ns);
        self.last = self.thresholds.classify(&s.reading);
        self.run = if self.last == IdleVerdict::Idle { self.run + 1 } else { 0 };
        if self.run >= self.consecutive {
            GateState::Idle { waited }
        } else if waited >= self.timeout {
            GateState::TimedOut { waited, last: self.last.clone() }
        } else {
            GateState::Waiting
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::Stamp;

    fn sample(ms: u64, busy: f64, power: Option<f64>) -> TelemetrySample {
        let ns = ms * 1_000_000;
        TelemetrySample {
            at: Stamp { mono_ns: ns, boot_ns: ns },
            late_ns: 0,
            reading: Reading { busy_pct: Some(busy), power_w: power, ..Default::default() },
        }
    }

    fn limits() -> IdleThresholds {
        IdleThresholds { max_busy_pct: Some(5.0), max_power_w: Some(150.0), max_cpu_pct: Some(10.0) }
    }

    #[test]
    fn waits_for_consecutive_idle_samples_and_reports_the_wait() {
        let mut gate = IdleGate::new(limits(), 3, Duration::from_secs(10), 0);
        let states: Vec<GateState> = [(100, 0.0), (200, 80.0), (300, 1.0), (400, 2.0), (500, 0.0)]
            .iter()
            .map(|&(ms, busy)| gate.observe(&sample(ms, busy, Some(120.0))))
            .collect();
        assert_eq!(states[3], GateState::Waiting);
        assert_eq!(states[4], GateState::Idle { waited: Duration::from_millis(500) });
    }

    #[test]
    fn times_out_naming_what_was_busy() {
        let mut gate = IdleGate::new(limits(), 2, Duration::from_millis(250), 0);
        assert_eq!(gate.observe(&sample(100, 0.0, Some(400.0))), GateState::Waiting);
        let state = gate.observe(&sample(300, 0.0, Some(420.0)));
        assert_eq!(
            state,
            GateState::TimedOut {
                waited: Duration::from_millis(300),
                last: IdleVerdict::Busy { field: "power_w", value: 420.0, max: 150.0 }
            }
        );
    }

    #[test]
    fn a_reading_without_checked_values_proves_nothing() {
        let t = IdleThresholds { max_cpu_pct: Some(10.0), ..Default::default() };
        assert_eq!(t.classify(&Reading { busy_pct: Some(0.0), ..Default::default() }), IdleVerdict::NoData);
        assert_eq!(t.classify(&Reading { cpu_pct: Some(3.0), ..Default::default() }), IdleVerdict::Idle);
    }
}
