//! A prompt of exactly N chat-template tokens (docs/methodology.md §3). The template adds its own
//! tokens around the user text and re-tokenizes the joins, so the count is found by asking the
//! server itself: detokenize a prefix, send it with max_tokens=1, read `usage.prompt_tokens`,
//! correct the prefix by the difference, repeat.
use super::chat::ChatRequest;
use super::http::{Client, ClientError};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Duration;
use thiserror::Error;

pub(crate) const MAX_ROUNDS: usize = 8;
/// The varied technical prose prompts are cut from (written for abprof; assets/README.md).
pub(crate) const DEFAULT_SOURCE: &str = include_str!("../../assets/prompt-source.md");
/// The first guess leaves this many tokens for the chat template.
const TEMPLATE_ALLOWANCE: u64 = 30;

#[derive(Debug, Error)]
pub(crate) enum CalibrateError {
    #[error(transparent)]
    Client(#[from] ClientError),
    #[error("the server's response carried no usage: it must support stream_options.include_usage (llama-server 2025-08 or newer)")]
    NoUsage,
    #[error("{target} prompt tokens is fewer than the chat template alone uses ({overhead}): ask for more tokens")]
    TooShort { target: u64, overhead: u64 },
    #[error("calibration did not reach exactly {target} prompt tokens in {rounds} rounds (counts seen: {seen}): the template re-tokenizes the cut differently each time; try N±1 or another --source")]
    DidNotConverge { target: u64, rounds: usize, seen: String },
    #[error("a {target}-token prompt plus 1 output token cannot fit the server's context of {n_ctx} tokens per slot: raise -c in --server-args (with -np N each slot gets c/N) or ask for fewer --prompt-tokens")]
    TooLong { target: u64, n_ctx: u64 },
    #[error("the prompt source text is empty: pass a --source file with text in it")]
    EmptySource,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub(crate) struct Round {
    pub(crate) content_tokens: u64,
    pub(crate) prompt_tokens: u64,
}

/// The calibrated prompt and how it was found. Saved beside the text as `<file>.calibration.json`
/// so later runs can verify the count without recalibrating.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub(crate) struct Calibration {
    pub(crate) prompt_tokens: u64,
    pub(crate) content_tokens: u64,
    pub(crate) rounds: Vec<Round>,
    pub(crate) system_fingerprint: Option<String>,
    #[serde(skip)]
    pub(crate) text: String,
}

pub(crate) async fn calibrate(
    client: &Client,
    source: &str,
    target: u64,
    stall: Duration,
) -> Result<Calibration, CalibrateError> {
    if source.trim().is_empty() {
        return Err(CalibrateError::EmptySource);
    }
    // Refused before any tokenizing: a prompt the context cannot hold would only fail after
    // rounds of tokenizing and detokenizing a text of that length (docs/methodology.md §3).
    if let Some(n_ctx) = client.context_size().await? {
        if target >= n_ctx {
            return Err(CalibrateError::TooLong { target, n_ctx });
        }
    }
    let mut ids = client.tokenize(source, false).await?;
    let need = target as usize + 2 * TEMPLATE_ALLOWANCE as usize;
    if ids.len() < need {
        // Repeated until long enough (docs/methodology.md §3): any cut must find text to cut.
        let reps = need.div_ceil(ids.len().max(1)) + 1;
        let long = vec![source.trim_end(); reps].join("\n\n");
        ids = client.tokenize(&long, false).await?;
    }
    let mut n = target.saturating_sub(TEMPLATE_ALLOWANCE).max(1);
    let mut rounds = Vec::new();
    let mut fingerprint = None;
    for _ in 0..MAX_ROUNDS {
        let text = client.detokenize(&ids[..n as usize]).await?;
        let rec = client.chat_stream(&ChatRequest::benchmark(&text, 1), stall).await?;
        fingerprint = fingerprint.or(rec.system_fingerprint.clone());
        let actual = rec.usage.ok_or(CalibrateError::NoUsage)?.prompt_tokens;
        rounds.push(Round { content_tokens: n, prompt_tokens: actual });
        if actual == target {
            return Ok(Calibration {
                prompt_tokens: target,
                content_tokens: n,
                rounds,
                system_fingerprint: fingerprint,
                text,
            });
        }
        let overhead = actual.saturating_sub(n);
        if target <= overhead {
            return Err(CalibrateError::TooShort { target, overhead });
        }
        let next = (n as i64 + target as i64 - actual as i64).clamp(1, ids.len() as i64) as u64;
        // The correction can oscillate across a join that merges tokens: step by one then.
        n = if rounds.iter().any(|r| r.content_tokens == next) {
            if actual > target {
                n.saturating_sub(1).max(1)
            } else {
                n + 1
            }
        } else {
            next
        };
    }
    Err(CalibrateError::DidNotConverge {
        target,
        rounds: rounds.len(),
        seen: rounds.iter().map(|r| r.prompt_tokens.to_string()).collect::<Vec<_>>().join(", "),
    })
}

/// `<prompt file>.calibration.json`
pub(crate) fn sidecar_path(prompt: &Path) -> PathBuf {
    let mut s = prompt.as_os_str().to_owned();
    s.push(".calibration.json");
    PathBuf::from(s)
}

/// Saves the text (the artefact is text, not token ids: a tokenizer change needs recalibration)
/// and its sidecar.
pub(crate) fn save(cal: &Calibration, out: &Path) -> std::io::Result<()> {
    if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(out, &cal.text)?;
    std::fs::write(sidecar_path(out), crate::schema::to_json_pretty(cal) + "\n")
}

/// The calibrated count recorded beside a prompt file, if there is one.
pub(crate) fn recorded_prompt_tokens(prompt: &Path) -> Option<u64> {
    let text = std::fs::read_to_string(sidecar_path(prompt)).ok()?;
    serde_json::from_str::<Calibration>(&text).ok().map(|c| c.prompt_tokens)
}
