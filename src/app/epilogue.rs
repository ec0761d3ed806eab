//! The steps every kind of study ends with: the history record, the report's announcement, the
//! closing lines and the exit status.
use super::ending::Ending;
use crate::history::{History, HistoryLocation, Recording, StudyRecord};
use crate::report::{emit, Format};
use crate::summary::gate::Gate;
use anyhow::Result;
use std::path::Path;

/// How a study command ends, beside its study file: what the user asked of its output.
pub(crate) struct Finishing {
    pub(crate) format: Format,
    /// The results history the finished study is recorded in (none: `--no-history`), opened
    /// (created, migrated) before anything of the study is (docs/methodology.md §15).
    pub(crate) history: Option<HistoryLocation>,
    /// `--fail-on`: the CI gate over an A/B's verdicts.
    pub(crate) gate: Option<Gate>,
}

impl Finishing {
    pub(super) fn open_history(&self) -> Result<Option<History>> {
        Ok(match &self.history {
            Some(location) => Some(History::open_for_study(location)?),
            None => None,
        })
    }
}

/// Records a finished run in `history` (when one is open) and says where after the run's own
/// result, in text only (like the report's path: stderr stays for errors, a JSON document stays
/// one document). A record that cannot be built or written loses nothing measured and does not
/// change the run's exit status; one a PostgreSQL history cannot take now waits in the outbox,
/// said in one line (docs/methodology.md §15 "outbox"). A stop signal during the write does not
/// cut it: the write finishes, and the signal's number is returned for the command to exit
/// 128+N with its usual line (the study's own listener has ended with its loop, so without this
/// one the signal would be swallowed).
pub(crate) fn record(
    history: Option<&mut History>,
    root: &Path,
    format: Format,
    make: impl FnOnce() -> Result<StudyRecord>,
) -> Option<i32> {
    let h = history?;
    let stop = crate::stop_signal::StopSignal::listen_alone().ok();
    match make().and_then(|study| Ok(h.record_study(&study)?)) {
        Ok(Recording::Stored(study)) => {
            if format == Format::Text {
                let history = h.location.to_string();
                emit(&crate::report::history::RecordedIn { history: &history, study: &study }, format);
            }
        }
        Ok(Recording::Pending { pending, cause, .. }) => eprintln!(
            "abprof: warning: cannot reach the history {} ({cause}): the study is kept in {} until `abprof history push` sends it",
            h.location,
            pending.display()
        ),
        Err(e) => eprintln!(
            "abprof: warning: not recorded in the history: {}; the evidence is kept: `abprof history import {}` adds it later",
            crate::report::one_line(&e),
            root.display()
        ),
    }
    stop.and_then(|s| s.signal())
}

/// The line after "interrupted by signal N" when the signal came during the history write.
pub(super) const AFTER_SIGNAL_IN_RECORD: &str =
    " during the history write; the write finished: the study is complete and recorded";

/// After a study's own output: the report's paths, in text only (a `--json` document stays one
/// document; its reader finds the page at DIR/report.html), or the one line saying why it could
/// not be written. True when it could not.
pub(crate) fn announce(written: &Result<crate::report::pages::ReportFiles>, format: Format) -> bool {
    match written {
        Ok(files) => {
            if format == Format::Text {
                emit(files, format);
            }
            false
        }
        Err(e) => {
            eprintln!("abprof: error: {}", crate::report::one_line(e));
            true
        }
    }
}

/// The lines every study command ends with, after its own, and its exit status.
pub(super) struct Closing<'a> {
    /// Whose restore/verify hooks ran ("the restore/verify hooks", "… of a sweep point").
    pub(super) hooks: &'a str,
    /// Where the isolation record that says what to restore by hand is.
    pub(super) isolation_record: String,
    /// After "interrupted by signal N": what was kept and the command that finishes the study.
    pub(super) after_signal: String,
}

pub(super) fn close(ending: &Ending, c: Closing<'_>) -> i32 {
    if ending.host_unrestored {
        eprintln!(
            "abprof: error: {} failed, so the host may still be isolated: see {} and restore it by hand",
            c.hooks, c.isolation_record
        );
    }
    if let Some(sig) = ending.interrupted_by {
        eprintln!("abprof: interrupted by signal {sig}{}", c.after_signal);
    }
    ending.status()
}

/// The closing of a study of one folder (not a sweep).
pub(super) fn closing_of(ev: &crate::study::evidence::Evidence, after_signal: String) -> Closing<'static> {
    Closing {
        hooks: "the restore/verify hooks",
        isolation_record: ev.isolation_file().display().to_string(),
        after_signal,
    }
}
