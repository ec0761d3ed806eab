//! One sample as a Trace Event Format file (`abprof timeline`, docs/methodology.md §14): its
//! lifecycle, its request's phases and streamed tokens, its telemetry as counter tracks and, for
//! a traced sample, its kernels on their streams, all on one CLOCK_BOOTTIME timeline, ready for
//! ui.perfetto.dev and chrome://tracing.
//!
//! Floors: [`event`] (the format) → [`sample`] (the record's stamps), [`counters`] (the
//! telemetry series), [`kernels`] (the trace, through src/trace/) → [`input`] (which sample) →
//! [`build`] and [`write`] here.
mod counters;
mod event;
mod input;
mod kernels;
mod sample;

use crate::study::sample_folder::SampleFolder;
use event::{name_process, Event};
use serde::Serialize;
use std::io::Write;
use std::path::{Path, PathBuf};

pub(crate) use input::{resolve, TimelineInput};
pub(crate) use kernels::Alignment;

/// What was drawn, for the command's report and the file's `otherData`.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct TimelineFacts {
    pub(crate) sample: PathBuf,
    pub(crate) clock: &'static str,
    pub(crate) events: usize,
    /// Streamed tokens drawn as instants.
    pub(crate) tokens: usize,
    /// Counter tracks drawn from the telemetry series.
    pub(crate) counters: Vec<String>,
    pub(crate) telemetry_source: Option<String>,
    pub(crate) kernel_launches: usize,
    pub(crate) kernel_streams: Vec<String>,
    /// Kernel tracks: one per stream, and a row more for each depth of overlap on a stream.
    pub(crate) kernel_tracks: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) kernel_alignment: Option<Alignment>,
    /// What the record lacks, or what could not be drawn, and why.
    pub(crate) notes: Vec<String>,
}

pub(crate) struct Timeline {
    pub(crate) events: Vec<Event>,
    pub(crate) facts: TimelineFacts,
}

/// The timeline's clock, as the file states it.
const CLOCK: &str = "CLOCK_BOOTTIME, ts and dur in µs since boot";

/// Draws one sample. A damaged telemetry series or an unreadable trace costs only its own tracks:
/// the reason is a note, and the rest is drawn.
pub(crate) fn build(input: &TimelineInput, rules: &crate::trace::Rules) -> Timeline {
    let s = &input.sample;
    let mut events = Vec::new();
    let label = input.dir.file_name().map_or_else(|| input.dir.display().to_string(), |n| n.to_string_lossy().into());
    name_process(
        &mut events,
        sample::LIFECYCLE.pid,
        &format!("sample {label}"),
        &[(sample::LIFECYCLE.tid, "lifecycle".into())],
    );
    let drawn = sample::events(s);
    let mut notes = drawn.notes;
    events.extend(drawn.events);

    let telemetry = s.extra.telemetry.as_ref();
    let mut counter_tracks = Vec::new();
    // A server on several GPUs has a series per device (docs/methodology.md §9.11).
    let series = telemetry.map_or_else(Vec::new, |t| SampleFolder::at(&input.dir).telemetry_files(t));
    if series.is_empty() {
        notes.push("telemetry: the sample recorded no series".into());
    }
    for (device, csv) in series {
        match counters::from_csv(&csv, device) {
            Ok(c) => {
                counter_tracks.extend(c.tracks);
                events.extend(c.events);
            }
            Err(e) => notes.push(e.to_string()),
        }
    }
    if let (Some(cpu), Some(m)) = (telemetry.and_then(|t| t.host_cpu.as_ref()), sample::RequestMarks::of(s)) {
        // The host's foreign CPU is one mean over the request (src/study/observer.rs).
        let name = "host_foreign_cpu_pct (mean over the request)";
        for at in [m.start, m.end] {
            events.push(counters::TELEMETRY.counter(name, "%", at, cpu.foreign_pct));
        }
        counter_tracks.push(name.into());
    }
    if !counter_tracks.is_empty() {
        let source = telemetry.map_or("", |t| t.source.as_str());
        name_process(&mut events, counters::TELEMETRY.pid, &format!("telemetry: {source}"), &[]);
    }

    let mut kernels = None;
    match (&input.trace, sample::RequestMarks::of(s)) {
        (Some(trace), Some(marks)) => match kernels::events(trace, marks, rules) {
            Ok(k) => kernels = Some(k),
            Err(e) => notes.push(format!("kernels: {e}")),
        },
        (Some(_), None) => notes.push("kernels: the traced request has no stream stamps to place them by".into()),
        (None, _) => {}
    }
    let facts = TimelineFacts {
        sample: input.dir.clone(),
        clock: CLOCK,
        events: 0,
        tokens: drawn.tokens,
        counters: counter_tracks,
        telemetry_source: telemetry.map(|t| t.source.clone()),
        kernel_launches: kernels.as_ref().map_or(0, |k| k.launches),
        kernel_streams: kernels.as_ref().map_or_else(Vec::new, |k| k.streams.clone()),
        kernel_tracks: kernels.as_ref().map_or(0, |k| k.tracks),
        kernel_alignment: kernels.as_ref().map(|k| k.alignment.clone()),
        notes,
    };
    if let Some(k) = kernels {
        events.extend(k.events);
    }
    let facts = TimelineFacts { events: events.len(), ..facts };
    Timeline { events, facts }
}

/// The file's head: `schema_version` first (docs/methodology.md §13), then the format's keys.
#[derive(Serialize)]
struct Head<'a> {
    #[serde(rename = "displayTimeUnit")]
    display_time_unit: &'static str,
    #[serde(rename = "otherData")]
    other_data: &'a TimelineFacts,
}

/// Writes the Trace Event Format JSON object, one event a line, through a temporary file beside
/// `out`.
pub(crate) fn write(timeline: &Timeline, out: &Path) -> std::io::Result<()> {
    let head = crate::schema::to_json_line(&Head { display_time_unit: "ms", other_data: &timeline.facts });
    let mut bytes = Vec::with_capacity(200 * timeline.events.len() + head.len());
    bytes.extend_from_slice(&head.as_bytes()[..head.len() - 1]);
    bytes.extend_from_slice(b",\"traceEvents\":[\n");
    for (i, e) in timeline.events.iter().enumerate() {
        if i > 0 {
            bytes.extend_from_slice(b",\n");
        }
        serde_json::to_writer(&mut bytes, e).expect("events always serialize");
    }
    bytes.write_all(b"\n]}\n")?;
    crate::atomic_file::write_atomic(out, &bytes)
}
