//! `abprof ab`'s configuration of the study loop, chosen by the study file: server samples
//! ([`ChatStudy`]) or llama-bench's ([`LlamaBenchStudy`], docs/methodology.md §4.4). A sweep
//! runs each point through here too.
use super::chat::ChatStudy;
use super::drive::{run_study_with, StudyRun};
use super::file::StudyFile;
use super::judge::Judge;
use super::llama_bench::LlamaBenchStudy;

/// Runs (or resumes) an A/B study, every sample one streamed chat request (or, with
/// `[llama_bench]`, one llama-bench run); `judge` says whether each sample is accepted (its
/// progress line) and, once the planned samples are taken, whether to add a block (a retake;
/// `until_ci_pct`, `until_decided`).
pub fn run_ab(
    file: &StudyFile,
    root: &std::path::Path,
    resume: bool,
    judge: Option<Judge>,
) -> anyhow::Result<StudyRun> {
    match &file.llama_bench {
        Some(section) => run_study_with(file, root, resume, &mut LlamaBenchStudy::new(section, judge)?),
        None => run_study_with(file, root, resume, &mut ChatStudy::judged_by(judge)),
    }
}
