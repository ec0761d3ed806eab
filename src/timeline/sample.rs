//! The sample's own record on the timeline: the lifecycle (spawn, health wait, warm-up, idle
//! gate, request, stop) on one track, and the request's prefill, decode and streamed tokens
//! nested inside it (docs/methodology.md §14).
use super::event::{Event, Track};
use crate::clock::{Span, Stamp};
use crate::measure::Sample;

/// Puts a sample's stamps on CLOCK_BOOTTIME: each at its CLOCK_MONOTONIC reading plus one
/// boottime − monotonic difference, read at the server's spawn. The two clocks differ only by
/// time suspended, so the intervals keep the durations the sample measured and nest exactly
/// (a token stamped on the monotonic clock alone lands where the stream saw it).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Place {
    offset: i64,
}

impl Place {
    pub(crate) fn of(s: &Sample) -> Place {
        Place { offset: s.server_started.boot_ns as i64 - s.server_started.mono_ns as i64 }
    }

    pub(crate) fn stamp(self, s: Stamp) -> i64 {
        self.mono(s.mono_ns)
    }

    fn mono(self, ns: u64) -> i64 {
        ns as i64 + self.offset
    }
}

/// Where the request's phases sit, in CLOCK_BOOTTIME ns; kernels are placed by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RequestMarks {
    pub(crate) start: i64,
    pub(crate) first_token: i64,
    pub(crate) last_token: i64,
    pub(crate) end: i64,
}

impl RequestMarks {
    pub(crate) fn of(s: &Sample) -> Option<RequestMarks> {
        let at = Place::of(s);
        Some(RequestMarks {
            start: at.stamp(s.request_start?),
            first_token: at.stamp(s.first_token?),
            last_token: at.stamp(s.last_token?),
            end: at.stamp(s.response_end?),
        })
    }
}

/// The lifecycle's steps and the request, and what the record lacks to draw more.
pub(crate) struct SampleEvents {
    pub(crate) events: Vec<Event>,
    pub(crate) tokens: usize,
    pub(crate) notes: Vec<String>,
}

/// The one track everything of the sample goes on: nested slices show the request's phases
/// inside the request and its tokens inside decode.
pub(crate) const LIFECYCLE: Track = Track { pid: 1, tid: 1 };

pub(crate) fn events(s: &Sample) -> SampleEvents {
    let (t, at) = (LIFECYCLE, Place::of(s));
    let mut out = SampleEvents { events: Vec::new(), tokens: 0, notes: Vec::new() };
    let started = at.stamp(s.server_started);
    let argv: Vec<serde_json::Value> = s.server_argv.iter().map(|a| a.as_str().into()).collect();
    out.events.push(t.instant("server spawned", "lifecycle", started).arg("pid", s.server_pid).arg("argv", argv));
    // Records before the steps were kept hold health only as spawn + startup_ms.
    let healthy = match (s.steps.healthy, s.startup_ms) {
        (Some(h), _) => Some(at.stamp(h)),
        (None, Some(ms)) => {
            out.notes.push("health: spawn + startup_ms (the record predates per-step stamps)".into());
            Some(started + (ms * 1e6).round() as i64)
        }
        (None, None) => None,
    };
    if let Some(h) = healthy {
        let wait = t.complete("health wait (model load)", "lifecycle", started, h);
        out.events.push(wait.arg("startup_ms", s.startup_ms));
    }
    let warm_up = step(at, s.steps.warm_up, "warm-up", &mut out.notes);
    out.events.extend(warm_up.map(|e| e.arg("prompt_cache_warm_up", s.cache_prompt)));
    let gate = step(at, s.steps.idle_gate, "idle gate", &mut out.notes);
    out.events.extend(gate.map(|e| match &s.extra.idle_gate {
        Some(g) => e.arg("waited_ms", g.waited_ms).arg("source", g.source.as_str()),
        None => e,
    }));
    request(s, &mut out);
    let stop = step(at, s.steps.stop, "stop", &mut out.notes);
    out.events.extend(stop.map(|e| match &s.stop {
        Some(r) => e.arg("exit", r.exit.as_str()).arg("killed", r.killed),
        None => e,
    }));
    out
}

/// One lifecycle step as an interval, or a note that the record does not hold it.
fn step(at: Place, span: Option<Span>, name: &str, notes: &mut Vec<String>) -> Option<Event> {
    if span.is_none() {
        notes.push(format!("{name}: not in the record (it predates per-step stamps, or the sample never got there)"));
    }
    span.map(|sp| LIFECYCLE.complete(name.to_string(), "lifecycle", at.stamp(sp.start), at.stamp(sp.end)))
}

fn request(s: &Sample, out: &mut SampleEvents) {
    let t = LIFECYCLE;
    let Some(m) = RequestMarks::of(s) else {
        out.notes.push("request: the record has no request start, first and last token and response end".into());
        return;
    };
    let mut req = t
        .complete("request", "request", m.start, m.end)
        .arg("prompt_tokens", s.prompt_tokens())
        .arg("output_tokens", s.completion_tokens())
        .arg("finish_reason", s.finish_reason.clone())
        .arg("http_elapsed_ms", s.stream.http_elapsed_ms);
    if let Some(cpu) = s.extra.telemetry.as_ref().and_then(|t| t.host_cpu.as_ref()) {
        req = req.arg("host_foreign_cpu_pct", cpu.foreign_pct).arg("server_cpu_pct", cpu.server_pct);
    }
    out.events.push(req);
    let server = s.server.as_ref();
    let prefill = t.complete("prefill", "request", m.start, m.first_token);
    out.events.push(prefill.arg("ttft_ms", s.stream.ttft_ms).arg("server_prefill_ms", server.map(|t| t.prefill_ms)));
    let decode = t.complete("decode", "request", m.first_token, m.last_token);
    out.events.push(decode.arg("strict_tps", s.stream.strict_tps).arg("server_decode_ms", server.map(|t| t.decode_ms)));
    if s.token_mono_ns.is_empty() {
        out.notes.push("tokens: the record predates per-token stamps (only the first and last are placed)".into());
        return;
    }
    let at = Place::of(s);
    for (i, &mono) in s.token_mono_ns.iter().enumerate() {
        out.events.push(t.instant("token", "token", at.mono(mono)).arg("n", i + 1));
    }
    out.tokens = s.token_mono_ns.len();
}
