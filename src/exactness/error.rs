use crate::measure::SampleError;
use std::path::PathBuf;
use thiserror::Error;

/// What is wrong with a response's logprobs. Each one makes the comparison meaningless, so none
/// is papered over with a default.
#[derive(Debug, Error, PartialEq)]
pub(crate) enum LogprobsError {
    #[error("the response carried no logprobs for its {tokens} generated tokens: the server ignored `logprobs: true, top_logprobs: 5` (use a llama-server that supports OpenAI logprobs)")]
    Missing { tokens: u64 },
    #[error("the response carried logprobs for {got} of its {tokens} generated tokens: every generated token needs its entry, and no entry shows the missing ones folded into the next (a token held back mid-UTF-8-character): the server lost them, run again or use another build")]
    Count { got: usize, tokens: u64 },
    #[error("token {index} ({text:?}) has no token id in its logprobs entry: exactness compares ids, so the server must send `id` (llama-server does since 2025)")]
    NoId { index: usize, text: String },
    #[error("token {index} ({text:?}) has {got} top logprobs, expected {want}: the server must honour `top_logprobs: {want}`")]
    ShortTop { index: usize, text: String, got: usize, want: usize },
    #[error("token {index}: top logprob {rank} ({text:?}) has no token id: exactness aligns alternatives by id")]
    NoTopId { index: usize, rank: usize, text: String },
    #[error("token {index} ({text:?}) has a non-finite logprob {value}: the response is corrupt")]
    NotFinite { index: usize, text: String, value: f64 },
}

#[derive(Debug, Error)]
pub(crate) enum ExactnessError {
    #[error("exactness needs exactly two variants (baseline and candidate), got {0}: pass --variant twice")]
    VariantCount(usize),
    #[error("variant {label}: {source}")]
    Start { label: String, source: SampleError },
    #[error("variant {label}: expect= regex {regex:?} is not in the server log: the feature did not engage, so the gate proves nothing (evidence in {dir})")]
    Expect { label: String, regex: String, dir: PathBuf },
    #[error("variant {label}: the request failed: {message} (evidence in {dir})")]
    Request { label: String, message: String, dir: PathBuf },
    #[error("variant {label}: malformed or missing logprobs: {source} (evidence in {dir})")]
    Logprobs { label: String, dir: PathBuf, source: LogprobsError },
    #[error("variant {label}: the prompt was {got} tokens, but {want} were calibrated: recalibrate the prompt for this model and chat template")]
    PromptLength { label: String, got: u64, want: u64 },
    #[error("the variants saw different prompt lengths ({a_label}: {a}, {b_label}: {b}): they tokenize differently, so their outputs cannot be compared token by token")]
    PromptMismatch { a_label: String, a: u64, b_label: String, b: u64 },
    #[error("could not write {path}: {source}")]
    Write { path: PathBuf, source: std::io::Error },
    #[error(transparent)]
    Evidence(#[from] crate::study::evidence::EvidenceError),
}
