//! The summary's answers the study driver asks for while a study runs, handed down by the
//! caller so this floor imports nothing above it (docs/methodology.md §7, §17, §19).
use super::evidence::{Evidence, NextBlock};
use anyhow::Result;
use std::path::Path;

/// What the study driver asks of the rulebook above it.
pub trait StudyJudge: Send + Sync {
    /// Once every planned sample is taken: whether to plan one more interleaved block, and why
    /// (a retake, §7.19; precision or a decision, §17; a bisect step not decided yet, §19).
    fn another_block(&self, ev: &Evidence) -> Result<Option<NextBlock>>;
    /// The rules that reject the sample just recorded in `sample_dir` of `ev` (none: accepted),
    /// for its progress line; the summary judges it again, with the rules across samples.
    fn rejections(&self, ev: &Evidence, sample_dir: &Path) -> Result<Vec<String>>;
}

/// The judge a configuration is handed (none: no more blocks, and progress lines without an
/// acceptance).
pub type Judge = std::sync::Arc<dyn StudyJudge>;
