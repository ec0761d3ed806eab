//! Timestamps in the two clocks abprof joins on: CLOCK_MONOTONIC (durations, never steps) and
//! CLOCK_BOOTTIME (the domain of rocprofv3 kernel records and amdgpu `gpu_metrics`), so a
//! request's decode window can be laid over a kernel trace or a telemetry series directly.
use nix::time::{clock_gettime, ClockId};
use serde::{Deserialize, Serialize};

/// One instant, read from both clocks back to back (they are < 1 µs apart).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stamp {
    pub mono_ns: u64,
    pub(crate) boot_ns: u64,
}

/// A clock's reading in ns.
pub(crate) fn read(id: ClockId) -> u64 {
    let ts = clock_gettime(id).expect("clock_gettime on a clock Linux always has");
    ts.tv_sec() as u64 * 1_000_000_000 + ts.tv_nsec() as u64
}

impl Stamp {
    pub(crate) fn now() -> Self {
        let mono_ns = read(ClockId::CLOCK_MONOTONIC);
        let boot_ns = read(ClockId::CLOCK_BOOTTIME);
        Stamp { mono_ns, boot_ns }
    }

    /// Milliseconds from `self` to `later` on the monotonic clock (negative if `later` is earlier).
    pub(crate) fn ms_until(&self, later: &Stamp) -> f64 {
        (later.mono_ns as i128 - self.mono_ns as i128) as f64 / 1e6
    }
}

/// A stretch of time between two stamps: one step of a sample's lifecycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Span {
    pub(crate) start: Stamp,
    pub(crate) end: Stamp,
}

impl Span {
    /// From `start` to now.
    pub(crate) fn until_now(start: Stamp) -> Span {
        Span { start, end: Stamp::now() }
    }
}

/// CLOCK_MONOTONIC now, in ns.
pub fn mono_ns() -> u64 {
    read(ClockId::CLOCK_MONOTONIC)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_are_ordered_and_close() {
        let a = Stamp::now();
        let b = Stamp::now();
        assert!(b.mono_ns >= a.mono_ns && b.boot_ns >= a.boot_ns);
        assert!(a.ms_until(&b) >= 0.0 && a.ms_until(&b) < 100.0);
        // Boottime includes suspend, so it is never behind monotonic.
        assert!(a.boot_ns >= a.mono_ns);
    }
}
