//! `[llama_bench]`: a study whose every sample is one cold llama-bench run of the variant's build
//! (docs/methodology.md §4.4); what that study may not hold beside it is checked with the file
//! (`StudyFile::check`).
use crate::llama_bench::BenchTest;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LlamaBenchSection {
    /// llama-bench's own arguments for every variant, split like a shell splits words: its tests
    /// (`-p 512 -n 128 -d 0,4096`, `-pg 512,128`) and one value of any setting (`-fa 1`).
    pub(crate) args: String,
}

impl LlamaBenchSection {
    /// The arguments as words; None where they cannot be split.
    pub(crate) fn words(&self) -> Option<Vec<String>> {
        crate::variant::split_args(&self.args)
    }

    /// The tests every sample asks for, or the one line saying why these arguments ask none.
    pub(crate) fn tests(&self) -> Result<Vec<BenchTest>, String> {
        let words = self.words().ok_or_else(|| {
            format!("cannot split [llama_bench] args {:?} like a shell would: check its quotes", self.args)
        })?;
        crate::llama_bench::tests_asked(&words).map_err(|e| format!("[llama_bench] args: {e}"))
    }
}
