//! The A/B workload: one streamed chat request of an exact-length prompt (docs/methodology.md
//! §2), optionally after a prompt-cache warm-up (pure decode, §4); or a sequence of named
//! requests sent back to back to the same cold server: the MTP yardstick's nine (§4.1), the
//! soak's N (§4.2), SPEED-Bench's eleven (§4.3).
use super::files::SampleFiles;
use super::load::{Load, LoadRun};
use super::mtp_yardstick::MtpYardstickRun;
use super::record::Sample;
use super::soak::SoakRun;
use super::speed_bench::SpeedBenchRun;
use crate::client::{ChatRequest, Client, StreamRecord, TokenLogprobs};
use crate::server::log::TimingBlock;
use std::time::Duration;

/// What a sequence of requests is, so its record says so.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SequenceKind {
    MtpYardstick,
    Soak,
    SpeedBench,
}

pub(crate) struct ChatLoad {
    pub(crate) request: ChatRequest,
    /// A sequence (docs/methodology.md §4.1, §4.2): what it is and every named request in order,
    /// `request` their first; `None` for the one-request load.
    sequence: Option<(SequenceKind, Vec<(String, ChatRequest)>)>,
    /// Each sequence request's response, as sent.
    responses: Vec<(String, StreamRecord)>,
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
        ChatLoad {
            request,
            sequence: None,
            responses: Vec::new(),
            warm_prompt_cache,
            logprobs: Vec::new(),
            stall_timeout,
        }
    }

    /// The named requests, timed one after another on the same cold server (§4.1, §4.2).
    pub(crate) fn sequence(
        kind: SequenceKind,
        requests: Vec<(String, ChatRequest)>,
        stall_timeout: Duration,
    ) -> ChatLoad {
        let first = requests.first().expect("a sequence has a request").1.clone();
        ChatLoad { sequence: Some((kind, requests)), ..ChatLoad::new(first, false, stall_timeout) }
    }

    /// Every request of the sequence in turn; the first failure ends it, its partial response kept.
    async fn run_sequence(&mut self, client: &Client) -> LoadRun {
        let mut error = None;
        for (name, request) in self.sequence.iter().flat_map(|(_, r)| r) {
            match client.chat_stream(request, self.stall_timeout).await {
                Ok(r) => self.responses.push((name.clone(), r)),
                Err(e) => {
                    self.responses.push((name.clone(), e.partial().cloned().unwrap_or_default()));
                    error = Some(format!("request {} ({name}): {e}", self.responses.len()));
                    break;
                }
            }
        }
        let mut all = self.responses.iter().map(|(_, r)| r);
        let first = all.next().cloned().unwrap_or_default();
        LoadRun { stream: Some(all.fold(first, |acc, r| acc.followed_by(r))), error, interrupted: false }
    }
}

impl Load for ChatLoad {
    fn prepare(&mut self, files: &SampleFiles, _base_url: &str) -> std::io::Result<()> {
        let json = match &self.sequence {
            None => serde_json::to_string_pretty(&self.request),
            Some((_, requests)) => serde_json::to_string_pretty(&requests.iter().map(|(_, r)| r).collect::<Vec<_>>()),
        };
        let json = json.expect("a request always serializes") + "\n";
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
        if self.sequence.is_some() {
            return self.run_sequence(client).await;
        }
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
        if let Some((_, requests)) = &self.sequence {
            requests.len()
        } else if self.warm_prompt_cache {
            2
        } else {
            1
        }
    }

    fn timed_blocks<'b>(&self, blocks: &'b [TimingBlock]) -> &'b [TimingBlock] {
        if self.sequence.is_none() {
            &blocks[blocks.len().saturating_sub(1)..]
        } else {
            blocks
        }
    }

    fn finish(&mut self, sample: &mut Sample, _files: &SampleFiles) {
        sample.max_tokens = self.request.max_tokens;
        sample.ignore_eos = self.request.ignore_eos.unwrap_or(false);
        sample.cache_prompt = self.request.cache_prompt;
        match self.sequence.as_ref().map(|(kind, _)| kind) {
            None => {}
            Some(SequenceKind::MtpYardstick) => sample.extra.mtp_yardstick = Some(MtpYardstickRun::of(&self.responses)),
            Some(SequenceKind::Soak) => sample.extra.soak = Some(SoakRun::of(&self.responses)),
            Some(SequenceKind::SpeedBench) => sample.extra.speed_bench = Some(SpeedBenchRun::of(&self.responses)),
        }
    }
}
