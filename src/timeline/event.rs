//! One Trace Event Format event (the JSON that chrome://tracing and ui.perfetto.dev open): the
//! fields every event carries, with `ts` and `dur` in µs of CLOCK_BOOTTIME (docs/methodology.md
//! §14).
use serde::Serialize;
use std::sync::Arc;

/// The event types abprof writes (the format's `ph`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub(crate) enum Ph {
    /// A complete event: an interval with `dur`.
    #[serde(rename = "X")]
    Complete,
    /// An instant on its thread's track.
    #[serde(rename = "i")]
    Instant,
    /// A counter sample: every arg is one numeric series of the track named by the event.
    #[serde(rename = "C")]
    Counter,
    /// Metadata: names and orders processes and threads.
    #[serde(rename = "M")]
    Metadata,
}

/// A string shared by many events (a kernel name repeated once per launch).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Shared(pub(crate) Arc<str>);

impl Serialize for Shared {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

impl From<&str> for Shared {
    fn from(s: &str) -> Shared {
        Shared(Arc::from(s))
    }
}

/// A kernel launch's details, typed so that a trace of 200,000 launches does not hold 200,000
/// maps.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct KernelArgs {
    /// The full name as the tracer printed it (the event's name is its function name).
    pub(crate) kernel: Shared,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) category: Option<Shared>,
    /// Which part of the request its start falls in: before-request, prefill, decode, after.
    pub(crate) phase: &'static str,
}

#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub(crate) enum Args {
    Map(serde_json::Map<String, serde_json::Value>),
    Kernel(KernelArgs),
}

impl Args {
    fn is_empty(&self) -> bool {
        matches!(self, Args::Map(m) if m.is_empty())
    }
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct Event {
    pub(crate) name: Shared,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) cat: Option<&'static str>,
    pub(crate) ph: Ph,
    /// µs since boot (CLOCK_BOOTTIME); 0 for metadata.
    pub(crate) ts: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) dur: Option<f64>,
    pub(crate) pid: u32,
    pub(crate) tid: u32,
    /// An instant's scope: `t`, its thread's track.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) s: Option<&'static str>,
    #[serde(skip_serializing_if = "Args::is_empty")]
    pub(crate) args: Args,
}

/// CLOCK_BOOTTIME ns as the format's µs; an f64 keeps every ns for 104 days of uptime.
pub(crate) fn us(boot_ns: i64) -> f64 {
    boot_ns as f64 / 1e3
}

/// Where an event goes: a process and a thread of the viewer's track tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Track {
    pub(crate) pid: u32,
    pub(crate) tid: u32,
}

impl Track {
    /// An interval `[start_ns, end_ns]`; a record whose end precedes its start (a tracer glitch)
    /// is drawn with no length, as the trace analysis counts it (src/trace/kernels.rs).
    pub(crate) fn complete(self, name: impl Into<Shared>, cat: &'static str, start_ns: i64, end_ns: i64) -> Event {
        let mut e = self.event(name.into(), Ph::Complete, Some(cat), start_ns);
        e.dur = Some(us(end_ns.saturating_sub(start_ns).max(0)));
        e
    }

    pub(crate) fn instant(self, name: impl Into<Shared>, cat: &'static str, at_ns: i64) -> Event {
        let mut e = self.event(name.into(), Ph::Instant, Some(cat), at_ns);
        e.s = Some("t");
        e
    }

    /// One value of the counter `name`, as the series `series` (its unit).
    pub(crate) fn counter(self, name: impl Into<Shared>, series: &str, at_ns: i64, value: f64) -> Event {
        let mut e = self.event(name.into(), Ph::Counter, Some("telemetry"), at_ns);
        e.args = Args::Map([(series.to_string(), value.into())].into_iter().collect());
        e
    }

    /// `process_name`, `thread_name`, `process_sort_index`, `thread_sort_index`.
    pub(crate) fn metadata(self, name: &str, value: serde_json::Value) -> Event {
        let key = if name.ends_with("_name") { "name" } else { "sort_index" };
        let mut e = self.event(name.into(), Ph::Metadata, None, 0);
        e.args = Args::Map([(key.to_string(), value)].into_iter().collect());
        e
    }

    fn event(self, name: Shared, ph: Ph, cat: Option<&'static str>, at_ns: i64) -> Event {
        Event {
            name,
            cat,
            ph,
            ts: us(at_ns),
            dur: None,
            pid: self.pid,
            tid: self.tid,
            s: None,
            args: Args::Map(Default::default()),
        }
    }
}

impl From<String> for Shared {
    fn from(s: String) -> Shared {
        Shared(Arc::from(s))
    }
}

impl Event {
    /// Adds one `args` entry (events with typed args keep theirs).
    pub(crate) fn arg(mut self, key: &str, value: impl Into<serde_json::Value>) -> Event {
        if let Args::Map(m) = &mut self.args {
            m.insert(key.into(), value.into());
        }
        self
    }
}

/// A process's and each thread's names and their order in the viewer.
pub(crate) fn name_process(out: &mut Vec<Event>, pid: u32, name: &str, threads: &[(u32, String)]) {
    let p = Track { pid, tid: 0 };
    out.push(p.metadata("process_name", name.into()));
    out.push(p.metadata("process_sort_index", pid.into()));
    for (tid, thread) in threads {
        let t = Track { pid, tid: *tid };
        out.push(t.metadata("thread_name", thread.as_str().into()));
        out.push(t.metadata("thread_sort_index", (*tid).into()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_serialize_as_the_format_names_them() {
        let t = Track { pid: 1, tid: 2 };
        let x = serde_json::to_value(t.complete("decode", "request", 1_000_500, 3_000_000)).unwrap();
        assert_eq!(
            x,
            serde_json::json!({"name": "decode", "cat": "request", "ph": "X", "ts": 1000.5, "dur": 1999.5, "pid": 1, "tid": 2})
        );
        let c = serde_json::to_value(t.counter("power_w", "W", 2_000, 41.5)).unwrap();
        assert_eq!(c["ph"], "C");
        assert_eq!(c["args"], serde_json::json!({"W": 41.5}));
        let i = serde_json::to_value(t.instant("token", "token", 5).arg("n", 1)).unwrap();
        assert_eq!((i["ph"].as_str(), i["s"].as_str(), i["ts"].as_f64()), (Some("i"), Some("t"), Some(0.005)));
        let m = serde_json::to_value(t.metadata("thread_name", "request".into())).unwrap();
        assert_eq!(m["args"], serde_json::json!({"name": "request"}));
        let inverted = t.complete("k", "kernel", 10, 5);
        assert_eq!(inverted.dur, Some(0.0));
    }
}
