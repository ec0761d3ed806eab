//! The client of one server: `/health`, `/props`, `/tokenize`, `/detokenize`, and how they fail.
use super::record::StreamRecord;
use serde::Deserialize;
use std::time::Duration;
use thiserror::Error;

#[derive(Debug, Error)]
pub(crate) enum ClientError {
    #[error("cannot reach the server at {url}: {source} (is it running and healthy?)")]
    Unreachable { url: String, source: reqwest::Error },
    #[error("{endpoint} answered HTTP {status}: {message}")]
    Status { endpoint: String, status: u16, message: String },
    #[error("{endpoint} answered something that is not the expected JSON: {detail}")]
    BadBody { endpoint: String, detail: String },
    #[error("the stream ended before [DONE] after {chunks} chunks ({detail}): the server died or the connection broke mid-request; its raw SSE is kept in the evidence")]
    TruncatedStream { chunks: usize, detail: String, partial: Box<StreamRecord> },
    #[error("the server sent nothing for {secs} s mid-request after {} chunks (stalled: stopped, hung or deadlocked); its partial SSE is kept in the evidence (raise --stall-timeout, study file `stall_timeout_s`, if it is only slow)", partial.chunks)]
    Stalled { secs: f64, partial: Box<StreamRecord> },
    #[error("the server reported an error mid-stream: {message}")]
    StreamError { message: String, partial: Box<StreamRecord> },
}

impl ClientError {
    /// What was received before a stream broke, so nothing already measured is lost.
    pub(crate) fn partial(&self) -> Option<&StreamRecord> {
        match self {
            ClientError::TruncatedStream { partial, .. }
            | ClientError::StreamError { partial, .. }
            | ClientError::Stalled { partial, .. } => Some(partial),
            _ => None,
        }
    }
}

/// How long a streamed request waits for the server's next byte before giving up
/// (docs/methodology.md §2): generous, since a long prefill on a slow host sends nothing either.
pub(crate) const DEFAULT_STALL_TIMEOUT_S: u64 = 120;

/// A client bound to one server's base URL (`http://127.0.0.1:PORT`).
#[derive(Clone)]
pub struct Client {
    base: String,
    pub(super) http: reqwest::Client,
}

impl Client {
    pub fn new(base_url: &str) -> Client {
        // No pooled keep-alive connections: llama-server (cpp-httplib) closes a connection after a
        // few requests, and a pooled one closed under the client fails the next request with
        // "connection closed before message completed". A loopback connect costs ~50 µs.
        let http = reqwest::Client::builder()
            .pool_max_idle_per_host(0)
            .no_proxy()
            .connect_timeout(Duration::from_secs(5))
            .tcp_nodelay(true)
            .build()
            .expect("a reqwest client without TLS always builds");
        Client { base: base_url.trim_end_matches('/').to_string(), http }
    }

    pub(crate) fn base_url(&self) -> &str {
        &self.base
    }

    fn url(&self, path: &str) -> String {
        format!("{}{}", self.base, path)
    }

    /// True once `/health` answers 200 (503 while the model loads).
    pub(crate) async fn health(&self) -> bool {
        match self.http.get(self.url("/health")).timeout(Duration::from_secs(2)).send().await {
            Ok(r) => r.status().is_success(),
            Err(_) => false,
        }
    }

    /// The server's `/metrics` text (Prometheus); `None` where it serves none (a server started
    /// without `--metrics` answers 501) or does not answer within 5 s.
    pub(crate) async fn metrics(&self) -> Option<String> {
        let r = self.http.get(self.url("/metrics")).timeout(Duration::from_secs(5)).send().await.ok()?;
        if !r.status().is_success() {
            return None;
        }
        r.text().await.ok()
    }

    async fn post_json<T: for<'de> Deserialize<'de>>(
        &self,
        path: &str,
        body: &serde_json::Value,
    ) -> Result<T, ClientError> {
        let resp = self
            .http
            .post(self.url(path))
            .json(body)
            .send()
            .await
            .map_err(|e| ClientError::Unreachable { url: self.url(path), source: e })?;
        let status = resp.status().as_u16();
        let text = resp.text().await.map_err(|e| ClientError::Unreachable { url: self.url(path), source: e })?;
        if status != 200 {
            return Err(ClientError::Status { endpoint: path.into(), status, message: error_message(&text) });
        }
        serde_json::from_str(&text).map_err(|e| ClientError::BadBody { endpoint: path.into(), detail: e.to_string() })
    }

    /// The context size of one slot (`/props` → `default_generation_settings.n_ctx`); `None`
    /// when the server does not say (an older build without `/props`).
    pub(crate) async fn context_size(&self) -> Result<Option<u64>, ClientError> {
        let url = self.url("/props");
        let resp = self
            .http
            .get(&url)
            .timeout(Duration::from_secs(10))
            .send()
            .await
            .map_err(|e| ClientError::Unreachable { url: url.clone(), source: e })?;
        if !resp.status().is_success() {
            return Ok(None);
        }
        let text = resp.text().await.map_err(|e| ClientError::Unreachable { url, source: e })?;
        Ok(n_ctx_of_props(&text))
    }

    /// Token ids of `content`; `add_special` false for prompt calibration (the chat template
    /// adds its own specials).
    pub(crate) async fn tokenize(&self, content: &str, add_special: bool) -> Result<Vec<u32>, ClientError> {
        #[derive(Deserialize)]
        struct R {
            tokens: Vec<u32>,
        }
        let body = serde_json::json!({"content": content, "add_special": add_special, "with_pieces": false});
        Ok(self.post_json::<R>("/tokenize", &body).await?.tokens)
    }

    pub(crate) async fn detokenize(&self, tokens: &[u32]) -> Result<String, ClientError> {
        #[derive(Deserialize)]
        struct R {
            content: String,
        }
        let body = serde_json::json!({ "tokens": tokens });
        Ok(self.post_json::<R>("/detokenize", &body).await?.content)
    }
}

fn n_ctx_of_props(body: &str) -> Option<u64> {
    let v: serde_json::Value = serde_json::from_str(body).ok()?;
    v.pointer("/default_generation_settings/n_ctx").and_then(|n| n.as_u64()).filter(|n| *n > 0)
}

/// The `error.message` of a llama-server error body, else the body itself.
pub(super) fn error_message(body: &str) -> String {
    serde_json::from_str::<serde_json::Value>(body)
        .ok()
        .and_then(|v| v.pointer("/error/message").and_then(|m| m.as_str()).map(String::from))
        .unwrap_or_else(|| body.chars().take(300).collect())
}

/// The async runtime every HTTP-speaking subcommand runs on. Multi-threaded so a blocking idle
/// gate can run in place without stalling the stream reader.
pub(crate) fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("tokio runtime")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_message_reads_llama_server_error_bodies() {
        let body =
            r#"{"error":{"code":500,"message":"[json.exception.parse_error.101] parse error","type":"server_error"}}"#;
        assert_eq!(error_message(body), "[json.exception.parse_error.101] parse error");
        assert_eq!(error_message("plain"), "plain");
    }

    #[test]
    fn n_ctx_is_read_from_props() {
        // The shape llama-server 0c1e57098 answers (trimmed).
        let props = r#"{"default_generation_settings":{"n_ctx":4096,"params":{}},"total_slots":1}"#;
        assert_eq!(n_ctx_of_props(props), Some(4096));
        assert_eq!(n_ctx_of_props(r#"{"total_slots":1}"#), None);
        assert_eq!(n_ctx_of_props("not json"), None);
    }
}
