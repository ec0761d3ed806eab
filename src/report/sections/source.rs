//! What the report's sections are drawn from.
use crate::exactness::ExactnessReport;
use crate::summary::pi::PiReport;
use crate::summary::traces::TraceComparison;
use crate::summary::view::StudyView;
use crate::summary::Summary;

/// What the sections are drawn from: the study's summary, and where the whole folder was read
/// (the page, report.md, `summarize --format md`) the rest of its evidence.
#[derive(Clone, Copy)]
pub(crate) struct Source<'a> {
    pub(crate) summary: &'a Summary,
    pub(crate) view: Option<&'a StudyView>,
}

impl<'a> Source<'a> {
    pub(crate) fn summary(summary: &'a Summary) -> Source<'a> {
        Source { summary, view: None }
    }

    pub(crate) fn view(view: &'a StudyView) -> Source<'a> {
        Source { summary: &view.summary, view: Some(view) }
    }

    /// The kernel attribution: the view's (an `abprof trace` folder compares its own traces),
    /// else the summary's.
    pub(crate) fn traces(&self) -> Option<&'a TraceComparison> {
        match self.view {
            Some(v) => v.traces.as_ref(),
            None => self.summary.traces.as_ref(),
        }
    }

    /// The exactness gate's report: the view's (its unreadable file is named there), else the
    /// summary's.
    pub(crate) fn exactness(&self) -> Option<&'a ExactnessReport> {
        match self.view {
            Some(v) => v.exactness.as_ref(),
            None => self.summary.exactness.as_ref(),
        }
    }

    pub(crate) fn pi(&self) -> Option<&'a PiReport> {
        self.view.and_then(|v| v.pi.as_ref())
    }

    /// A Pi study reports its agent's runs, not the speed verdicts of an `ab` study.
    pub(crate) fn verdicts(&self) -> Option<&'a Summary> {
        self.pi().is_none().then_some(self.summary)
    }
}
