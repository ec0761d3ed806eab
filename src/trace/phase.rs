//! The phases of a traced request and the timestamps that bound them. The lowest floor of the
//! trace readers: every reader classifies dispatches with [`PhaseWindows`], and the manifest
//! records its windows as [`BootWindow`]s.
use serde::{Deserialize, Serialize};

/// Where in the traced request a kernel ran, judged by its start timestamp.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Before the request: model load, warmup.
    BeforePrefill = 0,
    Prefill = 1,
    Decode = 2,
    /// After the last token: shutdown.
    AfterDecode = 3,
}

pub(crate) const PHASES: usize = 4;

/// GPU idle time that ends a burst of activity: no decode step waits this long for the host, so
/// kernels beyond such a gap (model load, warmup, shutdown) are not part of the request.
pub(crate) const BURST_GAP_NS: i64 = 100_000_000;

/// A span of CLOCK_BOOTTIME nanoseconds, as a manifest records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct BootWindow {
    pub(crate) start_ns: u64,
    pub(crate) end_ns: u64,
}

/// The phase boundaries a dispatch's start is compared with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PhaseWindows {
    pub(crate) decode_start: i64,
    pub(crate) decode_end: i64,
    /// When the request was sent; without it, everything before decode is prefill.
    pub(crate) prefill_start: Option<i64>,
}

impl PhaseWindows {
    pub(crate) fn from_manifest(decode: BootWindow, prefill: Option<BootWindow>) -> PhaseWindows {
        PhaseWindows {
            decode_start: decode.start_ns as i64,
            decode_end: decode.end_ns as i64,
            prefill_start: prefill.map(|p| p.start_ns as i64),
        }
    }

    #[inline]
    pub(crate) fn classify(&self, start: i64) -> Phase {
        if start > self.decode_end {
            Phase::AfterDecode
        } else if start >= self.decode_start {
            Phase::Decode
        } else {
            match self.prefill_start {
                Some(p) if start < p => Phase::BeforePrefill,
                _ => Phase::Prefill,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classify_by_start() {
        let w = PhaseWindows { decode_start: 100, decode_end: 200, prefill_start: Some(50) };
        assert_eq!(w.classify(10), Phase::BeforePrefill);
        assert_eq!(w.classify(50), Phase::Prefill);
        assert_eq!(w.classify(100), Phase::Decode);
        assert_eq!(w.classify(200), Phase::Decode);
        assert_eq!(w.classify(201), Phase::AfterDecode);
        let w = PhaseWindows { prefill_start: None, ..w };
        assert_eq!(w.classify(10), Phase::Prefill);
    }
}
