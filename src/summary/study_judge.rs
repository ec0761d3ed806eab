//! The rulebook's answers to the study driver's questions while a study runs: whether the sample
//! just taken is accepted (its progress line), and whether to add a block once the planned
//! samples are taken.
use super::rules::sample_rejections;
use crate::study::evidence::Evidence;
use crate::study::{NextBlock, StudyFacts, StudyJudge};
use std::path::Path;

/// The summary's judge of an A/B, trace or sweep-point study.
pub(crate) struct SummaryJudge;

impl StudyJudge for SummaryJudge {
    /// Retake a block a rule about the host spoiled (§7.19), or, in an adaptive study, add one for
    /// precision or a decision (§17)?
    fn another_block(&self, ev: &Evidence) -> anyhow::Result<Option<NextBlock>> {
        let facts = StudyFacts::load(ev)?;
        if facts.file.retakes() == 0 && !facts.file.is_adaptive() {
            return Ok(None);
        }
        let summary = super::judge_with(ev, facts, super::TraceReading::Skip)?.summary;
        if summary.retakes.as_ref().is_some_and(super::retake::Retakes::due) {
            return Ok(Some(NextBlock::Retake));
        }
        Ok(summary.adaptive.is_some_and(|a| a.stopped.is_none()).then_some(NextBlock::Adaptive))
    }

    /// The per-sample rules (docs/methodology.md §7) with the study's expectations; the rules
    /// across samples (a prompt length differing from the baseline's) wait for the summary.
    fn rejections(&self, ev: &Evidence, sample_dir: &Path) -> anyhow::Result<Vec<String>> {
        let facts = StudyFacts::load(ev)?;
        let sample = ev.read_sample(sample_dir)?;
        let rejections = sample_rejections(&sample, &super::expectations(ev, &facts));
        Ok(rejections.into_iter().map(|r| r.rule.to_string()).collect())
    }
}

/// The judge every A/B, trace and sweep study is handed.
pub(crate) fn summary_judge() -> crate::study::Judge {
    std::sync::Arc::new(SummaryJudge)
}
