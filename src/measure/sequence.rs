//! A sample of several requests to one cold server, one after another (the MTP yardstick,
//! docs/methodology.md §4.1; the soak, §4.2; SPEED-Bench's categories, §4.3): what each response
//! reported, in the order sent.
use crate::client::StreamRecord;
use serde::{Deserialize, Serialize};

/// One request of a sequence as its response reported it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct SequenceRequest {
    /// The request's name: the yardstick's prompt ([`super::mtp_yardstick::PROMPTS`]), the
    /// soak's `request N`, SPEED-Bench's category ([`super::speed_bench::PROMPTS`]) (`prompt` in
    /// the record, as the yardstick first wrote it).
    #[serde(rename = "prompt")]
    pub(crate) name: String,
    /// Request start → response end, ms, as the client saw it.
    pub(crate) wall_ms: Option<f64>,
    /// Request start and response end, CLOCK_MONOTONIC ns (the telemetry's clock), so each
    /// request's readings can be found; absent in records of earlier releases.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) start_mono_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) end_mono_ns: Option<u64>,
    pub(crate) finish_reason: Option<String>,
    /// `usage.completion_tokens`.
    pub(crate) completion_tokens: Option<u64>,
    /// `usage.prompt_tokens`: checked per request against a calibrated prompt (§7, the sample's
    /// own usage sums them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) prompt_tokens: Option<u64>,
    /// `timings.prompt_n` / `prompt_ms`: the server's prefill of this request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) prompt_n: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) prompt_ms: Option<f64>,
    /// `timings.predicted_n` / `predicted_ms`: the server's decode of this request.
    pub(crate) predicted_n: Option<u64>,
    pub(crate) predicted_ms: Option<f64>,
    /// `timings.draft_n` / `draft_n_accepted`; the pinned server sends them only when it drafted
    /// (tools/server/server-common.cpp), so absent reads as 0.
    pub(crate) draft_n: u64,
    pub(crate) draft_n_accepted: u64,
}

impl SequenceRequest {
    pub(crate) fn of(name: &str, r: &StreamRecord) -> SequenceRequest {
        let t = r.timings.as_ref();
        let u64_of = |k: &str| t.and_then(|t| t.get(k)).and_then(|v| v.as_u64());
        let f64_of = |k: &str| t.and_then(|t| t.get(k)).and_then(|v| v.as_f64());
        SequenceRequest {
            name: name.into(),
            wall_ms: r.request_start.zip(r.response_end).map(|(a, b)| a.ms_until(&b)),
            start_mono_ns: r.request_start.map(|s| s.mono_ns),
            end_mono_ns: r.response_end.map(|s| s.mono_ns),
            finish_reason: r.finish_reason.clone(),
            completion_tokens: r.usage.as_ref().map(|u| u.completion_tokens),
            prompt_tokens: r.usage.as_ref().map(|u| u.prompt_tokens),
            prompt_n: u64_of("prompt_n"),
            prompt_ms: f64_of("prompt_ms"),
            predicted_n: u64_of("predicted_n"),
            predicted_ms: f64_of("predicted_ms"),
            draft_n: u64_of("draft_n").unwrap_or(0),
            draft_n_accepted: u64_of("draft_n_accepted").unwrap_or(0),
        }
    }

    /// The server's decode rate of this request, tok/s.
    pub(crate) fn decode_tps(&self) -> Option<f64> {
        rate(self.predicted_n, self.predicted_ms)
    }

    /// The server's prefill rate of this request, tok/s.
    pub(crate) fn prefill_tps(&self) -> Option<f64> {
        rate(self.prompt_n, self.prompt_ms)
    }
}

fn rate(n: Option<u64>, ms: Option<f64>) -> Option<f64> {
    n.zip(ms).filter(|&(n, ms)| n > 0 && ms > 0.0).map(|(n, ms)| n as f64 / (ms / 1000.0))
}

/// Requests that did not end at the locked length: (name, why).
pub(crate) fn short_requests(requests: &[SequenceRequest], max_tokens: u32) -> Vec<(String, String)> {
    requests
        .iter()
        .filter_map(|r| {
            let why = match (r.completion_tokens, r.finish_reason.as_deref()) {
                (Some(n), _) if n != max_tokens as u64 => format!("{n} output tokens"),
                (_, Some("length")) => return None,
                (_, f) => format!("finish_reason {:?}", f.unwrap_or("none")),
            };
            Some((r.name.clone(), why))
        })
        .collect()
}
