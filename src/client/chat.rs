//! The one timed request: a streaming `/v1/chat/completions` as docs/methodology.md §2 specifies
//! it, stamped at every non-empty token.
use super::http::{error_message, Client, ClientError};
use super::record::StreamRecord;
use super::sse::SseParser;
use crate::clock::Stamp;
use futures_util::StreamExt;
use serde::{Deserialize, Serialize};
use std::time::Duration;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub(crate) struct Message {
    pub(crate) role: String,
    pub(crate) content: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub(crate) struct StreamOptions {
    pub(crate) include_usage: bool,
}

/// The request body. Field names are the wire names.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub(crate) struct ChatRequest {
    pub(crate) model: String,
    pub(crate) messages: Vec<Message>,
    pub(crate) max_tokens: u32,
    pub(crate) temperature: f64,
    pub(crate) seed: u64,
    /// False for cold-KV samples; true only for pure-decode studies that warm the cache first.
    pub(crate) cache_prompt: bool,
    pub(crate) stream: bool,
    /// Without it newer servers send no usage chunk.
    pub(crate) stream_options: StreamOptions,
    /// llama-server extension: generate exactly `max_tokens` even past end-of-sequence. Part of
    /// the workload, so it is recorded with the request.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) ignore_eos: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) logprobs: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) top_logprobs: Option<u32>,
}

impl ChatRequest {
    /// The benchmark request (docs/methodology.md §2): temperature 0, seed 42, no prompt cache,
    /// streamed with usage.
    pub(crate) fn benchmark(prompt: &str, max_tokens: u32) -> ChatRequest {
        ChatRequest {
            model: "abprof".into(),
            messages: vec![Message { role: "user".into(), content: prompt.into() }],
            max_tokens,
            temperature: 0.0,
            seed: 42,
            cache_prompt: false,
            stream: true,
            stream_options: StreamOptions { include_usage: true },
            ignore_eos: None,
            logprobs: None,
            top_logprobs: None,
        }
    }
}

impl Client {
    /// Sends one streaming chat request and records it. A stream that breaks returns an error
    /// that still carries everything received. `stall` bounds every wait for the server's next
    /// byte, the response headers included (docs/methodology.md §2): a server that stops
    /// answering ends the request with [`ClientError::Stalled`] instead of hanging abprof.
    pub(crate) async fn chat_stream(&self, req: &ChatRequest, stall: Duration) -> Result<StreamRecord, ClientError> {
        let url = format!("{}/v1/chat/completions", self.base_url());
        let mut rec = StreamRecord { request_start: Some(Stamp::now()), ..Default::default() };
        let stalled = |rec: StreamRecord| ClientError::Stalled { secs: stall.as_secs_f64(), partial: Box::new(rec) };
        let resp = match tokio::time::timeout(stall, self.http.post(&url).json(req).send()).await {
            Ok(sent) => sent.map_err(|e| ClientError::Unreachable { url: url.clone(), source: e })?,
            Err(_) => {
                rec.response_end = Some(Stamp::now());
                return Err(stalled(rec));
            }
        };
        rec.response_headers = Some(Stamp::now());
        let status = resp.status().as_u16();
        if status != 200 {
            let body = resp.text().await.unwrap_or_default();
            return Err(ClientError::Status {
                endpoint: "/v1/chat/completions".into(),
                status,
                message: error_message(&body),
            });
        }
        let mut parser = SseParser::new();
        let mut events = Vec::with_capacity(4);
        let mut body = resp.bytes_stream();
        let mut broke: Option<String> = None;
        loop {
            let Ok(next) = tokio::time::timeout(stall, body.next()).await else {
                rec.response_end = Some(Stamp::now());
                return Err(stalled(rec));
            };
            let Some(piece) = next else { break };
            let now = Stamp::now();
            let bytes = match piece {
                Ok(b) => b,
                Err(e) => {
                    broke = Some(e.to_string());
                    break;
                }
            };
            rec.raw_sse.extend_from_slice(&bytes);
            parser.feed(&bytes, &mut events);
            for ev in events.drain(..) {
                if let Err(message) = rec.on_event(&ev, now) {
                    rec.response_end = Some(Stamp::now());
                    return Err(ClientError::StreamError { message, partial: Box::new(rec) });
                }
            }
        }
        rec.response_end = Some(Stamp::now());
        if !rec.saw_done {
            let detail = broke.unwrap_or_else(|| {
                if parser.has_partial() {
                    "cut mid-event".into()
                } else {
                    "no [DONE] event".into()
                }
            });
            return Err(ClientError::TruncatedStream { chunks: rec.chunks, detail, partial: Box::new(rec) });
        }
        Ok(rec)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn replay(sse: &str) -> Result<StreamRecord, String> {
        let mut rec = StreamRecord::default();
        let mut p = SseParser::new();
        let mut evs = vec![];
        p.feed(sse.as_bytes(), &mut evs);
        for (i, ev) in evs.iter().enumerate() {
            rec.on_event(ev, Stamp { mono_ns: i as u64, boot_ns: i as u64 })?;
        }
        Ok(rec)
    }

    #[test]
    fn request_body_is_the_seeds() {
        let v = serde_json::to_value(ChatRequest::benchmark("hi", 128)).unwrap();
        assert_eq!(v["temperature"], 0.0);
        assert_eq!(v["seed"], 42);
        assert_eq!(v["cache_prompt"], false);
        assert_eq!(v["stream"], true);
        assert_eq!(v["stream_options"]["include_usage"], true);
        assert!(v.get("ignore_eos").is_none());
    }

    #[test]
    fn usage_timings_and_token_stamps_from_a_stream() {
        let sse = concat!(
            "data: {\"choices\":[{\"finish_reason\":null,\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":null}}],\"system_fingerprint\":\"b1-0c1e57098\"}\n\n",
            "data: {\"choices\":[{\"finish_reason\":null,\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}\n\n",
            "data: {\"choices\":[{\"finish_reason\":null,\"index\":0,\"delta\":{\"content\":\"\"}}]}\n\n",
            "data: {\"choices\":[{\"finish_reason\":null,\"index\":0,\"delta\":{\"reasoning_content\":\"lo\"}}]}\n\n",
            "data: {\"choices\":[{\"finish_reason\":\"length\",\"index\":0,\"delta\":{}}]}\n\n",
            "data: {\"choices\":[],\"usage\":{\"completion_tokens\":3,\"prompt_tokens\":10,\"total_tokens\":13,\"prompt_tokens_details\":{\"cached_tokens\":0}},\"timings\":{\"prompt_n\":10,\"predicted_n\":3}}\n\n",
            "data: [DONE]\n\n"
        );
        let r = replay(sse).unwrap();
        assert!(r.saw_done);
        assert_eq!(r.content, "Hel");
        assert_eq!(r.reasoning, "lo");
        assert_eq!(r.token_mono_ns, vec![1, 3]);
        assert_eq!(r.first_token.unwrap().mono_ns, 1);
        assert_eq!(r.last_token.unwrap().mono_ns, 3);
        assert_eq!(r.finish_reason.as_deref(), Some("length"));
        let u = r.usage.unwrap();
        assert_eq!((u.prompt_tokens, u.completion_tokens, u.cached_tokens), (10, 3, Some(0)));
        assert_eq!(r.timings.unwrap()["predicted_n"], 3);
        assert_eq!(r.system_fingerprint.as_deref(), Some("b1-0c1e57098"));
    }

    #[test]
    fn a_real_stream_of_the_test_bed() {
        // scripts/capture-llama-fixtures: 300 prompt tokens, 32 out, ignore_eos.
        let r = replay(include_str!("../../tests/fixtures/llama-server/target-300x32.sse")).unwrap();
        assert!(r.saw_done);
        let u = r.usage.clone().unwrap();
        assert_eq!((u.prompt_tokens, u.completion_tokens), (300, 32));
        assert_eq!(r.finish_reason.as_deref(), Some("length"));
        assert!(r.content_deltas() > 0 && r.content_deltas() <= 32);
        assert_eq!(r.timings.as_ref().unwrap()["predicted_n"], 32);
    }

    #[test]
    fn error_chunks_and_malformed_logprobs_are_errors() {
        let err = replay("data: {\"error\":{\"code\":500,\"message\":\"boom\"}}\n\n").unwrap_err();
        assert_eq!(err, "boom");
        let bad = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"},\"logprobs\":{\"content\":[{\"id\":1,\"token\":\"a\"}]}}]}\n\n";
        assert!(replay(bad).unwrap_err().contains("malformed logprobs"));
        let good = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"},\"logprobs\":{\"content\":[{\"id\":1,\"token\":\"a\",\"logprob\":-0.5,\"top_logprobs\":[{\"id\":1,\"token\":\"a\",\"logprob\":-0.5},{\"id\":2,\"token\":\"b\",\"logprob\":-1.5}]}]}}]}\n\n";
        let r = replay(good).unwrap();
        assert_eq!(r.logprobs[0].top_logprobs.len(), 2);
        assert_eq!(r.logprobs[0].top_logprobs[1].logprob, -1.5);
    }
}
