//! Pi's `--mode json` output: one JSON event per line. The answer is the text of the assistant
//! `message_end` events (docs/methodology.md §11: there is no top-level text field); a tool call,
//! a retry or a compaction means the run was not the one request the sample is about.
use serde::{Deserialize, Serialize};
use thiserror::Error;

#[derive(Debug, Error, PartialEq)]
pub enum TranscriptError {
    #[error("pi wrote no JSON events: it failed before the agent started (see its stderr)")]
    Empty,
    #[error("pi's JSONL line {line} is not JSON ({detail}): run pi with `--mode json`")]
    NotJson { line: usize, detail: String },
    #[error("pi's JSONL line {line} has no \"type\": not a pi --mode json event stream")]
    NoType { line: usize },
}

/// What one Pi run said and did.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Transcript {
    pub(crate) events: usize,
    /// Assistant `message_end` events (one for a single-request answer).
    pub assistant_messages: usize,
    /// The text parts of every assistant `message_end`, in order.
    pub text: String,
    /// Names of the tools the model called (from `toolCall` content parts and
    /// `tool_execution_start` events, each call counted once).
    pub tool_calls: Vec<String>,
    /// The last assistant message's stop reason ("stop", "length", "toolUse", "error", "aborted").
    pub stop_reason: Option<String>,
    pub(crate) error_message: Option<String>,
    /// Pi's own usage count of the last assistant message.
    pub(crate) input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
    pub(crate) compactions: usize,
    pub(crate) retries: usize,
}

pub fn parse_transcript(jsonl: &str) -> Result<Transcript, TranscriptError> {
    let mut t = Transcript::default();
    let mut call_ids: Vec<String> = Vec::new();
    let mut note_call = |t: &mut Transcript, id: Option<&str>, name: &str| {
        if let Some(id) = id {
            if call_ids.iter().any(|c| c == id) {
                return;
            }
            call_ids.push(id.to_string());
        }
        t.tool_calls.push(name.to_string());
    };
    for (i, line) in jsonl.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let line_no = i + 1;
        let ev: serde_json::Value = serde_json::from_str(line)
            .map_err(|e| TranscriptError::NotJson { line: line_no, detail: e.to_string() })?;
        let kind = ev.get("type").and_then(|k| k.as_str()).ok_or(TranscriptError::NoType { line: line_no })?;
        t.events += 1;
        match kind {
            "message_end" if ev.pointer("/message/role").and_then(|r| r.as_str()) == Some("assistant") => {
                let m = &ev["message"];
                t.assistant_messages += 1;
                for part in m["content"].as_array().map(|a| a.as_slice()).unwrap_or(&[]) {
                    match part.get("type").and_then(|p| p.as_str()) {
                        Some("text") => t.text.push_str(part["text"].as_str().unwrap_or("")),
                        Some("toolCall") => {
                            note_call(&mut t, part["id"].as_str(), part["name"].as_str().unwrap_or("?"))
                        }
                        _ => {}
                    }
                }
                t.stop_reason = m["stopReason"].as_str().map(String::from);
                t.error_message = m["errorMessage"].as_str().map(String::from);
                t.input_tokens = m.pointer("/usage/input").and_then(|u| u.as_u64());
                t.output_tokens = m.pointer("/usage/output").and_then(|u| u.as_u64());
            }
            "tool_execution_start" => {
                note_call(&mut t, ev["toolCallId"].as_str(), ev["toolName"].as_str().unwrap_or("?"))
            }
            "compaction_start" => t.compactions += 1,
            "auto_retry_start" => t.retries += 1,
            _ => {}
        }
    }
    if t.events == 0 {
        return Err(TranscriptError::Empty);
    }
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recorded_real_run() {
        // The real pi 0.73.1 against SmolLM2 on the test bed (tests/fixtures/pi/README.md).
        let t = parse_transcript(include_str!("../../../tests/fixtures/pi/square-valid.jsonl")).unwrap();
        assert_eq!(t.assistant_messages, 1);
        assert!(t.text.starts_with("```python\nimport math"), "{}", t.text);
        assert_eq!(t.stop_reason.as_deref(), Some("stop"));
        assert_eq!((t.input_tokens, t.output_tokens), (Some(657), Some(38)));
        assert!(t.tool_calls.is_empty() && t.error_message.is_none());
        assert_eq!((t.compactions, t.retries), (0, 0));
    }

    #[test]
    fn tool_calls_are_counted_once_each() {
        let jsonl = concat!(
            r#"{"type":"message_end","message":{"role":"assistant","content":[{"type":"text","text":"ok"},{"type":"toolCall","id":"c1","name":"bash","arguments":{}}],"stopReason":"toolUse"}}"#,
            "\n",
            r#"{"type":"tool_execution_start","toolCallId":"c1","toolName":"bash","args":{}}"#,
            "\n",
            r#"{"type":"tool_execution_start","toolCallId":"c2","toolName":"read","args":{}}"#,
            "\n"
        );
        let t = parse_transcript(jsonl).unwrap();
        assert_eq!(t.tool_calls, vec!["bash", "read"]);
        assert_eq!(t.stop_reason.as_deref(), Some("toolUse"));
    }

    #[test]
    fn garbage_is_a_clear_error() {
        assert_eq!(parse_transcript(""), Err(TranscriptError::Empty));
        assert!(matches!(
            parse_transcript("{\"type\":\"agent_start\"}\nnot json\n"),
            Err(TranscriptError::NotJson { line: 2, .. })
        ));
        assert_eq!(parse_transcript("{\"x\":1}\n"), Err(TranscriptError::NoType { line: 1 }));
    }
}
