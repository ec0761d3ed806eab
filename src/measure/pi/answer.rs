//! The verdict on what Pi answered, from its JSONL alone: parsed, one answer, no tool call, no
//! retry or compaction, no error, and (decode workload) Python that runs. The live sample and
//! the recorded-transcript tests use this same judgement.
use super::python::{check_python, CodeCheck, CodeRun};
use super::transcript::{parse_transcript, Transcript};

#[derive(Debug, Clone)]
pub struct AnswerVerdict {
    pub transcript: Option<Transcript>,
    pub code: Option<CodeCheck>,
    /// Empty for a valid answer; one line per reason otherwise.
    pub failures: Vec<String>,
}

pub fn judge_answer(jsonl: &str, code_run: Option<CodeRun<'_>>) -> AnswerVerdict {
    let mut failures = Vec::new();
    let transcript = match parse_transcript(jsonl) {
        Ok(t) => t,
        Err(e) => return AnswerVerdict { transcript: None, code: None, failures: vec![e.to_string()] },
    };
    if transcript.assistant_messages == 0 {
        failures.push("pi's JSONL has no assistant message_end: the model never answered".into());
    }
    if !transcript.tool_calls.is_empty() {
        failures
            .push(format!("the model called tools ({}): the workload forbids them", transcript.tool_calls.join(", ")));
    }
    if transcript.compactions > 0 || transcript.retries > 0 {
        failures.push(format!(
            "pi compacted {} and retried {} time(s): more than one request",
            transcript.compactions, transcript.retries
        ));
    }
    if let Some(m) = &transcript.error_message {
        failures.push(format!("pi reported an error: {m}"));
    }
    let code = code_run.map(|r| check_python(&transcript.text, &r));
    if let Some(f) = code.as_ref().and_then(|c| c.failure()) {
        failures.push(f);
    }
    AnswerVerdict { transcript: Some(transcript), code, failures }
}
