//! The server's own count of its drafts, beside the log's (docs/methodology.md §7.18): a
//! llama-server started with `--metrics` serves `/metrics` with vLLM-style spec-decode counters
//! (ggml-org/llama.cpp#26389), summed at each request's end from the same per-slot statistics
//! its log's `draft acceptance` line prints. A speculative sample whose server answers records both
//! counts; when they disagree, one of abprof's two readings of the server is wrong, and the sample
//! is rejected (rule `draft-counts-differ`).
use crate::server::log::TimingBlock;
use serde::{Deserialize, Serialize};

/// The counters' names in the pinned server (tools/server/server-task.cpp, `to_metrics`).
const DRAFTED: &str = "llamacpp:spec_decode_num_draft_tokens_total";
const ACCEPTED: &str = "llamacpp:spec_decode_num_accepted_tokens_total";
const STEPS: &str = "llamacpp:spec_decode_num_drafts_total";

/// A speculative sample's draft counts by `/metrics` and by the server log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct SpecMetrics {
    /// Tokens the drafts proposed (`…_num_draft_tokens_total`).
    pub(crate) drafted: u64,
    /// Draft tokens the target accepted (`…_num_accepted_tokens_total`).
    pub(crate) accepted: u64,
    /// Verification steps (`…_num_drafts_total`).
    pub(crate) verification_steps: u64,
    /// The log's drafted and accepted tokens over every request of this server (the counters
    /// cover the server's whole life, a warm-up request's too, not only the timed one).
    pub(crate) log_drafted: u64,
    pub(crate) log_accepted: u64,
}

impl SpecMetrics {
    /// The two readings, when they disagree: one line naming both.
    pub(crate) fn disagreement(&self) -> Option<String> {
        ((self.drafted, self.accepted) != (self.log_drafted, self.log_accepted)).then(|| {
            format!(
                "/metrics counted {} drafted and {} accepted tokens, the server log {} and {}: one of abprof's readings of this server's drafts is wrong",
                self.drafted, self.accepted, self.log_drafted, self.log_accepted
            )
        })
    }
}

/// The counts of `metrics` (the `/metrics` text) beside those of the log's `blocks`; None when
/// the text has no spec-decode counter (a build before them).
pub(crate) fn of(metrics: &str, blocks: &[TimingBlock]) -> Option<SpecMetrics> {
    let counter = |name: &str| {
        metrics.lines().find_map(|l| {
            let (key, value) = l.split_once(' ')?;
            (key == name).then(|| value.trim().parse::<f64>().ok()).flatten().map(|v| v as u64)
        })
    };
    let drafts = blocks.iter().filter_map(|b| b.draft.as_ref());
    Some(SpecMetrics {
        drafted: counter(DRAFTED)?,
        accepted: counter(ACCEPTED)?,
        verification_steps: counter(STEPS)?,
        log_drafted: drafts.clone().map(|d| d.generated).sum(),
        log_accepted: drafts.map(|d| d.accepted).sum(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> String {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/llama-server-mtp");
        std::fs::read_to_string(dir.join(name)).unwrap()
    }

    /// The real `/metrics` after one request, and the real log of such a request
    /// (tests/fixtures/llama-server-mtp/README.md): 23 drafted, 23 accepted, in 8 steps.
    #[test]
    fn the_real_counters_agree_with_the_real_log_and_a_different_count_is_named() {
        let log = fixture("predictable-mtp-300x32.log");
        let blocks = crate::server::log::timing_blocks(&log).unwrap();
        let m = of(&fixture("predictable-mtp-metrics.txt"), &blocks).unwrap();
        assert_eq!((m.drafted, m.accepted, m.verification_steps), (23, 23, 8));
        assert_eq!((m.log_drafted, m.log_accepted), (23, 23));
        assert_eq!(m.disagreement(), None);
        let off = SpecMetrics { accepted: 22, ..m };
        let line = off.disagreement().unwrap();
        assert!(
            line.contains("/metrics counted 23 drafted and 22 accepted tokens, the server log 23 and 23"),
            "{line}"
        );
    }

    #[test]
    fn a_metrics_page_without_spec_counters_records_nothing() {
        let text = "# TYPE llamacpp:prompt_tokens_total counter\nllamacpp:prompt_tokens_total 19\n";
        assert_eq!(of(text, &[]), None);
    }
}
