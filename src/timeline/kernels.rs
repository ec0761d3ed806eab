//! A traced sample's kernels on the timeline, one track per stream, read through the trace
//! readers of src/trace/ (docs/methodology.md §14).
//!
//! rocprofv3 stamps kernels in CLOCK_BOOTTIME, the timeline's clock: when the manifest's decode
//! window holds kernels they are drawn where they ran. Nsight Systems counts from its session's
//! start, so its clock is tied to the sample's by the decode window the trace analysis finds
//! (src/trace/window.rs): the end of the trace's last decode step is placed at the last streamed
//! token. Both events end a request's last step, up to the host's sampling and send of that
//! token (well under a decode step), so the placement is that close and no closer.
use super::event::{name_process, Event, KernelArgs, Shared, Track};
use super::sample::RequestMarks;
use crate::trace::phase::{Phase, PhaseWindows};
use crate::trace::source::Dispatch;
use crate::trace::window::{best_window, WindowMethod};
use crate::trace::{detect, names, Rules, TraceError, TraceInput};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};

/// The process the kernel tracks belong to.
pub(crate) const KERNELS_PID: u32 = 3;

/// How the trace's clock was put on the timeline's.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Alignment {
    /// Added to a trace timestamp to give CLOCK_BOOTTIME ns.
    pub(crate) offset_ns: i64,
    /// The decode window's method (src/trace/window.rs).
    pub(crate) window: WindowMethod,
    pub(crate) description: String,
}

pub(crate) struct Kernels {
    pub(crate) events: Vec<Event>,
    /// The streams kernels ran on.
    pub(crate) streams: Vec<String>,
    /// Tracks drawn: a stream's first row, and a row more for each depth of overlap on it.
    pub(crate) tracks: usize,
    pub(crate) launches: usize,
    pub(crate) alignment: Alignment,
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum KernelError {
    #[error(transparent)]
    Trace(#[from] TraceError),
    #[error("{trace}: no decode window was found in the trace ({notes}), so its clock cannot be tied to the sample's; the kernels are not drawn")]
    Unaligned { trace: String, notes: String },
}

fn phase_name(p: Phase) -> &'static str {
    match p {
        Phase::BeforePrefill => "before-request",
        Phase::Prefill => "prefill",
        Phase::Decode => "decode",
        Phase::AfterDecode => "after-decode",
    }
}

/// "device D · stream S" from a reader's lane (src/trace/source.rs: device in the high 32 bits).
fn stream_name(lane: i64) -> String {
    format!("device {} · stream {}", lane >> 32, lane & 0xffff_ffff)
}

/// A stream's row: the first holds every kernel that starts after its predecessor ended.
fn track_name(lane: i64, row: usize) -> String {
    match row {
        0 => stream_name(lane),
        r => format!("{} · overlap row {}", stream_name(lane), r + 1),
    }
}

/// Every kernel launch of the trace as an `X` event on its stream's track, placed on the sample's
/// timeline, with its phase judged in the trace's own clock as the attribution judges it.
pub(crate) fn events(input: &TraceInput, marks: RequestMarks, rules: &Rules) -> Result<Kernels, KernelError> {
    let source = detect::open_trace(&input.trace_path)?;
    let manifest = input.manifest.as_ref();
    let requested = manifest
        .filter(|m| m.tracer.stamps_in_boottime())
        .and_then(|m| m.decode_window.map(|d| PhaseWindows::from_manifest(d, m.prefill_window)));
    let decode_steps = manifest.map(|m| m.output_tokens.saturating_sub(1));
    let (_, choice, _) = best_window(source.as_ref(), requested, decode_steps, false)?;
    let offset_ns = match (choice.method, choice.decode_end_ns) {
        (WindowMethod::ManifestWindow, _) => 0,
        (_, Some(end)) => marks.last_token - end,
        (_, None) => {
            return Err(KernelError::Unaligned {
                trace: input.trace_path.display().to_string(),
                notes: choice.notes.join("; "),
            })
        }
    };
    let description = if offset_ns == 0 {
        "the trace's own CLOCK_BOOTTIME stamps (its decode window from the manifest holds kernels)".to_string()
    } else {
        format!(
            "the trace's clock shifted by {offset_ns} ns so that its decode window's end ({}) falls on the last streamed token",
            choice.description
        )
    };
    let windows = PhaseWindows {
        decode_start: choice.decode_start_ns.unwrap_or(marks.first_token - offset_ns),
        decode_end: choice.decode_end_ns.unwrap_or(marks.last_token - offset_ns),
        prefill_start: Some(marks.start - offset_ns),
    };
    let mut launches: Vec<Dispatch> = Vec::new();
    source.for_each_by_start(&mut |d| launches.push(d))?;
    let mut keys: Vec<_> = launches.iter().map(|d| d.key).collect();
    keys.sort_unstable();
    keys.dedup();
    let full_names = source.key_names(&keys)?;
    let mut named: HashMap<_, (Shared, Shared, Option<Shared>)> = HashMap::with_capacity(keys.len());
    for k in keys {
        let full = full_names.get(&k).map_or("<unnamed>", String::as_str);
        named.insert(k, (names::base_name(full).into(), full.into(), rules.categorize(full).map(Shared::from)));
    }
    // Kernels of one stream overlap when the next is launched before its predecessor ends
    // (programmatic dependent launch, src/trace/overlap.rs); a viewer would nest or drop those,
    // so each goes to the stream's first row that is free at its start.
    let mut row_ends: HashMap<i64, Vec<i64>> = HashMap::new();
    let rows: Vec<(i64, usize)> = launches
        .iter()
        .map(|d| {
            let ends = row_ends.entry(d.lane).or_default();
            let row = ends.iter().position(|&end| end <= d.start).unwrap_or(ends.len());
            if row == ends.len() {
                ends.push(d.end);
            } else {
                ends[row] = d.end;
            }
            (d.lane, row)
        })
        .collect();
    let tids: BTreeMap<(i64, usize), u32> = {
        let mut used = rows.clone();
        used.sort_unstable();
        used.dedup();
        used.into_iter().zip(1..).collect()
    };
    let tracks: Vec<(u32, String)> = tids.iter().map(|(&(lane, row), &tid)| (tid, track_name(lane, row))).collect();
    let mut out = Vec::with_capacity(launches.len() + 2 + 2 * tracks.len());
    name_process(&mut out, KERNELS_PID, &format!("GPU kernels: {}", source.describe()), &tracks);
    for (d, row) in launches.iter().zip(&rows) {
        let (short, full, category) = &named[&d.key];
        let track = Track { pid: KERNELS_PID, tid: tids[row] };
        let mut e = track.complete(short.clone(), "kernel", d.start + offset_ns, d.end + offset_ns);
        e.args = super::event::Args::Kernel(KernelArgs {
            kernel: full.clone(),
            category: category.clone(),
            phase: phase_name(windows.classify(d.start)),
        });
        out.push(e);
    }
    let mut streams: Vec<String> = tids.keys().map(|&(lane, _)| stream_name(lane)).collect();
    streams.dedup();
    Ok(Kernels {
        events: out,
        streams,
        tracks: tracks.len(),
        launches: launches.len(),
        alignment: Alignment { offset_ns, window: choice.method, description },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::study::trace_folder::trace_input as resolve_input;
    use std::path::Path;

    fn fixture(p: &str) -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join(p)
    }

    /// Per (stream track name, launches) from the trace's own table, by SQL, not by the reader.
    fn streams_by_sql(db: &Path, sql: &str) -> Vec<(String, usize)> {
        let conn = rusqlite::Connection::open(db).unwrap();
        let mut st = conn.prepare(sql).unwrap();
        st.query_map([], |r| Ok((stream_name((r.get::<_, i64>(0)? << 32) + r.get::<_, i64>(1)?), r.get(2)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    }

    /// What a viewer would show: launches per stream (over its rows), no two overlapping on one
    /// track, and the decode launches inside decode.
    fn check(k: &Kernels, marks: RequestMarks, expected_streams: &[(String, usize)], decode_launches: u64) {
        let mut per_tid: BTreeMap<u32, usize> = BTreeMap::new();
        let mut row_end: BTreeMap<u32, f64> = BTreeMap::new();
        let mut names: BTreeMap<u32, String> = BTreeMap::new();
        let mut decode = 0;
        for e in &k.events {
            assert_eq!(e.pid, KERNELS_PID);
            let v = serde_json::to_value(e).unwrap();
            match v["ph"].as_str().unwrap() {
                "M" if v["name"] == "thread_name" => {
                    names.insert(e.tid, v["args"]["name"].as_str().unwrap().into());
                }
                "M" => {}
                "X" => {
                    assert!(e.dur.unwrap() >= 0.0);
                    *per_tid.entry(e.tid).or_default() += 1;
                    let end = row_end.entry(e.tid).or_insert(f64::MIN);
                    assert!(e.ts >= *end, "kernels on one track never overlap");
                    *end = e.ts + e.dur.unwrap();
                    if v["args"]["phase"] == "decode" {
                        decode += 1;
                        let (ts, first, last) = (e.ts * 1e3, marks.first_token as f64, marks.last_token as f64);
                        // f64 µs of boot time round to well under 1 ns.
                        assert!(
                            ts >= first - 1.0 && ts <= last + 1.0,
                            "decode kernel at {ts} outside [{first}, {last}]"
                        );
                    }
                }
                other => panic!("kernel tracks hold only X and M events, not {other}"),
            }
        }
        let mut drawn: BTreeMap<String, usize> = BTreeMap::new();
        for (tid, n) in per_tid {
            let stream = names[&tid].split(" · overlap row").next().unwrap();
            *drawn.entry(stream.to_string()).or_default() += n;
        }
        assert_eq!(drawn.into_iter().collect::<Vec<_>>(), expected_streams);
        assert_eq!(names.len(), k.tracks);
        assert_eq!(k.launches, expected_streams.iter().map(|s| s.1).sum::<usize>());
        assert_eq!(decode, decode_launches, "the decode launches are the attribution's");
    }

    /// The H200 nsys export (session-relative clock): placed by its CUDA-graph decode window, the
    /// last decode kernel ending on the last streamed token.
    #[test]
    fn nsys_kernels_land_on_their_stream_inside_decode() {
        let db = fixture("traces/nsys-h200-kv-f16-4steps.sqlite");
        let input = resolve_input(&db).unwrap();
        // A request whose last token came at boot 5,000 s and whose decode took 20 ms (the
        // fixture is its last 4 decode steps, 14.6 ms).
        let t = 5_000_000_000_000i64;
        let marks =
            RequestMarks { start: t - 90_000_000, first_token: t - 20_000_000, last_token: t, end: t + 100_000 };
        let k = events(&input, marks, &Rules::builtin()).unwrap();
        assert_eq!(k.alignment.window, WindowMethod::CudaGraph);
        let streams = streams_by_sql(
            &db,
            "SELECT deviceId, streamId, count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL GROUP BY 1, 2 ORDER BY 1, 2",
        );
        assert_eq!(streams, [("device 0 · stream 15".to_string(), 1844)]);
        // 690 kernels start before their predecessor on the stream ends (PDL): 3 rows deep.
        assert_eq!(k.tracks, 4);
        let src = detect::open_trace(&db).unwrap();
        let (agg, _, _) = best_window(src.as_ref(), None, None, false).unwrap();
        check(&k, marks, &streams, agg.phase_total(Phase::Decode).calls);
        let last_end = k.events.iter().filter_map(|e| e.dur.map(|d| e.ts + d)).fold(f64::MIN, f64::max);
        assert!((last_end * 1e3 - t as f64).abs() < 1.0, "the last kernel ends on the last token");
    }

    /// rocprofv3's rocpd database is in CLOCK_BOOTTIME: drawn where the kernels ran, with the
    /// load's warmup before the request and the shutdown blit after it.
    #[test]
    fn rocpd_kernels_land_on_their_stream_inside_decode() {
        let folder = fixture("traces/rocpd-kv-f16");
        let input = resolve_input(&folder).unwrap();
        let m = input.manifest.clone().unwrap();
        let (p, d) = (m.prefill_window.unwrap(), m.decode_window.unwrap());
        let marks = RequestMarks {
            start: p.start_ns as i64,
            first_token: d.start_ns as i64,
            last_token: d.end_ns as i64,
            end: d.end_ns as i64 + 1_000_000,
        };
        let k = events(&input, marks, &Rules::builtin()).unwrap();
        assert_eq!((k.alignment.window, k.alignment.offset_ns), (WindowMethod::ManifestWindow, 0));
        let streams = streams_by_sql(
            &folder.join("trace.db"),
            "SELECT agent_id, stream_id, count(*) FROM rocpd_kernel_dispatch GROUP BY 1, 2 ORDER BY 1, 2",
        );
        let expected: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(fixture("traces/rocpd-kv-f16.expected.json")).unwrap())
                .unwrap();
        assert_eq!(k.launches as u64, expected["dispatches"].as_u64().unwrap());
        let decode_calls: u64 = expected["phases"]["decode"]["kernels"]
            .as_object()
            .unwrap()
            .values()
            .map(|v| v["calls"].as_u64().unwrap())
            .sum();
        check(&k, marks, &streams, decode_calls);
        assert_eq!(k.tracks, 1, "no kernel of the rocpd fixture overlaps another");
        let phases: Vec<&str> = k
            .events
            .iter()
            .filter_map(|e| match &e.args {
                super::super::event::Args::Kernel(a) => Some(a.phase),
                _ => None,
            })
            .collect();
        assert_eq!(phases.first(), Some(&"before-request"), "the warmup at load comes first");
        assert_eq!(phases.last(), Some(&"after-decode"), "the shutdown blit comes last");
    }
}
