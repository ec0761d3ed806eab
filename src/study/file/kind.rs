//! Which kind of study a study file defines, recorded in it as `kind = "…"`. A sweep is not a kind:
//! it is a shape (`[sweep]`, one whole study per point) of a study of some kind.
use super::pi::PiSection;
use super::trace::TraceSection;
use serde::{Deserialize, Serialize};

/// What a study measures, and so which command runs and resumes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StudyKind {
    /// `abprof ab`: every sample one streamed chat request; a fixed sample count or the adaptive
    /// rule (`until_ci_pct`, docs/methodology.md §17).
    Ab,
    /// `abprof trace`: an A/B study whose first samples of every variant run under a kernel
    /// tracer (its `[trace]` section).
    Trace,
    /// `abprof pi`: every sample one run of the Pi agent (its `[pi]` section).
    Pi,
}

impl StudyKind {
    /// The subcommand that runs and resumes a study of this kind.
    pub(crate) fn command(self) -> &'static str {
        match self {
            StudyKind::Ab => "ab",
            StudyKind::Trace => "trace",
            StudyKind::Pi => "pi",
        }
    }

    /// The kind in words, for a sentence: "an A/B study".
    pub(crate) fn a_study(self) -> &'static str {
        match self {
            StudyKind::Ab => "an A/B study",
            StudyKind::Trace => "a trace study",
            StudyKind::Pi => "a Pi study",
        }
    }

    /// The kind of a study file that does not record one (written before `kind` existed, or by a
    /// user): the section its kind needs. The one place a kind is inferred.
    pub(crate) fn of_sections(has_pi: bool, has_trace: bool) -> StudyKind {
        match (has_pi, has_trace) {
            (true, _) => StudyKind::Pi,
            (false, true) => StudyKind::Trace,
            (false, false) => StudyKind::Ab,
        }
    }
}

/// A study file's kind with the section of its own that the kind needs.
#[derive(Debug, Clone, Copy)]
pub(crate) enum KindSection<'a> {
    /// With its adaptive rule, when it has one.
    Ab(Option<AdaptiveRule>),
    Trace(&'a TraceSection),
    Pi(&'a PiSection),
}

/// An A/B study's adaptive sample count: add interleaved blocks until every candidate's decode
/// interval is narrower than ± `until_ci_pct` (`--until-ci`), or decided (`--until-decided`: it
/// excludes 0 or lies inside ± `mei_pct`), or each variant has `max_samples`
/// (docs/methodology.md §17).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct AdaptiveRule {
    pub(crate) until_ci_pct: Option<f64>,
    pub(crate) until_decided: bool,
    pub(crate) mei_pct: Option<f64>,
    pub(crate) max_samples: u32,
}
