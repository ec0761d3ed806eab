//! `abprof bisect` from its plan to its exit status: the plan checked, the bisect run under the
//! stop-signal listener, its log printed, the convicting A/B's report written, and the status
//! from one table (docs/methodology.md §19).
use crate::bisect::record::{BisectOutcome, Confirmation};
use crate::bisect::{check, run as run_bisect, BisectPlan};
use crate::report::{emit, Format};
use crate::stop_signal::StopSignal;
use anyhow::Result;

/// Runs `plan` and prints its log in `format`: 0 when a first bad commit was named (and its
/// report written, and not contradicted by the grown A/B), 128+N when signal N stopped it, else 1.
pub(crate) fn bisect(plan: &BisectPlan, format: Format) -> Result<i32> {
    let (good, bad) = check(plan)?;
    let stop = StopSignal::listen_alone()?;
    let log = run_bisect(plan, &good, &bad, &stop)?;
    emit(&log, format);
    // The A/B that convicts the commit, as the page people look at (docs/methodology.md §19).
    let convicting = match &log.outcome {
        Some(BisectOutcome::FirstBad { step, .. }) => log.step(*step).and_then(|s| s.study.as_ref()),
        _ => None,
    };
    let folder = crate::study::run_folders::BisectFolder::at(&plan.root);
    let report_failed = convicting.is_some_and(|rel| super::announce(&convicting_report(&folder.step(rel)), format));
    Ok(match log.outcome {
        Some(BisectOutcome::FirstBad { .. }) if report_failed => 1,
        // The convicting A/B, grown, contradicts Wald's call (docs/methodology.md §19).
        Some(BisectOutcome::FirstBad { step, .. })
            if log.step(step).and_then(|s| s.confirmation) == Some(Confirmation::Contradicted) =>
        {
            1
        }
        Some(BisectOutcome::FirstBad { .. }) => 0,
        Some(BisectOutcome::Interrupted { signal }) => 128 + signal,
        _ => 1,
    })
}

/// The study report of a step's folder, from the summary the bisect wrote there.
fn convicting_report(dir: &std::path::Path) -> Result<crate::report::pages::ReportFiles> {
    let ev = crate::study::evidence::Evidence::open(dir)?;
    let summary: crate::summary::Summary = ev.read_study_summary()?;
    let facts = crate::study::StudyFacts::load(&ev)?;
    crate::report::pages::write_after_run(&ev, &summary, &facts)
}
