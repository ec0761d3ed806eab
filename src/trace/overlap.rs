//! GPU busy time, and each kernel's exclusive share of it when kernels overlap.
//!
//! Summed kernel durations exceed wall time whenever kernels overlap, and shares of the sum then
//! over-weigh whatever runs beside something else. Two kinds of overlap need opposite answers:
//!
//! - **Within one stream** kernels overlap only through programmatic dependent launch (Hopper;
//!   llama.cpp launches its CUDA kernels with `cudaLaunchAttributeProgrammaticStreamSerialization`
//!   and waits in `cudaGridDependencySynchronize`): the next kernel is launched early and waits
//!   for its predecessor. The time belongs to the kernel that started first. On the H200 trace of
//!   q8_0 KV, `fwht_cuda` summed 10.6 ms but owned 0.4 ms: it was waiting on `flash_attn_ext_vec`.
//! - **Across streams** (or devices) kernels really run side by side; each instant is split evenly
//!   among the streams busy in it.
//!
//! So every instant of busy time goes, in equal parts, to the earliest-started running kernel of
//! each stream busy at that instant. The kernels' exclusive times add up to the busy time (the
//! union of their intervals), and a kernel that runs alone keeps its full duration.
use std::collections::HashMap;

use super::exclusive_sweep::ExclusiveSweep;
use super::kernels::Aggregate;
use super::phase::PhaseWindows;
use super::source::{Dispatch, KernelKey, KernelSource};
use super::TraceError;

/// Busy time and the exclusive time of each kernel, by full kernel name.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct OverlapSplit {
    /// Union of the kernel intervals, ns.
    pub(crate) busy_ns: u64,
    /// Exclusive ns per kernel name; sums to `busy_ns` (up to floating-point rounding).
    pub(crate) exclusive_ns: HashMap<String, f64>,
}

/// Sweeps the dispatches whose start lies in `[lo, hi]` (all when `None`).
pub(crate) fn split(source: &dyn KernelSource, lo: Option<i64>, hi: Option<i64>) -> Result<OverlapSplit, TraceError> {
    let (lo, hi) = (lo.unwrap_or(i64::MIN), hi.unwrap_or(i64::MAX));
    let mut sweep: ExclusiveSweep<KernelKey> = ExclusiveSweep::default();
    source.for_each_by_start(&mut |d: Dispatch| {
        if (lo..=hi).contains(&d.start) {
            sweep.push(d.start, d.end, d.lane, d.key);
        }
    })?;
    named(source, sweep.finish())
}

/// Per-kernel totals with `windows` and the split of the dispatches starting in `[lo, hi]`: in
/// one pass where the reader can sweep while it aggregates, else aggregated, then swept.
pub(crate) fn aggregate_and_split(
    source: &dyn KernelSource,
    windows: Option<&PhaseWindows>,
    lo: Option<i64>,
    hi: Option<i64>,
) -> Result<(Aggregate, OverlapSplit), TraceError> {
    let (agg, swept) = source.aggregate_and_sweep(windows, (lo.unwrap_or(i64::MIN), hi.unwrap_or(i64::MAX)))?;
    let split = match swept {
        Some(swept) => named(source, swept)?,
        None => split(source, lo, hi)?,
    };
    Ok((agg, split))
}

/// Busy ns and exclusive ns by key, the keys named.
fn named(
    source: &dyn KernelSource,
    (busy_ns, by_key): (u64, HashMap<KernelKey, f64>),
) -> Result<OverlapSplit, TraceError> {
    let keys: Vec<KernelKey> = by_key.keys().copied().collect();
    let names = source.key_names(&keys)?;
    let mut exclusive_ns: HashMap<String, f64> = HashMap::with_capacity(by_key.len());
    for (key, ns) in by_key {
        let name = names.get(&key).cloned().unwrap_or_else(|| format!("<unknown kernel {}:{}>", key.set, key.id));
        *exclusive_ns.entry(name).or_default() += ns;
    }
    Ok(OverlapSplit { busy_ns, exclusive_ns })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (start, end, lane, key)
    fn sweep(spans: &[(i64, i64, i64, u8)]) -> (u64, HashMap<u8, f64>) {
        let mut v = spans.to_vec();
        v.sort();
        let mut s = ExclusiveSweep::default();
        for (a, b, lane, k) in v {
            s.push(a, b, lane, k);
        }
        s.finish()
    }

    fn get(m: &HashMap<u8, f64>, k: u8) -> f64 {
        m.get(&k).copied().unwrap_or(f64::NAN)
    }

    #[test]
    fn disjoint_kernels_keep_their_durations() {
        let (busy, ex) = sweep(&[(0, 10, 0, 1), (20, 25, 0, 2), (25, 30, 0, 1)]);
        assert_eq!(busy, 20);
        assert_eq!((get(&ex, 1), get(&ex, 2)), (15.0, 5.0));
    }

    #[test]
    fn in_one_stream_the_kernel_that_started_first_owns_the_overlap() {
        // Programmatic dependent launch: 2 starts at 4 and waits until 1 ends at 10; 3 starts
        // at 5 and waits for 2.
        let (busy, ex) = sweep(&[(0, 10, 7, 1), (4, 12, 7, 2), (5, 13, 7, 3)]);
        assert_eq!(busy, 13);
        assert_eq!((get(&ex, 1), get(&ex, 2), get(&ex, 3)), (10.0, 2.0, 1.0));
    }

    #[test]
    fn across_streams_overlap_is_split_evenly() {
        // Lane 0 alone 0..4, both 4..10 (3 each), lane 1 alone 10..12.
        let (busy, ex) = sweep(&[(0, 10, 0, 1), (4, 12, 1, 2)]);
        assert_eq!(busy, 12);
        assert_eq!((get(&ex, 1), get(&ex, 2)), (7.0, 5.0));
        // Lane 1 runs a PDL pair beside lane 0's long kernel: its waiting kernel gets nothing
        // while its predecessor runs.
        let (busy, ex) = sweep(&[(0, 100, 0, 1), (40, 60, 1, 2), (41, 50, 1, 3)]);
        assert_eq!(busy, 100);
        assert_eq!((get(&ex, 1), get(&ex, 2), get(&ex, 3)), (90.0, 10.0, 0.0));
    }

    #[test]
    fn glitched_records_count_as_calls_of_no_time() {
        let (busy, ex) = sweep(&[(0, 10, 0, 1), (5, 5, 0, 2), (8, 3, 0, 3)]);
        assert_eq!(busy, 10);
        assert_eq!((get(&ex, 1), get(&ex, 2), get(&ex, 3)), (10.0, 0.0, 0.0));
    }

    /// Against a brute force over unit time steps, on random overlapping intervals.
    #[test]
    fn matches_a_brute_force_split() {
        let mut state: u64 = 0x9e3779b97f4a7c15;
        let mut rnd = |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n
        };
        for _ in 0..300 {
            let mut spans: Vec<(i64, i64, i64, u8)> = (0..rnd(12) + 1)
                .map(|_| {
                    let a = rnd(60) as i64;
                    (a, a + rnd(25) as i64, rnd(3) as i64, rnd(4) as u8)
                })
                .collect();
            spans.sort();
            let (busy, ex) = sweep(&spans);
            let mut want_busy = 0u64;
            let mut want: HashMap<u8, f64> = HashMap::new();
            for t in 0..100i64 {
                // Per lane, the first (in start order) of the kernels covering t.
                let mut owners: Vec<(i64, u8)> = Vec::new();
                for s in spans.iter().filter(|s| s.0 <= t && t < s.1) {
                    if !owners.iter().any(|o| o.0 == s.2) {
                        owners.push((s.2, s.3));
                    }
                }
                if !owners.is_empty() {
                    want_busy += 1;
                }
                for (_, k) in &owners {
                    *want.entry(*k).or_default() += 1.0 / owners.len() as f64;
                }
            }
            assert_eq!(busy, want_busy, "{spans:?}");
            for (k, w) in want {
                assert!((get(&ex, k) - w).abs() < 1e-9, "{spans:?} key {k}: {} vs {w}", get(&ex, k));
            }
            let total: f64 = ex.values().sum();
            assert!((total - busy as f64).abs() < 1e-6);
        }
    }
}
