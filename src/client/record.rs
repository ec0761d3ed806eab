//! What one streamed request measured: its stamps, usage, logprobs and raw SSE, built event by
//! event (docs/methodology.md §2). Below the client and its errors, which carry a partial record.
use super::sse::SseEvent;
use crate::clock::Stamp;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub(crate) struct Usage {
    pub(crate) prompt_tokens: u64,
    pub(crate) completion_tokens: u64,
    #[serde(default)]
    pub(crate) total_tokens: u64,
    /// `prompt_tokens_details.cached_tokens`: prompt tokens the server reused from its cache.
    #[serde(default)]
    pub(crate) cached_tokens: Option<u64>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub(crate) struct TopLogprob {
    pub(crate) id: Option<u32>,
    pub(crate) token: String,
    pub(crate) logprob: f64,
    /// The token's own UTF-8 bytes (its text may be lossy when they end mid-character).
    #[serde(default)]
    pub(crate) bytes: Option<Vec<u8>>,
}

/// One generated token with its top-k alternatives (OpenAI `logprobs.content[]`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub(crate) struct TokenLogprobs {
    pub(crate) id: Option<u32>,
    pub(crate) token: String,
    pub(crate) logprob: f64,
    pub(crate) top_logprobs: Vec<TopLogprob>,
    /// The bytes of the entry's text: more than the token's own when the server folded held-back
    /// tokens into it (docs/methodology.md §12).
    #[serde(default)]
    pub(crate) bytes: Option<Vec<u8>>,
}

/// What one streamed request measured. Stamps are taken when the bytes carrying an event are
/// read from the socket.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
pub(crate) struct StreamRecord {
    pub(crate) request_start: Option<Stamp>,
    /// Response headers received (the server accepted the request).
    pub(crate) response_headers: Option<Stamp>,
    /// First and last non-empty content or reasoning delta.
    pub(crate) first_token: Option<Stamp>,
    pub(crate) last_token: Option<Stamp>,
    pub(crate) response_end: Option<Stamp>,
    /// CLOCK_MONOTONIC ns of every non-empty delta, for inter-token latency.
    pub(crate) token_mono_ns: Vec<u64>,
    pub(crate) content: String,
    pub(crate) reasoning: String,
    pub(crate) finish_reason: Option<String>,
    pub(crate) usage: Option<Usage>,
    /// The server's `timings` object of the last chunk that carried one.
    pub(crate) timings: Option<serde_json::Value>,
    pub(crate) system_fingerprint: Option<String>,
    pub(crate) chunks: usize,
    pub(crate) logprobs: Vec<TokenLogprobs>,
    /// Every byte of the response, for the evidence folder.
    #[serde(skip)]
    pub(crate) raw_sse: Vec<u8>,
    pub(crate) saw_done: bool,
    /// A record of several requests ([`StreamRecord::followed_by`]): each request's own span, in
    /// order, so telemetry can be split per request (docs/methodology.md §4.2); empty for one.
    #[serde(skip)]
    pub(crate) requests: Vec<RequestSpan>,
}

/// One request's stamps and token counts inside a record of several.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct RequestSpan {
    pub(crate) start: Option<Stamp>,
    pub(crate) first_token: Option<Stamp>,
    pub(crate) last_token: Option<Stamp>,
    pub(crate) prompt_tokens: Option<u64>,
    pub(crate) completion_tokens: Option<u64>,
}

impl RequestSpan {
    pub(crate) fn of(r: &StreamRecord) -> RequestSpan {
        RequestSpan {
            start: r.request_start,
            first_token: r.first_token,
            last_token: r.last_token,
            prompt_tokens: r.usage.as_ref().map(|u| u.prompt_tokens),
            completion_tokens: r.usage.as_ref().map(|u| u.completion_tokens),
        }
    }
}

impl StreamRecord {
    /// The requests of one sample sent back to back (the MTP yardstick's nine,
    /// docs/methodology.md §4.1) as one record: stamps from the first request's start to the last
    /// one's end, every token stamp and SSE byte in order, usage summed, the first finish reason
    /// other than `length` (else `length`), no `timings` (each request's are kept apart).
    pub(crate) fn followed_by(mut self, next: &StreamRecord) -> StreamRecord {
        if self.requests.is_empty() {
            self.requests.push(RequestSpan::of(&self));
        }
        self.requests.push(RequestSpan::of(next));
        self.request_start = self.request_start.or(next.request_start);
        self.response_headers = self.response_headers.or(next.response_headers);
        self.first_token = self.first_token.or(next.first_token);
        self.last_token = next.last_token.or(self.last_token);
        self.response_end = next.response_end.or(self.response_end);
        self.token_mono_ns.extend_from_slice(&next.token_mono_ns);
        self.content.push_str(&next.content);
        self.reasoning.push_str(&next.reasoning);
        if self.finish_reason.as_deref().is_none_or(|f| f == "length") {
            self.finish_reason = next.finish_reason.clone();
        }
        self.usage = match (self.usage.take(), &next.usage) {
            (Some(a), Some(b)) => Some(Usage {
                prompt_tokens: a.prompt_tokens + b.prompt_tokens,
                completion_tokens: a.completion_tokens + b.completion_tokens,
                total_tokens: a.total_tokens + b.total_tokens,
                cached_tokens: a.cached_tokens.zip(b.cached_tokens).map(|(x, y)| x + y),
            }),
            (a, b) => a.or(b.clone()),
        };
        self.timings = None;
        self.system_fingerprint = self.system_fingerprint.or(next.system_fingerprint.clone());
        self.chunks += next.chunks;
        self.logprobs.extend_from_slice(&next.logprobs);
        self.raw_sse.extend_from_slice(&next.raw_sse);
        self.saw_done &= next.saw_done;
        self
    }

    /// Non-empty deltas seen.
    pub(crate) fn content_deltas(&self) -> usize {
        self.token_mono_ns.len()
    }

    pub(crate) fn on_event(&mut self, ev: &SseEvent, now: Stamp) -> Result<(), String> {
        if ev.data == "[DONE]" {
            self.saw_done = true;
            return Ok(());
        }
        let v: serde_json::Value = serde_json::from_str(&ev.data).map_err(|e| format!("unparsable chunk: {e}"))?;
        if let Some(err) = v.get("error") {
            return Err(err.get("message").and_then(|m| m.as_str()).unwrap_or(&err.to_string()).to_string());
        }
        self.chunks += 1;
        if let Some(fp) = v.get("system_fingerprint").and_then(|f| f.as_str()) {
            self.system_fingerprint.get_or_insert_with(|| fp.to_string());
        }
        if let Some(choice) = v.pointer("/choices/0") {
            let delta = &choice["delta"];
            let mut got = false;
            for (field, sink) in [("content", &mut self.content), ("reasoning_content", &mut self.reasoning)] {
                if let Some(s) = delta.get(field).and_then(|c| c.as_str()) {
                    if !s.is_empty() {
                        sink.push_str(s);
                        got = true;
                    }
                }
            }
            if got {
                self.first_token.get_or_insert(now);
                self.last_token = Some(now);
                self.token_mono_ns.push(now.mono_ns);
            }
            if let Some(fr) = choice.get("finish_reason").and_then(|f| f.as_str()) {
                self.finish_reason = Some(fr.to_string());
            }
            if let Some(list) = choice.pointer("/logprobs/content").and_then(|c| c.as_array()) {
                for t in list {
                    self.logprobs.push(parse_token_logprobs(t)?);
                }
            }
        }
        if let Some(u) = v.get("usage").filter(|u| !u.is_null()) {
            self.usage = Some(Usage {
                prompt_tokens: u["prompt_tokens"].as_u64().unwrap_or(0),
                completion_tokens: u["completion_tokens"].as_u64().unwrap_or(0),
                total_tokens: u["total_tokens"].as_u64().unwrap_or(0),
                cached_tokens: u.pointer("/prompt_tokens_details/cached_tokens").and_then(|c| c.as_u64()),
            });
        }
        if let Some(t) = v.get("timings").filter(|t| !t.is_null()) {
            self.timings = Some(t.clone());
        }
        Ok(())
    }
}

/// One `logprobs.content[]` entry; a malformed one is an error, not a silent zero.
pub(crate) fn parse_token_logprobs(t: &serde_json::Value) -> Result<TokenLogprobs, String> {
    let lp = |x: &serde_json::Value| x.get("logprob").and_then(|l| l.as_f64());
    let token = |x: &serde_json::Value| x.get("token").and_then(|s| s.as_str()).map(String::from);
    let id = |x: &serde_json::Value| x.get("id").and_then(|i| i.as_u64()).map(|i| i as u32);
    let bytes = |x: &serde_json::Value| -> Option<Vec<u8>> {
        x.get("bytes")?.as_array()?.iter().map(|b| b.as_u64().and_then(|b| u8::try_from(b).ok())).collect()
    };
    let (Some(logprob), Some(tok)) = (lp(t), token(t)) else {
        return Err(format!("malformed logprobs entry (no token/logprob): {t}"));
    };
    let mut top = Vec::new();
    for alt in t.get("top_logprobs").and_then(|a| a.as_array()).map(|a| a.as_slice()).unwrap_or(&[]) {
        let (Some(l), Some(s)) = (lp(alt), token(alt)) else {
            return Err(format!("malformed top_logprobs entry: {alt}"));
        };
        top.push(TopLogprob { id: id(alt), token: s, logprob: l, bytes: bytes(alt) });
    }
    Ok(TokenLogprobs { id: id(t), token: tok, logprob, top_logprobs: top, bytes: bytes(t) })
}
