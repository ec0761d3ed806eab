//! Which kind of study a study file defines, recorded in it as `kind = "…"` beside the section of
//! its own the kind needs (`[trace]`, `[pi]`). A sweep is not a kind: it is a shape (`[sweep]`, one
//! whole study per point) of a study of some kind.
use super::pi::PiSection;
use super::trace::TraceSection;
use serde::{Deserialize, Serialize};

/// The name of a study's kind: the file's `kind` key, and so the command that runs and resumes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum KindName {
    Ab,
    Trace,
    Pi,
}

impl KindName {
    /// The subcommand that runs and resumes a study of this kind (also the `kind` key's value).
    pub(crate) fn command(self) -> &'static str {
        match self {
            KindName::Ab => "ab",
            KindName::Trace => "trace",
            KindName::Pi => "pi",
        }
    }

    /// The kind in words, for a sentence: "an A/B study".
    pub(crate) fn a_study(self) -> &'static str {
        match self {
            KindName::Ab => "an A/B study",
            KindName::Trace => "a trace study",
            KindName::Pi => "a Pi study",
        }
    }
}

/// What a study measures, with the section of its file that the kind needs: a study file of one
/// kind cannot hold another kind's section, nor lack its own, once it is read.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum StudyKind {
    /// `abprof ab`: every sample one streamed chat request; a fixed sample count or the adaptive
    /// rule (the file's `until_ci_pct`, `until_decided`, docs/methodology.md §17).
    #[default]
    Ab,
    /// `abprof trace`: an A/B study whose first samples of every variant run under a kernel
    /// tracer.
    Trace(TraceSection),
    /// `abprof pi`: every sample one run of the Pi agent.
    Pi(PiSection),
}

impl StudyKind {
    pub(crate) fn name(&self) -> KindName {
        match self {
            StudyKind::Ab => KindName::Ab,
            StudyKind::Trace(_) => KindName::Trace,
            StudyKind::Pi(_) => KindName::Pi,
        }
    }

    /// The kind a file's keys define: its `kind`, else — in a file written before `kind` existed,
    /// or by hand — the kind its section implies (the one place a kind is inferred). A kind
    /// without its section, or beside another kind's, is refused in one line.
    pub(crate) fn from_keys(
        name: Option<KindName>,
        pi: Option<PiSection>,
        trace: Option<TraceSection>,
    ) -> Result<StudyKind, String> {
        if name.is_none() && pi.is_some() && trace.is_some() {
            return Err(
                "a study file holds the [pi] section or the [trace] one, not both: keep the one of its kind".into()
            );
        }
        let name = name.unwrap_or(match (&pi, &trace) {
            (Some(_), _) => KindName::Pi,
            (None, Some(_)) => KindName::Trace,
            (None, None) => KindName::Ab,
        });
        match (name, pi, trace) {
            (KindName::Ab, None, None) => Ok(StudyKind::Ab),
            (KindName::Ab, _, _) => {
                Err("kind = \"ab\" has no [pi] or [trace] section: drop it, or set the kind it belongs to".into())
            }
            (KindName::Trace, None, Some(t)) => Ok(StudyKind::Trace(t)),
            (KindName::Trace, _, None) => Err("kind = \"trace\" needs its [trace] section".into()),
            (KindName::Trace, Some(_), Some(_)) => Err("kind = \"trace\" has no [pi] section: drop it".into()),
            (KindName::Pi, Some(p), None) => Ok(StudyKind::Pi(p)),
            (KindName::Pi, None, _) => Err("kind = \"pi\" needs its [pi] section".into()),
            (KindName::Pi, Some(_), Some(_)) => Err("kind = \"pi\" has no [trace] section: drop it".into()),
        }
    }

    /// The `[trace]` section of a trace study.
    pub(crate) fn trace(&self) -> Option<&TraceSection> {
        match self {
            StudyKind::Trace(t) => Some(t),
            _ => None,
        }
    }

    /// The `[pi]` section of a Pi study.
    pub(crate) fn pi(&self) -> Option<&PiSection> {
        match self {
            StudyKind::Pi(p) => Some(p),
            _ => None,
        }
    }
}

/// An A/B study's adaptive sample count: add interleaved blocks until every candidate's decode
/// interval is narrower than ± `until_ci_pct` (`--until-ci`), or decided (`--until-decided`: it
/// excludes 0, or it and its equivalence interval hold 0 and the latter lies inside ± `mei_pct`),
/// or each variant has `max_samples` (docs/methodology.md §17).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct AdaptiveRule {
    pub(crate) until_ci_pct: Option<f64>,
    pub(crate) until_decided: bool,
    pub(crate) mei_pct: Option<f64>,
    pub(crate) max_samples: u32,
    /// The comparisons of the family a difference is judged in: 1 for a study on its own, a
    /// sweep's points × candidates for one of its points, whose difference stop waits for the
    /// level Holm's first step needs (docs/methodology.md §16).
    pub(crate) family: u32,
}
