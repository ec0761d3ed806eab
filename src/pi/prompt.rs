//! The controlled Pi workloads of docs/methodology.md §11.
use serde::{Deserialize, Serialize};

/// The primary sustained-decode prompt (docs/methodology.md §11): long enough output to measure
/// decode, and code that can be executed to prove the output is real.
pub(crate) const DECODE_PROMPT: &str = "Do not use any tools. Write a correct stable merge sort implementation in Python. Include type hints, a docstring, a short explanation of the algorithm and its time and space complexity, and five assert-based tests. Return one self-contained answer.";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub(crate) enum PiMode {
    /// The merge-sort prompt; the answer's Python is extracted and run.
    Decode,
}

impl PiMode {
    pub(crate) fn prompt(self) -> &'static str {
        match self {
            PiMode::Decode => DECODE_PROMPT,
        }
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            PiMode::Decode => "decode",
        }
    }
}
