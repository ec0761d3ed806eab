//! The Pi configuration of the study loop (docs/methodology.md §11), the final realism gate: the
//! same interleaved order, hooks, idle gate, telemetry, evidence and resume as `abprof ab`; only
//! the load is the real Pi coding agent (`measure::pi`), and its report is `summary::pi`.
use super::drive::{StudyConfig, StudyContext};
use super::evidence::SampleLayout;
use super::facts::version_probe;
use super::file::PiSection;
use crate::measure::pi::AgentModel;
use crate::measure::Sample;
use crate::measure::{PiLoad, PiSettings};
use crate::schedule::Slot;
use anyhow::Result;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Duration;
use thiserror::Error;

pub use crate::measure::pi::{judge_answer, parse_transcript, CodeOutcome, CodeRun};

#[derive(Debug, Error)]
pub(crate) enum PiError {
    #[error("pi not found at {0}: install it with `npm install -g @mariozechner/pi-coding-agent@0.73.1` (scripts/system-deps does) or pass --pi-bin")]
    PiMissing(PathBuf),
    #[error("could not start pi ({bin}): {source}")]
    PiSpawn { bin: PathBuf, source: std::io::Error },
    #[error("`{} --version` did not answer within {secs} s and was stopped: check that pi runs (`pi --version`), or pass another --pi-bin", bin.display())]
    VersionTimedOut { bin: PathBuf, secs: u64 },
}

/// The primary sustained-decode prompt (docs/methodology.md §11): long enough output to measure
/// decode, and code that can be executed to prove the output is real.
const DECODE_PROMPT: &str = "Do not use any tools. Write a correct stable merge sort implementation in Python. Include type hints, a docstring, a short explanation of the algorithm and its time and space complexity, and five assert-based tests. Return one self-contained answer.";

/// The controlled Pi workloads of docs/methodology.md §11.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub(crate) enum PiMode {
    /// The merge-sort prompt; the answer's Python is extracted and run.
    Decode,
}

impl PiMode {
    pub(crate) fn prompt(self) -> &'static str {
        match self {
            PiMode::Decode => DECODE_PROMPT,
        }
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            PiMode::Decode => "decode",
        }
    }
}

/// Called after each recorded sample (the CLI rewrites `pi.json` and prints a line).
pub(crate) type OnSample<'a> = Box<dyn FnMut(&StudyContext<'_>, &Slot, &Sample) -> Result<()> + 'a>;

pub(crate) struct PiStudy<'a> {
    settings: PiSettings,
    on_sample: OnSample<'a>,
}

impl<'a> PiStudy<'a> {
    /// `stall_timeout`: the study's (`stall_timeout_s`), applied to Pi's output.
    pub(crate) fn new(section: &PiSection, stall_timeout: Duration, on_sample: OnSample<'a>) -> PiStudy<'a> {
        PiStudy {
            settings: PiSettings {
                pi_bin: section.pi_bin.clone(),
                prompt: section.prompt.clone(),
                model: AgentModel { context_window: section.context_window, max_tokens: section.max_tokens },
                timeout: Duration::from_secs(section.timeout_s),
                stall_timeout,
                python: section.python.clone(),
                code_timeout: Duration::from_secs(section.code_timeout_s),
                check_code: true,
            },
            on_sample,
        }
    }
}

impl StudyConfig for PiStudy<'_> {
    type Load = PiLoad;

    fn layout(&self) -> SampleLayout {
        SampleLayout::Pi
    }

    fn load(&self, ctx: &StudyContext<'_>, _slot: &Slot) -> Result<PiLoad> {
        Ok(PiLoad::new(self.settings.clone(), ctx.cancel.clone()))
    }

    fn after_sample(&mut self, ctx: &StudyContext<'_>, slot: &Slot, sample: &Sample) -> Result<()> {
        (self.on_sample)(ctx, slot, sample)
    }
}

/// How long `pi --version` may take: Node starts in a second or two even on a loaded host.
const PI_VERSION_TIMEOUT: Duration = Duration::from_secs(30);

/// `pi --version`, recorded with the study (the Pi version must stay identical across variants).
/// A pi that does not answer is ended (the same probe as a variant's `--version`), not waited for.
pub(crate) fn pi_version(pi_bin: &Path) -> Result<String, PiError> {
    match version_probe(pi_bin, &[("PI_OFFLINE", "1")], PI_VERSION_TIMEOUT) {
        Ok(Some(text)) => Ok(text),
        Ok(None) => Err(PiError::VersionTimedOut { bin: pi_bin.to_path_buf(), secs: PI_VERSION_TIMEOUT.as_secs() }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(PiError::PiMissing(pi_bin.to_path_buf())),
        Err(e) => Err(PiError::PiSpawn { bin: pi_bin.to_path_buf(), source: e }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_pi_that_never_answers_its_version_is_ended_with_one_line() {
        let d = tempfile::tempdir().unwrap();
        let stuck = d.path().join("pi");
        std::fs::write(&stuck, "#!/bin/sh\ntrap '' TERM\nwhile :; do sleep 1; done\n").unwrap();
        std::fs::set_permissions(&stuck, std::fs::Permissions::from_mode(0o755)).unwrap();
        let t = std::time::Instant::now();
        let e = version_probe(&stuck, &[], Duration::from_millis(300)).unwrap();
        assert_eq!(e, None);
        assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
        let said = PiError::VersionTimedOut { bin: stuck.clone(), secs: 30 }.to_string();
        assert!(said.contains("--version") && said.contains("30 s"), "{said}");
        let ok = d.path().join("pi-ok");
        std::fs::write(&ok, "#!/bin/sh\n[ \"$PI_OFFLINE\" = 1 ] && echo 0.73.1\n").unwrap();
        std::fs::set_permissions(&ok, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(pi_version(&ok).unwrap(), "0.73.1");
        assert!(matches!(pi_version(&d.path().join("none")), Err(PiError::PiMissing(_))));
    }
}
