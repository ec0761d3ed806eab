//! The seeds' rejection rules (benchmark-qwen §5, ab-qwen-profiling §4): a sample that breaks one
//! is listed with its reason, never silently dropped.
use crate::measure::Sample;
use serde::{Deserialize, Serialize};

/// What a sample is judged against.
#[derive(Debug, Clone, Default)]
pub struct Expectations {
    /// The calibrated prompt length every response must report.
    pub prompt_tokens: Option<u64>,
    /// Locked-length workload: must finish by `length` with exactly max_tokens output.
    pub locked_length: bool,
    /// Timing blocks the log must hold (2 when the prompt cache was warmed first).
    pub timing_blocks: usize,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Rejection {
    pub rule: String,
    pub reason: String,
}

fn reject(rule: &str, reason: String) -> Rejection {
    Rejection { rule: rule.into(), reason }
}

/// Per-sample rules. Study-level rules (prompt tokens differ across variants, acceptance differs
/// materially, isolation not restored) live with the study summary.
pub fn sample_rejections(s: &Sample, exp: &Expectations) -> Vec<Rejection> {
    let mut out = Vec::new();
    if let Some(e) = &s.error {
        out.push(reject("incomplete", e.clone()));
    }
    let want_blocks = exp.timing_blocks.max(1);
    if s.timing_blocks > want_blocks {
        out.push(reject(
            "one-request-per-log",
            format!("{} request timing blocks in the server log, expected {want_blocks}", s.timing_blocks),
        ));
    }
    match (exp.prompt_tokens, s.prompt_tokens()) {
        (Some(want), Some(got)) if want != got => out.push(reject(
            "calibrated-prompt-tokens",
            format!("usage.prompt_tokens {got} is not the calibrated {want}"),
        )),
        (Some(_), None) if s.error.is_none() => {
            out.push(reject("calibrated-prompt-tokens", "the response carried no usage".into()))
        }
        _ => {}
    }
    if let Some(n) = s.completion_tokens() {
        if n < 2 {
            out.push(reject("min-output", format!("{n} output tokens: decode TPS needs at least 2")));
        }
        if exp.locked_length && n != s.max_tokens as u64 {
            out.push(reject("locked-length", format!("{n} output tokens, not the locked {}", s.max_tokens)));
        }
    }
    if exp.locked_length && s.error.is_none() && s.finish_reason.as_deref() != Some("length") {
        out.push(reject(
            "locked-length",
            format!("finish_reason {:?}, not \"length\"", s.finish_reason.as_deref().unwrap_or("none")),
        ));
    }
    out
}
