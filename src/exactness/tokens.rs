//! A response's generated tokens with their top-k alternatives, checked complete: the client
//! already rejects entries without a token or logprob; here every token must also carry its id
//! and k alternatives with ids, and there must be one entry per generated token.
use super::error::LogprobsError;
use crate::client::TokenLogprobs;
use serde::{Deserialize, Serialize};

/// One of the k most likely tokens at a position.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Alternative {
    pub(crate) id: u32,
    pub(crate) text: String,
    pub(crate) logprob: f64,
}

/// One generated token: what was chosen, and the top-k the server reported for its position.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct CapturedToken {
    pub(crate) id: u32,
    pub(crate) text: String,
    pub(crate) logprob: f64,
    pub(crate) top: Vec<Alternative>,
    /// Leading bytes of this entry that belong to tokens the server held back (their text ended
    /// inside a UTF-8 character) and never reported on their own: those positions are not
    /// compared (docs/methodology.md §12).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub(crate) folded_bytes: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// How many leading bytes of `t` are not its own token's: llama-server (0c1e57098) holds back a
/// token whose text ends inside a UTF-8 character, sends its bytes at the head of the next
/// entry, and sends that next token's id and logprobs only, streamed or not. The token's own
/// bytes are those of the alternative with its id (at temperature 0 the chosen token is in the
/// top-k).
fn folded_bytes(t: &TokenLogprobs) -> usize {
    let own = t.top_logprobs.iter().find(|a| a.id.is_some() && a.id == t.id).and_then(|a| a.bytes.as_ref());
    match (&t.bytes, own) {
        (Some(all), Some(own)) if all.len() > own.len() && all.ends_with(own) => all.len() - own.len(),
        _ => 0,
    }
}

fn finite(index: usize, text: &str, value: f64) -> Result<f64, LogprobsError> {
    if value.is_finite() {
        Ok(value)
    } else {
        Err(LogprobsError::NotFinite { index, text: text.into(), value })
    }
}

/// Checks a streamed response's logprobs against its usage and `top_k`, in order. A response
/// that ended on end-of-generation (`finish_reason` "stop") counts that token in its usage but
/// sends no logprobs entry for it (seen on the test bed), so one entry fewer is complete there.
/// Tokens folded into the next entry ([`folded_bytes`]) have no entry either: a shortfall is
/// accepted when the folded entries explain it (each hides at least one token, and at most one
/// per folded byte).
pub(crate) fn captured_tokens(
    logprobs: &[TokenLogprobs],
    completion_tokens: Option<u64>,
    finish_reason: Option<&str>,
    top_k: usize,
) -> Result<Vec<CapturedToken>, LogprobsError> {
    let tokens = completion_tokens.unwrap_or(logprobs.len() as u64);
    let unreported_end = u64::from(finish_reason == Some("stop") && tokens > 0);
    if logprobs.is_empty() && tokens > unreported_end {
        return Err(LogprobsError::Missing { tokens });
    }
    let folded: Vec<usize> = logprobs.iter().map(folded_bytes).filter(|&b| b > 0).collect();
    let (entries, folded_bytes_total) = (folded.len() as u64, folded.iter().sum::<usize>() as u64);
    let explained =
        |missing: u64| missing == 0 || (entries >= 1 && entries <= missing && missing <= folded_bytes_total);
    let got = logprobs.len() as u64;
    let complete = tokens >= got
        && (explained(tokens - got) || (unreported_end == 1 && tokens > got && explained(tokens - got - 1)));
    if !complete {
        return Err(LogprobsError::Count { got: logprobs.len(), tokens });
    }
    logprobs
        .iter()
        .enumerate()
        .map(|(index, t)| {
            let id = t.id.ok_or_else(|| LogprobsError::NoId { index, text: t.token.clone() })?;
            if t.top_logprobs.len() < top_k {
                return Err(LogprobsError::ShortTop {
                    index,
                    text: t.token.clone(),
                    got: t.top_logprobs.len(),
                    want: top_k,
                });
            }
            let top = t
                .top_logprobs
                .iter()
                .enumerate()
                .map(|(rank, a)| {
                    let id = a.id.ok_or_else(|| LogprobsError::NoTopId { index, rank, text: a.token.clone() })?;
                    Ok(Alternative { id, text: a.token.clone(), logprob: finite(index, &a.token, a.logprob)? })
                })
                .collect::<Result<Vec<_>, _>>()?;
            Ok(CapturedToken {
                id,
                text: t.token.clone(),
                logprob: finite(index, &t.token, t.logprob)?,
                top,
                folded_bytes: folded_bytes(t),
            })
        })
        .collect()
}

/// A recorded SSE body's `logprobs.content` entries and its usage's completion tokens
/// (tests/fixtures/exactness/).
#[cfg(test)]
pub(crate) fn replay(sse: &str) -> (Vec<TokenLogprobs>, u64) {
    let mut events = Vec::new();
    crate::client::SseParser::new().feed(sse.as_bytes(), &mut events);
    let (mut list, mut n) = (Vec::new(), 0);
    for ev in events.iter().filter(|e| e.data != "[DONE]") {
        let v: serde_json::Value = serde_json::from_str(&ev.data).unwrap();
        if let Some(content) = v.pointer("/choices/0/logprobs/content") {
            list.extend(serde_json::from_value::<Vec<TokenLogprobs>>(content.clone()).unwrap());
        }
        if let Some(c) = v.pointer("/usage/completion_tokens") {
            n = c.as_u64().unwrap();
        }
    }
    (list, n)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `logprobs.content` entries and usage of a real streamed response (SmolLM2-135M on the
    /// test bed, 8 tokens, top_logprobs 5): tests/fixtures/exactness/README.md.
    fn recorded() -> (Vec<TokenLogprobs>, u64) {
        replay(include_str!("../../tests/fixtures/exactness/smollm2-8-tokens.sse"))
    }

    #[test]
    fn a_real_response_is_complete() {
        let (list, n) = recorded();
        let toks = captured_tokens(&list, Some(n), Some("length"), 5).unwrap();
        assert_eq!(toks.len() as u64, n);
        assert!(toks.iter().all(|t| t.top.len() == 5 && t.top[0].id == t.id));
    }

    #[test]
    fn tokens_held_back_mid_character_are_folded_into_the_next_entry() {
        // A real response of the random target (tests/fixtures/exactness/README.md): 32 tokens,
        // 30 entries; two tokens ended inside a UTF-8 character and came out as the head of the
        // next entry, under that entry's id.
        let (list, n) = replay(include_str!("../../tests/fixtures/exactness/target-utf8-32-tokens.sse"));
        assert_eq!((list.len(), n), (30, 32));
        let toks = captured_tokens(&list, Some(n), Some("length"), 5).unwrap();
        assert_eq!(toks.len(), 30);
        let folded: Vec<(usize, usize)> =
            toks.iter().enumerate().filter(|(_, t)| t.folded_bytes > 0).map(|(i, t)| (i, t.folded_bytes)).collect();
        assert_eq!(folded, vec![(20, 1), (27, 2)]);
        // The shortfall must be explained: 3 folded bytes can hide at most 3 tokens, so 4
        // missing entries cannot, nor can a response whose folded entries were unfolded.
        assert_eq!(captured_tokens(&list, Some(n + 1), Some("length"), 5).unwrap().len(), 30);
        assert!(matches!(
            captured_tokens(&list, Some(n + 2), Some("length"), 5).unwrap_err(),
            LogprobsError::Count { got: 30, tokens: 34 }
        ));
        let mut unfolded = list.clone();
        for t in &mut unfolded {
            t.bytes = None;
        }
        assert!(captured_tokens(&unfolded, Some(n), Some("length"), 5).is_err());
        // A complete response has nothing folded.
        let (list, n) = recorded();
        assert!(captured_tokens(&list, Some(n), Some("length"), 5).unwrap().iter().all(|t| t.folded_bytes == 0));
    }

    #[test]
    fn an_end_of_generation_token_has_no_entry() {
        // A real response that ended by itself: 14 tokens in its usage, 13 logprobs entries.
        let (list, n) = replay(include_str!("../../tests/fixtures/exactness/smollm2-stop.sse"));
        assert_eq!((list.len(), n), (13, 14));
        assert_eq!(captured_tokens(&list, Some(n), Some("stop"), 5).unwrap().len(), 13);
        // On "stop" the usage counts the end-of-generation token, the logprobs do not.
        let (list, n) = recorded();
        assert_eq!(captured_tokens(&list, Some(n + 1), Some("stop"), 5).unwrap().len() as u64, n);
        assert!(captured_tokens(&list, Some(n + 1), Some("length"), 5).is_err());
        assert!(captured_tokens(&list, Some(n + 2), Some("stop"), 5).is_err());
        assert!(captured_tokens(&[], Some(1), Some("stop"), 5).unwrap().is_empty());
    }

    #[test]
    fn missing_or_malformed_logprobs_are_one_clear_error() {
        let (list, n) = recorded();
        let one_line = |e: LogprobsError| {
            let s = e.to_string();
            assert!(!s.contains('\n'), "{s}");
            s
        };
        // The server ignored the request's logprobs.
        let e = captured_tokens(&[], Some(n), Some("length"), 5).unwrap_err();
        assert_eq!(e, LogprobsError::Missing { tokens: n });
        assert!(one_line(e).contains("no logprobs"));
        // One entry lost.
        let e = captured_tokens(&list[1..], Some(n), Some("length"), 5).unwrap_err();
        assert!(one_line(e).contains(&format!("{} of its {n}", n - 1)));
        // No id on a token, no id on an alternative, too few alternatives.
        let mut no_id = list.clone();
        no_id[2].id = None;
        assert!(matches!(captured_tokens(&no_id, Some(n), None, 5).unwrap_err(), LogprobsError::NoId { index: 2, .. }));
        let mut no_alt_id = list.clone();
        no_alt_id[3].top_logprobs[4].id = None;
        assert!(matches!(
            captured_tokens(&no_alt_id, Some(n), None, 5).unwrap_err(),
            LogprobsError::NoTopId { index: 3, rank: 4, .. }
        ));
        let mut short = list.clone();
        short[0].top_logprobs.truncate(2);
        let e = captured_tokens(&short, Some(n), None, 5).unwrap_err();
        assert!(one_line(e).contains("has 2 top logprobs, expected 5"));
        let mut nan = list;
        nan[1].logprob = f64::NEG_INFINITY;
        assert!(matches!(
            captured_tokens(&nan, Some(n), None, 5).unwrap_err(),
            LogprobsError::NotFinite { index: 1, .. }
        ));
    }
}
