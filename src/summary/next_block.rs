//! The study driver's question after its planned samples, answered from the study's summary.
use crate::study::evidence::Evidence;
use crate::study::{NextBlock, StudyFacts};

/// The study driver's question once its planned samples are taken: retake a block a rule about
/// the host spoiled (§7.19), or, in an adaptive study, add one for precision or a decision (§17)?
pub(crate) fn another_block(ev: &Evidence) -> anyhow::Result<Option<NextBlock>> {
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
