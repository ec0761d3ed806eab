//! The SPEED-Bench-shaped workload (docs/methodology.md §4.3): the shape of llama.cpp's SPEED-Bench
//! client (tools/server/bench/speed-bench/) — one chat prompt per category of the dataset's
//! `qualitative` config, greedy, each response's `timings` read per category — taken abprof's way:
//! every sample is one cold server that answers the eleven in order. The prompts are the project's
//! own (`assets/speed-bench/README.md`).
use super::sequence::SequenceRequest;
use crate::client::StreamRecord;
use serde::{Deserialize, Serialize};

/// Output tokens per request when the study gives none (the upstream client's default `--osl` is
/// 1024; a quarter of it keeps a cold sample of eleven requests short).
pub(crate) const TOKENS: u32 = 256;

/// The eleven prompts in the order every sample sends them: (category, text).
pub(crate) const PROMPTS: [(&str, &str); 11] = [
    ("coding", include_str!("../../assets/speed-bench/01-coding.txt")),
    ("humanities", include_str!("../../assets/speed-bench/02-humanities.txt")),
    ("math", include_str!("../../assets/speed-bench/03-math.txt")),
    ("multilingual", include_str!("../../assets/speed-bench/04-multilingual.txt")),
    ("qa", include_str!("../../assets/speed-bench/05-qa.txt")),
    ("rag", include_str!("../../assets/speed-bench/06-rag.txt")),
    ("reasoning", include_str!("../../assets/speed-bench/07-reasoning.txt")),
    ("roleplay", include_str!("../../assets/speed-bench/08-roleplay.txt")),
    ("stem", include_str!("../../assets/speed-bench/09-stem.txt")),
    ("summarization", include_str!("../../assets/speed-bench/10-summarization.txt")),
    ("writing", include_str!("../../assets/speed-bench/11-writing.txt")),
];

/// A SPEED-Bench sample's requests, named by category, in the order sent (the record's
/// `extra.speed_bench`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct SpeedBenchRun {
    pub(crate) requests: Vec<SequenceRequest>,
}

impl SpeedBenchRun {
    /// The run of the responses `(category, response)` in the order they were sent.
    pub(crate) fn of(responses: &[(String, StreamRecord)]) -> SpeedBenchRun {
        SpeedBenchRun { requests: responses.iter().map(|(c, r)| SequenceRequest::of(c, r)).collect() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prompts_are_the_eleven_qualitative_categories_with_distinct_texts() {
        let categories: Vec<&str> = PROMPTS.iter().map(|(c, _)| *c).collect();
        assert_eq!(
            categories,
            [
                "coding",
                "humanities",
                "math",
                "multilingual",
                "qa",
                "rag",
                "reasoning",
                "roleplay",
                "stem",
                "summarization",
                "writing"
            ]
        );
        for (i, (name, text)) in PROMPTS.iter().enumerate() {
            assert!(text.trim().len() > 300, "{name}");
            assert!(PROMPTS[..i].iter().all(|(_, t)| t != text), "{name} repeats a prompt");
        }
    }
}
