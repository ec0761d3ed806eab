//! A speculative server's two contexts in one trace (docs/methodology.md §10.2).
//!
//! With `--spec-type draft-mtp` (or a draft model) the pinned llama-server (llama.cpp 0c1e57098,
//! vendored in the llama-cpp-python 0.3.36 sdist the test bed builds) makes a second llama_context
//! for the drafts (its common/speculative.cpp), and every context's GPU backend makes its own
//! in-order stream (its ggml-cuda keeps the streams per backend context; HIP alike). So in a trace
//! of such a server the draft's kernels are on a lane of their own. On each device the lane with
//! the most kernel time in decode is the target's (its model is the whole trunk; the MTP head is
//! one block, a draft model a small one), every other lane the draft's. On the H200's trace of the
//! predictable qwen35moe twin (tests/fixtures/h200-traces/), over the whole trace the target's
//! stream 16 held 113,122 kernels (659.7 ms) and the MTP context's stream 17 11,590 (100.0 ms),
//! the target's first; in the decode window 98,469 (480.9 ms) and 11,180 (95.6 ms).
//! Limits (docs/methodology.md §10.2): a draft on a device of its own (`-devd`) is that device's
//! only lane and reads as a target; with ggml-cuda's opt-in concurrent streams the target's extra
//! streams would read as the draft's — the attribution's lanes line lists every lane so a reader
//! sees either.
use serde::Serialize;

use super::kernels::{Aggregate, Totals};
use super::phase::PhaseWindows;
use super::source::KernelSource;
use super::TraceError;

/// One lane's decode work.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct LaneLine {
    pub(crate) device: i64,
    pub(crate) stream: i64,
    pub(crate) calls: u64,
    pub(crate) ms: f64,
}

impl LaneLine {
    fn of(lane: i64, t: Totals) -> LaneLine {
        LaneLine { device: lane >> 32, stream: lane & 0xffff_ffff, calls: t.calls, ms: t.ns as f64 / 1e6 }
    }
}

/// Which lanes were the target's and which the draft's, as the attribution reports them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct SpeculationLanes {
    /// What the server's command line asked for (`--spec-type draft-mtp`, `-md FILE`).
    pub(crate) speculation: String,
    pub(crate) target: Vec<LaneLine>,
    pub(crate) draft: Vec<LaneLine>,
}

/// Lanes ([`super::source::Dispatch::lane`]) with their decode totals.
pub(crate) type LaneTotals = Vec<(i64, Totals)>;

/// The target's and the draft's lanes from each lane's decode totals: per device, the lane with
/// the most kernel time is the target's, every other lane with a kernel the draft's. `None` when
/// no device has two lanes (nothing to tell apart).
pub(crate) fn roles(totals: &[(i64, Totals)]) -> Option<(LaneTotals, LaneTotals)> {
    let (mut target, mut draft) = (Vec::new(), Vec::new());
    let mut devices: Vec<i64> = totals.iter().map(|(l, _)| l >> 32).collect();
    devices.sort_unstable();
    devices.dedup();
    for d in devices {
        let mut on: LaneTotals = totals.iter().filter(|(l, t)| l >> 32 == d && t.calls > 0).copied().collect();
        on.sort_by(|a, b| b.1.ns.cmp(&a.1.ns).then(a.0.cmp(&b.0)));
        let mut it = on.into_iter();
        target.extend(it.next());
        draft.extend(it);
    }
    (!draft.is_empty()).then_some((target, draft))
}

/// `agg` (every lane, in `windows`) with the draft context's kernels marked as such, and the
/// lanes found; `agg` unchanged when the trace shows one lane per device.
pub(crate) fn split(
    source: &dyn KernelSource,
    agg: Aggregate,
    windows: Option<&PhaseWindows>,
    speculation: String,
) -> Result<(Aggregate, Option<SpeculationLanes>), TraceError> {
    let span = windows.map(|w| (w.decode_start, w.decode_end));
    let Some((target, draft)) = roles(&source.lane_totals(span)?) else {
        return Ok((agg, None));
    };
    let draft_lanes: Vec<i64> = draft.iter().map(|(l, _)| *l).collect();
    let drafts = source.aggregate_on_lanes(windows, &draft_lanes)?;
    let lanes = SpeculationLanes {
        speculation,
        target: target.into_iter().map(|(l, t)| LaneLine::of(l, t)).collect(),
        draft: draft.into_iter().map(|(l, t)| LaneLine::of(l, t)).collect(),
    };
    Ok((agg.with_draft(drafts), Some(lanes)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(calls: u64, ns: u64) -> Totals {
        Totals { calls, ns }
    }

    #[test]
    fn the_busiest_lane_of_each_device_is_the_targets() {
        // The H200 trace's two streams of device 0.
        let (target, draft) = roles(&[(16, t(113_122, 659_657_840)), (17, t(11_590, 99_987_390))]).unwrap();
        assert_eq!((target[0].0, draft[0].0), (16, 17));
        // Two devices of a split model, each with its own draft lane.
        let d1 = 1_i64 << 32;
        let (target, draft) =
            roles(&[(16, t(9, 900)), (17, t(1, 100)), (d1 + 5, t(1, 50)), (d1 + 6, t(8, 800))]).unwrap();
        assert_eq!(target.iter().map(|x| x.0).collect::<Vec<_>>(), vec![16, d1 + 6]);
        assert_eq!(draft.iter().map(|x| x.0).collect::<Vec<_>>(), vec![17, d1 + 5]);
        assert_eq!(LaneLine::of(d1 + 5, t(1, 50)).device, 1);
        assert_eq!(LaneLine::of(d1 + 5, t(1, 50)).stream, 5);
    }

    #[test]
    fn one_lane_per_device_has_nothing_to_tell_apart() {
        assert!(roles(&[(15, t(348_898, 1_617_076_651))]).is_none());
        assert!(roles(&[(15, t(10, 10)), ((1 << 32) + 15, t(10, 10))]).is_none());
        assert!(roles(&[]).is_none());
        // A lane with no kernel in decode is no lane of the draft.
        assert!(roles(&[(15, t(10, 10)), (16, t(0, 0))]).is_none());
    }
}
