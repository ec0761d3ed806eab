//! The A/B workload: one streamed chat request of an exact-length prompt (docs/methodology.md
//! §2), optionally after a prompt-cache warm-up (pure decode, §4).
use super::files::SampleFiles;
use super::load::{Load, LoadRun};
use super::record::Sample;
use crate::client::{ChatRequest, Client, StreamRecord, TokenLogprobs};
use std::time::Duration;

pub(crate) struct ChatLoad {
    pub(crate) request: ChatRequest,
    /// Pure decode: send the prompt once (max_tokens 1, cache on) before the timed request, so
    /// the timed one decodes with the full-length KV in place and no prefill.
    pub(crate) warm_prompt_cache: bool,
    /// The streamed logprobs, kept when the request asked for them (the record does not carry
    /// them; the exactness gate reads them here).
    pub(crate) logprobs: Vec<TokenLogprobs>,
    /// No byte from the server for this long ends the request (docs/methodology.md §2).
    pub(crate) stall_timeout: Duration,
}

impl ChatLoad {
    pub(crate) fn new(request: ChatRequest, warm_prompt_cache: bool, stall_timeout: Duration) -> ChatLoad {
        ChatLoad { request, warm_prompt_cache, logprobs: Vec::new(), stall_timeout }
    }
}

impl Load for ChatLoad {
    fn prepare(&mut self, files: &SampleFiles, _base_url: &str) -> std::io::Result<()> {
        let json = serde_json::to_string_pretty(&self.request).expect("a request always serializes") + "\n";
        std::fs::write(files.request(), json)
    }

    async fn warm_up(&mut self, client: &Client) -> Result<(), String> {
        if !self.warm_prompt_cache {
            return Ok(());
        }
        let mut warm = self.request.clone();
        warm.max_tokens = 1;
        warm.cache_prompt = true;
        client
            .chat_stream(&warm, self.stall_timeout)
            .await
            .map(|_| ())
            .map_err(|e| format!("prompt-cache warm-up request failed: {e}"))
    }

    async fn run(&mut self, client: &Client, _files: &SampleFiles) -> LoadRun {
        match client.chat_stream(&self.request, self.stall_timeout).await {
            Ok(r) => {
                if self.request.logprobs == Some(true) {
                    self.logprobs = r.logprobs.clone();
                }
                LoadRun { stream: Some(r), ..LoadRun::default() }
            }
            Err(e) => LoadRun {
                stream: Some(e.partial().cloned().unwrap_or_else(StreamRecord::default)),
                error: Some(e.to_string()),
                interrupted: false,
            },
        }
    }

    fn timing_blocks(&self) -> usize {
        if self.warm_prompt_cache {
            2
        } else {
            1
        }
    }

    fn finish(&mut self, sample: &mut Sample, _files: &SampleFiles) {
        sample.max_tokens = self.request.max_tokens;
        sample.ignore_eos = self.request.ignore_eos.unwrap_or(false);
        sample.cache_prompt = self.request.cache_prompt;
    }
}
