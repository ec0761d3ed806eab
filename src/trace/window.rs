//! Which kernels belong to decode.
//!
//! Preferred: the request's decode window (first → last streamed token) recorded by `abprof
//! trace` in CLOCK_BOOTTIME, the clock rocprofv3 stamps kernels with. When that window holds no
//! kernel (nsys timestamps are session-relative) or there is none (a bare trace file), a
//! heuristic takes over, and the report says which:
//!
//! 1. **CUDA graphs**: llama.cpp replays decode steps as CUDA graphs (nsys
//!    `--cuda-graph-trace=node` records `graphNodeId`; rocpd ≥ 3.0.2 `graph_node_id`), while
//!    prefill runs eagerly. Decode = from the first to the last graph-launched kernel. The first
//!    decode steps, run eagerly while the graph warms up, land in prefill.
//! 2. **Step gaps** (needs the output token count N): between two decode steps the GPU idles
//!    while the host samples and builds the next graph (hundreds of µs), while kernels inside a
//!    step follow each other within a few µs. Kernels are split into bursts at idle gaps ≥
//!    [`BURST_GAP_NS`] (load, warmup and shutdown are that far from the request) and bursts into
//!    steps at idle gaps ≥ T, for the largest T in [`GAP_THRESHOLDS_NS`] at which a burst has at
//!    least N steps (prefill + N−1 decode steps); the last N−1 steps of the last such burst are
//!    decode, everything before is prefill (and warmup).
//! 3. **Whole trace**: everything counts, prefill included.
use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use super::kernels::Aggregate;
use super::overlap::{self, OverlapSplit};
use super::phase::{Phase, PhaseWindows, BURST_GAP_NS};
use super::source::{Dispatch, KernelSource};
use super::TraceError;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum WindowMethod {
    ManifestWindow,
    CudaGraph,
    StepGaps,
    WholeTrace,
}

/// How decode was told apart, in words for the report.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct WindowChoice {
    pub(crate) method: WindowMethod,
    pub(crate) description: String,
    pub(crate) decode_start_ns: Option<i64>,
    pub(crate) decode_end_ns: Option<i64>,
    /// Why the better methods could not be used.
    pub(crate) notes: Vec<String>,
}

impl WindowChoice {
    /// The phase windows this choice counted by: the manifest's (`requested`) when it was used,
    /// the found decode window otherwise, none for the whole trace.
    pub(crate) fn windows(&self, requested: Option<PhaseWindows>) -> Option<PhaseWindows> {
        match (self.method, self.decode_start_ns, self.decode_end_ns) {
            (WindowMethod::ManifestWindow, ..) => requested,
            (_, Some(decode_start), Some(decode_end)) => {
                Some(PhaseWindows { decode_start, decode_end, prefill_start: None })
            }
            _ => None,
        }
    }
}

/// Idle-gap thresholds tried by the step-gap heuristic, largest first.
pub(crate) const GAP_THRESHOLDS_NS: [i64; 8] =
    [5_000_000, 2_000_000, 1_000_000, 500_000, 200_000, 100_000, 50_000, 20_000];

/// Aggregates `source` with the best decode window available (see the module docs).
/// `decode_steps` is the number of decode steps of the traced request (output tokens − 1).
/// With `busy`, also the decode window's busy time and exclusive split ([`overlap`]), swept in the
/// same pass where the reader can.
pub(crate) fn best_window(
    source: &dyn KernelSource,
    requested: Option<PhaseWindows>,
    decode_steps: Option<u32>,
    busy: bool,
) -> Result<(Aggregate, WindowChoice, Option<OverlapSplit>), TraceError> {
    let mut notes = Vec::new();
    let measure = |w: Option<&PhaseWindows>| -> Result<(Aggregate, Option<OverlapSplit>), TraceError> {
        if busy {
            let (lo, hi) = (w.map(|w| w.decode_start), w.map(|w| w.decode_end));
            let (agg, split) = overlap::aggregate_and_split(source, w, lo, hi)?;
            Ok((agg, Some(split)))
        } else {
            Ok((source.aggregate(w)?, None))
        }
    };

    if let Some(w) = requested {
        let (agg, split) = measure(Some(&w))?;
        if agg.phase_total(Phase::Decode).calls > 0 {
            let choice = WindowChoice {
                method: WindowMethod::ManifestWindow,
                description: "decode window from the trace manifest (first to last streamed token, CLOCK_BOOTTIME); \
                              prefill = kernels from the request to the first token"
                    .into(),
                decode_start_ns: Some(w.decode_start),
                decode_end_ns: Some(w.decode_end),
                notes,
            };
            return Ok((agg, choice, split));
        }
        notes.push(format!(
            "the manifest's decode window [{}, {}] ns holds no kernel: the trace uses another clock \
             (nsys timestamps are session-relative)",
            w.decode_start, w.decode_end
        ));
    }

    if let Some((start, end)) = source.graph_span()? {
        let w = PhaseWindows { decode_start: start, decode_end: end, prefill_start: None };
        let choice = WindowChoice {
            method: WindowMethod::CudaGraph,
            description: "decode = the last burst of kernels launched from a CUDA/HIP graph (llama.cpp replays decode \
                          steps as graphs while prefill runs eagerly; the warmup graph at load is a separate, earlier \
                          burst); eager decode steps before the graphs warm up count as prefill"
                .into(),
            decode_start_ns: Some(start),
            decode_end_ns: Some(end),
            notes,
        };
        let (agg, split) = measure(Some(&w))?;
        return Ok((agg, choice, split));
    }
    notes.push("no kernel was launched from a CUDA/HIP graph (or the trace has no graph node ids)".into());

    match decode_steps {
        Some(n) if n >= 1 => match find_steps(source, n as usize)? {
            Some(found) => {
                let w = PhaseWindows { decode_start: found.decode_start, decode_end: found.decode_end, prefill_start: None };
                let choice = WindowChoice {
                    method: WindowMethod::StepGaps,
                    description: format!(
                        "kernels split into steps at GPU idle gaps >= {} us ({} steps in the last burst of activity); the last {} steps are \
                         decode, everything before is prefill and warmup",
                        found.threshold_ns / 1000,
                        found.steps,
                        n
                    ),
                    decode_start_ns: Some(found.decode_start),
                    decode_end_ns: Some(found.decode_end),
                    notes,
                };
                let (agg, split) = measure(Some(&w))?;
                return Ok((agg, choice, split));
            }
            None => notes.push(format!(
                "no burst of GPU activity has {} steps separated by idle gaps >= {} us: the decode steps could not be told apart",
                n + 1,
                GAP_THRESHOLDS_NS[GAP_THRESHOLDS_NS.len() - 1] / 1000
            )),
        },
        _ => notes.push("the output token count is unknown (pass --tokens N) so decode steps cannot be counted".into()),
    }

    let choice = WindowChoice {
        method: WindowMethod::WholeTrace,
        description:
            "no decode window could be found: every kernel in the trace is counted, prefill and warmup included".into(),
        decode_start_ns: None,
        decode_end_ns: None,
        notes,
    };
    let (agg, split) = measure(None)?;
    Ok((agg, choice, split))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct StepsFound {
    pub(crate) threshold_ns: i64,
    /// Steps in the burst the decode steps were taken from.
    pub(crate) steps: u64,
    pub(crate) decode_start: i64,
    pub(crate) decode_end: i64,
}

/// Step counting at one idle-gap threshold, keeping only the starts of the current burst's
/// last `keep` steps.
struct StepCounter {
    threshold_ns: i64,
    burst_steps: u64,
    burst_starts: VecDeque<i64>,
    burst_end: i64,
    found: Option<StepsFound>,
}

impl StepCounter {
    fn close_burst(&mut self, decode_steps: usize) {
        // The request's burst holds prefill and then every decode step.
        if self.burst_steps > decode_steps as u64 {
            if let Some(&start) = self.burst_starts.front() {
                self.found = Some(StepsFound {
                    threshold_ns: self.threshold_ns,
                    steps: self.burst_steps,
                    decode_start: start,
                    decode_end: self.burst_end,
                });
            }
        }
        self.burst_steps = 0;
        self.burst_starts.clear();
    }

    fn open_step(&mut self, start: i64, decode_steps: usize) {
        self.burst_steps += 1;
        if self.burst_starts.len() == decode_steps {
            self.burst_starts.pop_front();
        }
        self.burst_starts.push_back(start);
    }
}

/// Finds the last `decode_steps` steps of the last burst that has at least `decode_steps + 1`
/// (see the module docs). One pass in start order; memory is `decode_steps` timestamps per
/// threshold.
pub(crate) fn find_steps(source: &dyn KernelSource, decode_steps: usize) -> Result<Option<StepsFound>, TraceError> {
    if decode_steps == 0 {
        return Ok(None);
    }
    let mut counters: Vec<StepCounter> = GAP_THRESHOLDS_NS
        .iter()
        .map(|&t| StepCounter {
            threshold_ns: t,
            burst_steps: 0,
            burst_starts: VecDeque::with_capacity(decode_steps + 1),
            burst_end: 0,
            found: None,
        })
        .collect();
    let mut max_end: Option<i64> = None;
    source.for_each_by_start(&mut |Dispatch { start, end, .. }| {
        // Idle time is measured from the latest end seen so far, so overlapping kernels on
        // several streams never open a step.
        let gap = max_end.map(|m| start - m);
        for c in counters.iter_mut() {
            match gap {
                Some(g) if g < BURST_GAP_NS => {
                    if g >= c.threshold_ns {
                        c.open_step(start, decode_steps);
                    }
                    c.burst_end = c.burst_end.max(end);
                }
                _ => {
                    c.close_burst(decode_steps);
                    c.open_step(start, decode_steps);
                    c.burst_end = end;
                }
            }
        }
        max_end = Some(max_end.map_or(end, |m| m.max(end)));
    })?;
    for c in counters.iter_mut() {
        c.close_burst(decode_steps);
    }
    Ok(counters.iter().find_map(|c| c.found))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::kernels::{accumulate, Totals};
    use crate::trace::phase::PHASES;
    use crate::trace::source::KernelKey;
    use std::collections::HashMap;

    /// Intervals in memory, for heuristics tests.
    struct Fake(Vec<(i64, i64)>, Option<(i64, i64)>);

    impl KernelSource for Fake {
        fn describe(&self) -> String {
            "fake".into()
        }
        fn aggregate(&self, w: Option<&PhaseWindows>) -> Result<Aggregate, TraceError> {
            let mut m: HashMap<usize, [Totals; PHASES]> = HashMap::new();
            for &(s, e) in &self.0 {
                accumulate(&mut m, 0, s, e, w);
            }
            Ok(Aggregate::from_ids(m, |_| "k".into()))
        }
        fn graph_span(&self) -> Result<Option<(i64, i64)>, TraceError> {
            Ok(self.1)
        }
        fn for_each_by_start(&self, f: &mut dyn FnMut(Dispatch)) -> Result<(), TraceError> {
            let mut v = self.0.clone();
            v.sort();
            let key = KernelKey { set: 0, id: 0 };
            v.into_iter().for_each(|(start, end)| f(Dispatch { start, end, key, lane: 0 }));
            Ok(())
        }
        fn key_names(&self, keys: &[KernelKey]) -> Result<HashMap<KernelKey, String>, TraceError> {
            Ok(keys.iter().map(|k| (*k, "k".to_string())).collect())
        }
    }

    /// Warmup step, 2 s idle, a long prefill step, then `n` decode steps of 3 kernels 5 µs
    /// apart with 300 µs between steps.
    fn request(n: usize) -> Vec<(i64, i64)> {
        let mut v = vec![(0, 40_000), (45_000, 80_000)];
        let mut t = 2_000_000_000;
        for _ in 0..5 {
            v.push((t, t + 900_000));
            t += 905_000;
        }
        for _ in 0..n {
            t += 300_000;
            for _ in 0..3 {
                v.push((t, t + 50_000));
                t += 55_000;
            }
        }
        v
    }

    #[test]
    fn step_gaps_find_the_last_decode_steps() {
        let src = Fake(request(8), None);
        let found = find_steps(&src, 8).unwrap().unwrap();
        // 300 µs decode gaps: 200 µs is the largest threshold that yields > 8 steps.
        assert_eq!(found.threshold_ns, 200_000);
        let (agg, choice, _) = best_window(&src, None, Some(8), false).unwrap();
        assert_eq!(choice.method, WindowMethod::StepGaps);
        assert_eq!(agg.phase_total(Phase::Decode).calls, 24);
        assert_eq!(agg.phase_total(Phase::Prefill).calls, 7);
    }

    #[test]
    fn graph_span_wins_over_gaps_and_window_mismatch_is_noted() {
        let src = Fake(request(4), Some((2_004_525_000, i64::MAX)));
        let req = PhaseWindows { decode_start: 10, decode_end: 20, prefill_start: None };
        let (agg, choice, _) = best_window(&src, Some(req), Some(4), false).unwrap();
        assert_eq!(choice.method, WindowMethod::CudaGraph);
        assert!(choice.notes[0].contains("holds no kernel"));
        assert_eq!(agg.phase_total(Phase::Decode).calls, 12);
    }

    #[test]
    fn without_tokens_everything_counts() {
        let (agg, choice, _) = best_window(&Fake(request(4), None), None, None, false).unwrap();
        assert_eq!(choice.method, WindowMethod::WholeTrace);
        assert_eq!(agg.phase_total(Phase::Decode).calls, 2 + 5 + 12);
        assert!(choice.notes.iter().any(|n| n.contains("--tokens")));
    }
}
