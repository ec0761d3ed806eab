//! HTTP to one llama-server: `/health`, `/tokenize`, `/detokenize` and the timed streaming chat
//! request. Loopback only, plain HTTP, no proxy: nothing between abprof and the server may add
//! latency to the stamps.
pub(crate) mod calibrate;
mod chat;
mod http;
mod record;
mod sse;

pub(crate) use chat::ChatRequest;
pub use http::Client;
pub(crate) use http::{runtime, DEFAULT_STALL_TIMEOUT_S};
pub(crate) use record::{RequestSpan, StreamRecord, TokenLogprobs, Usage};
pub(crate) use sse::SseParser;
