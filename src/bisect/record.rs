//! `bisect.json`: every step of a bisect as it happened, rewritten after each one, and the result
//! `abprof bisect` prints. Paths of study folders are relative to the bisect's folder.
use super::judge::{Call, CalledBy, Reading};
use crate::artifact::ccache::CcacheCounters;
use crate::summary::Metric;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct BuildRecord {
    pub(crate) commit: String,
    /// The artifact folder; None when the commit did not build.
    pub(crate) artifact: Option<PathBuf>,
    /// Found from an earlier run (same commit, patch and CMake arguments): nothing was built.
    pub(crate) reused: bool,
    pub(crate) seconds: f64,
    /// ccache's counters over this build (absent when reused or without ccache).
    pub(crate) ccache: Option<CcacheCounters>,
    pub(crate) ccache_hit_rate_pct: Option<f64>,
    /// Why the commit does not build (then the bisect skips it).
    pub(crate) error: Option<String>,
}

impl BuildRecord {
    /// `commit` before (or without) its build.
    pub(crate) fn not_built(commit: &str) -> BuildRecord {
        BuildRecord {
            commit: commit.into(),
            artifact: None,
            reused: false,
            seconds: 0.0,
            ccache: None,
            ccache_hit_rate_pct: None,
            error: None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum StepKind {
    /// Good against bad: the change the bisect looks for.
    Reference,
    /// A commit git asked about.
    Probe,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum StepCall {
    /// The reference step's measured change.
    Reference,
    Good,
    Bad,
    /// Does not build: `git bisect skip`.
    Skip,
    /// Still undecided at the sample cap: `git bisect skip`, as a commit that does not build.
    Inconclusive,
    /// Stopped by a signal before a call.
    Interrupted,
}

impl StepCall {
    pub(crate) fn from_call(c: Call) -> StepCall {
        match c {
            Call::Good => StepCall::Good,
            Call::Bad => StepCall::Bad,
            Call::Undecided => StepCall::Inconclusive,
        }
    }

    pub(crate) fn word(self) -> &'static str {
        match self {
            StepCall::Reference => "reference",
            StepCall::Good => "good",
            StepCall::Bad => "bad",
            StepCall::Skip => "skip (does not build)",
            StepCall::Inconclusive => "inconclusive (skipped)",
            StepCall::Interrupted => "interrupted",
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Step {
    pub(crate) index: usize,
    pub(crate) kind: StepKind,
    pub(crate) commit: String,
    pub(crate) subject: String,
    pub(crate) build: BuildRecord,
    /// The A/B study folder (good against this commit), relative to the bisect folder.
    pub(crate) study: Option<String>,
    /// Samples per variant when the call was made (more blocks were added while undecided).
    pub(crate) samples_per_variant: u32,
    pub(crate) reading: Option<Reading>,
    pub(crate) call: StepCall,
    /// What called a probe (§19): Wald's test, its own interval (a probe noisier than the steps
    /// before it) or its interval at the sample cap's look, reported apart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) called_by: Option<CalledBy>,
    /// The convicting step's A/B grown after Wald's call until its interval left the threshold
    /// (§19): set on that step only, when its interval reached the threshold at the call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) confirmation: Option<Confirmation>,
}

/// What the convicting A/B's interval said once grown (docs/methodology.md §19).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Confirmation {
    /// Wholly beyond the threshold: the call stands on its interval too.
    Confirmed,
    /// Wholly on the good side: the interval contradicts Wald's call (exit 1; bisect again).
    Contradicted,
    /// Still reaching the threshold at the sample cap: the call rests on Wald's test alone.
    Unconfirmed,
}

impl Confirmation {
    /// What growing the convicting A/B after Wald's call showed (docs/methodology.md §19).
    pub(crate) fn line(self, samples: u32) -> String {
        match self {
            Confirmation::Confirmed => format!(
                "Wald's test called it bad before its interval lay beyond the threshold; grown to {samples} samples per variant, the interval does (docs/methodology.md §19)"
            ),
            Confirmation::Contradicted => format!(
                "Wald's test called it bad, but grown to {samples} samples per variant its interval lies wholly on the good side of the threshold: the bisect's answer is in doubt; bisect again on a quieter host (docs/methodology.md §19)"
            ),
            Confirmation::Unconfirmed => format!(
                "called bad by Wald's test (at most 0.1% wrong); at the sample cap ({samples} per variant) its interval still reaches the threshold (docs/methodology.md §19)"
            ),
        }
    }
}

impl Step {
    /// A step about to build `commit`: nothing built, measured or called yet but its `call`.
    pub(crate) fn before_build(index: usize, kind: StepKind, commit: &str, subject: String, call: StepCall) -> Step {
        Step {
            index,
            kind,
            commit: commit.into(),
            subject,
            build: BuildRecord::not_built(commit),
            study: None,
            samples_per_variant: 0,
            reading: None,
            call,
            called_by: None,
            confirmation: None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub(crate) struct Threshold {
    /// Signed: a commit is bad when its whole interval lies beyond this, on this side of zero.
    pub(crate) pct: f64,
    /// The good→bad change it was halved from; None when --threshold gave it.
    pub(crate) half_of_pct: Option<f64>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub(crate) enum BisectOutcome {
    FirstBad {
        commit: String,
        subject: String,
        /// The step whose A/B convicts it.
        step: usize,
    },
    /// Skipped commits hide the boundary: the first bad commit is one of these.
    OnlySkipped {
        candidates: Vec<String>,
    },
    /// This step stayed undecided at the sample cap (a bisect before §19's skip of such steps;
    /// read from old logs, no longer written).
    Inconclusive {
        commit: String,
        step: usize,
    },
    /// Good and bad do not differ measurably: there is nothing to bisect.
    NoChange,
    Interrupted {
        signal: i32,
    },
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct BisectLog {
    pub(crate) root: PathBuf,
    pub(crate) repo: PathBuf,
    pub(crate) good: String,
    pub(crate) bad: String,
    /// The patch applied to every build (a copy is kept as source.patch).
    pub(crate) patch: Option<PathBuf>,
    pub(crate) cmake_args: Vec<String>,
    pub(crate) artifacts: PathBuf,
    pub(crate) metric: Metric,
    pub(crate) samples: u32,
    pub(crate) max_samples: u32,
    pub(crate) good_build: Option<BuildRecord>,
    pub(crate) threshold: Option<Threshold>,
    pub(crate) steps: Vec<Step>,
    /// None while the bisect runs.
    pub(crate) outcome: Option<BisectOutcome>,
    /// `git bisect log`, also kept as bisect-log.txt (`git bisect replay` re-runs it).
    pub(crate) git_log: Option<String>,
    pub(crate) started_at: String,
    pub(crate) wall_s: f64,
}

/// The one type a bisect folder's `bisect.json` holds.
impl crate::study::documents::BisectLogDoc for BisectLog {}

impl BisectLog {
    pub(crate) fn step(&self, index: usize) -> Option<&Step> {
        self.steps.iter().find(|s| s.index == index)
    }
}
