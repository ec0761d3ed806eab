//! The MTP yardstick (docs/methodology.md §4.1): the shape of the informal script llama.cpp's MTP
//! pull requests compare builds with — nine fixed chat prompts of different kinds, 192 tokens each,
//! seed 42, acceptance from each response's `timings.draft_n` / `draft_n_accepted`, one aggregate
//! block — taken abprof's way: every sample is one cold server that answers the nine in order.
//! The prompts are the project's own (`assets/mtp-yardstick/README.md`).
use super::sequence::SequenceRequest;
use crate::client::StreamRecord;
use serde::{Deserialize, Serialize};

/// Output tokens per request, the PR script's (a study's `tokens` may give another).
pub(crate) const TOKENS: u32 = 192;

/// The nine prompts in the order every sample sends them: (name, text).
pub(crate) const PROMPTS: [(&str, &str); 9] = [
    ("code", include_str!("../../assets/mtp-yardstick/01-code.txt")),
    ("code-review", include_str!("../../assets/mtp-yardstick/02-code-review.txt")),
    ("story", include_str!("../../assets/mtp-yardstick/03-story.txt")),
    ("explanation", include_str!("../../assets/mtp-yardstick/04-explanation.txt")),
    ("summary", include_str!("../../assets/mtp-yardstick/05-summary.txt")),
    ("translation", include_str!("../../assets/mtp-yardstick/06-translation.txt")),
    ("list", include_str!("../../assets/mtp-yardstick/07-list.txt")),
    ("math", include_str!("../../assets/mtp-yardstick/08-math.txt")),
    ("dialogue", include_str!("../../assets/mtp-yardstick/09-dialogue.txt")),
];

/// The PR script's aggregate block of one sample: the nine responses summed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct YardstickTotals {
    pub(crate) requests: usize,
    /// Σ `timings.draft_n`.
    pub(crate) drafted: u64,
    /// Σ `timings.draft_n_accepted`.
    pub(crate) accepted: u64,
    /// accepted / drafted; None when nothing was drafted.
    pub(crate) acceptance: Option<f64>,
    /// First request's start → last response's end, ms: the nine back to back, as the script
    /// times its loop.
    pub(crate) wall_ms: Option<f64>,
    /// Σ `timings.predicted_n` and Σ `predicted_ms`, and their ratio: decode tok/s over the nine.
    pub(crate) predicted_tokens: u64,
    pub(crate) decode_ms: f64,
    pub(crate) decode_tps: Option<f64>,
}

impl YardstickTotals {
    pub(crate) fn of(requests: &[SequenceRequest], wall_ms: Option<f64>) -> YardstickTotals {
        let drafted = requests.iter().map(|r| r.draft_n).sum();
        let accepted = requests.iter().map(|r| r.draft_n_accepted).sum();
        let predicted_tokens = requests.iter().filter_map(|r| r.predicted_n).sum();
        let decode_ms: f64 = requests.iter().filter_map(|r| r.predicted_ms).sum();
        YardstickTotals {
            requests: requests.len(),
            drafted,
            accepted,
            acceptance: (drafted > 0).then(|| accepted as f64 / drafted as f64),
            wall_ms,
            predicted_tokens,
            decode_ms,
            decode_tps: (decode_ms > 0.0).then(|| predicted_tokens as f64 / (decode_ms / 1000.0)),
        }
    }
}

/// A yardstick sample's nine requests and their aggregate (the record's `extra.mtp_yardstick`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct MtpYardstickRun {
    pub(crate) requests: Vec<SequenceRequest>,
    pub(crate) totals: YardstickTotals,
}

impl MtpYardstickRun {
    /// The run of the responses `(prompt name, response)` in the order they were sent.
    pub(crate) fn of(responses: &[(String, StreamRecord)]) -> MtpYardstickRun {
        let requests: Vec<SequenceRequest> = responses.iter().map(|(p, r)| SequenceRequest::of(p, r)).collect();
        let first = responses.first().and_then(|(_, r)| r.request_start);
        let last = responses.last().and_then(|(_, r)| r.response_end);
        let wall_ms = first.zip(last).map(|(a, b)| a.ms_until(&b));
        MtpYardstickRun { totals: YardstickTotals::of(&requests, wall_ms), requests }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::SseParser;
    use crate::clock::Stamp;
    use crate::measure::sequence::short_requests;

    /// The responses of `tests/fixtures/mtp-yardstick/` (its README says where they come from).
    fn fixture(name: &str) -> StreamRecord {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mtp-yardstick").join(name);
        let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let (mut p, mut events) = (SseParser::new(), Vec::new());
        p.feed(&bytes, &mut events);
        let mut r = StreamRecord::default();
        for ev in &events {
            r.on_event(ev, Stamp { mono_ns: 0, boot_ns: 0 }).unwrap();
        }
        r
    }

    #[test]
    fn the_prompts_are_nine_distinct_non_empty_texts() {
        assert_eq!(PROMPTS.len(), 9);
        for (i, (name, text)) in PROMPTS.iter().enumerate() {
            assert!(text.trim().len() > 100, "{name}");
            assert!(PROMPTS[..i].iter().all(|(n, t)| n != name && t != text), "{name} twice");
        }
    }

    #[test]
    fn totals_of_real_draft_mtp_responses_sum_the_timings() {
        let on = fixture("predictable-mtp-code.sse");
        let req = SequenceRequest::of("code", &on);
        let t = on.timings.as_ref().unwrap();
        assert!(t["draft_n"].as_u64().unwrap() > 0, "{t}");
        assert_eq!(req.draft_n, t["draft_n"].as_u64().unwrap());
        assert_eq!(req.draft_n_accepted, t["draft_n_accepted"].as_u64().unwrap());
        assert_eq!(req.predicted_n, Some(TOKENS as u64));
        let nine: Vec<(String, StreamRecord)> = PROMPTS.iter().map(|(n, _)| (n.to_string(), on.clone())).collect();
        let run = MtpYardstickRun::of(&nine);
        let tot = &run.totals;
        assert_eq!(tot.requests, 9);
        assert_eq!(tot.drafted, 9 * req.draft_n);
        assert_eq!(tot.accepted, 9 * req.draft_n_accepted);
        assert!(tot.acceptance.unwrap() > 0.9, "{tot:?}");
        assert_eq!(tot.predicted_tokens, 9 * TOKENS as u64);
        let tps = TOKENS as f64 / (req.predicted_ms.unwrap() / 1000.0);
        assert!((tot.decode_tps.unwrap() - tps).abs() < 1e-9 * tps, "the nine's ratio, not a mean of rates");
        assert!(short_requests(&run.requests, TOKENS).is_empty());
        assert_eq!(short_requests(&run.requests, TOKENS + 1).len(), 9);
    }

    #[test]
    fn a_response_without_draft_counts_drafted_nothing() {
        let off = fixture("predictable-plain-code.sse");
        assert!(off.timings.as_ref().unwrap().get("draft_n").is_none(), "the pinned server omits them");
        let run = MtpYardstickRun::of(&[("code".into(), off.clone()), ("list".into(), off)]);
        assert_eq!((run.totals.drafted, run.totals.accepted, run.totals.acceptance), (0, 0, None));
        assert_eq!(run.totals.predicted_tokens, 2 * TOKENS as u64);
        assert!(run.totals.decode_tps.unwrap() > 0.0);
    }
}
