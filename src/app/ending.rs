//! The one exit-status table of the study commands (ab, sweeps, trace, pi): each fills an
//! [`Ending`] on its way to the end, and [`Ending::status`] reads it. Their `--help` texts say
//! the same table in words.
use crate::study::{Outcome, StudyRun};

/// What a study command's `--fail-on` gate found.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum GateEnding {
    /// No gate asked for, or it passed.
    #[default]
    Passed,
    /// A candidate is decided worse beyond the threshold (exit 3).
    Failed,
    /// Some candidate has too few accepted samples for an interval: the gate cannot say (exit 1).
    Unjudged,
}

/// The facts that decide a study command's exit status.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Ending {
    /// Stopped by this signal before the study's end (resumable).
    pub(crate) interrupted_by: Option<i32>,
    /// The restore/verify hooks failed: the host may still be isolated.
    pub(crate) host_unrestored: bool,
    /// The report could not be written (nothing measured is lost).
    pub(crate) report_failed: bool,
    /// A variant has no accepted sample.
    pub(crate) nothing_to_compare: bool,
    pub(crate) gate: GateEnding,
    /// A Pi sample failed its task (the agent or the answer's code).
    pub(crate) samples_failed: bool,
}

impl Ending {
    /// The ending a finished study loop leaves, before the command judges anything.
    pub(crate) fn of(outcome: &Outcome, restored: bool) -> Ending {
        let interrupted_by = match outcome {
            Outcome::Completed => None,
            Outcome::Interrupted(sig) => Some(*sig),
        };
        Ending { interrupted_by, host_unrestored: !restored, ..Ending::default() }
    }

    pub(crate) fn of_run(run: &StudyRun) -> Ending {
        Ending::of(&run.outcome, run.restored)
    }

    pub(crate) fn completed(&self) -> bool {
        self.interrupted_by.is_none()
    }

    /// 128+N stopped by signal N; 1 an error after the output (a host left isolated, a report
    /// not written, a variant with nothing accepted); 3 a gate that failed, or a Pi sample that
    /// failed; 1 a gate that could not judge; 0 done. A failed gate outranks an unjudged one: a
    /// regression proven on one candidate is the answer, whatever another lacks.
    pub(crate) fn status(&self) -> i32 {
        if let Some(sig) = self.interrupted_by {
            return 128 + sig;
        }
        if self.host_unrestored || self.report_failed || self.nothing_to_compare {
            return 1;
        }
        match self.gate {
            GateEnding::Failed => 3,
            GateEnding::Unjudged => 1,
            GateEnding::Passed if self.samples_failed => 3,
            GateEnding::Passed => 0,
        }
    }
}

/// The one wording of "nothing to compare" (exit 1, §13): `who` lacks an accepted sample, and
/// `where_` says where its rejections were printed.
pub(crate) fn say_nothing_to_compare(who: &str, where_: &str) {
    eprintln!(
        "abprof: error: {who} has no accepted sample, so there is nothing to compare: see the rejections {where_}"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn done() -> Ending {
        Ending::of(&Outcome::Completed, true)
    }

    #[test]
    fn the_table() {
        assert_eq!(done().status(), 0);
        assert_eq!(Ending { interrupted_by: Some(2), host_unrestored: true, ..done() }.status(), 130);
        assert_eq!(Ending::of(&Outcome::Interrupted(15), true).status(), 143);
        assert_eq!(Ending::of(&Outcome::Completed, false).status(), 1);
        assert_eq!(Ending { report_failed: true, gate: GateEnding::Failed, ..done() }.status(), 1);
        assert_eq!(Ending { nothing_to_compare: true, ..done() }.status(), 1);
        assert_eq!(Ending { gate: GateEnding::Failed, ..done() }.status(), 3);
        assert_eq!(Ending { gate: GateEnding::Unjudged, ..done() }.status(), 1);
        assert_eq!(Ending { samples_failed: true, ..done() }.status(), 3);
        assert_eq!(Ending { samples_failed: true, gate: GateEnding::Unjudged, ..done() }.status(), 1);
    }
}
