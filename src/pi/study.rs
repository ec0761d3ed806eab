//! A Pi study as a configuration of the study loop: the same interleaved order, hooks, idle gate,
//! telemetry, evidence and resume as `abprof ab`; only the load is the real Pi agent.
use super::error::PiError;
use crate::measure::pi::{AgentModel, PiLoad, PiSettings};
use crate::measure::Sample;
use crate::schedule::Slot;
use crate::study::evidence::SampleLayout;
use crate::study::file::PiSection;
use crate::study::{StudyConfig, StudyContext};
use anyhow::Result;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// Called after each recorded sample (the CLI rewrites `pi.json` and prints a line).
pub(crate) type OnSample<'a> = Box<dyn FnMut(&StudyContext<'_>, &Slot, &Sample) -> Result<()> + 'a>;

pub(crate) struct PiStudy<'a> {
    settings: PiSettings,
    on_sample: OnSample<'a>,
}

impl<'a> PiStudy<'a> {
    pub(crate) fn new(section: &PiSection, on_sample: OnSample<'a>) -> PiStudy<'a> {
        PiStudy {
            settings: PiSettings {
                pi_bin: section.pi_bin.clone(),
                prompt: section.prompt.clone(),
                model: AgentModel { context_window: section.context_window, max_tokens: section.max_tokens },
                timeout: Duration::from_secs(section.timeout_s),
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

/// `pi --version`, recorded with the study (the Pi version must stay identical across variants).
pub(crate) fn pi_version(pi_bin: &Path) -> Result<String, PiError> {
    let out = Command::new(pi_bin).arg("--version").env("PI_OFFLINE", "1").output().map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => PiError::PiMissing(pi_bin.to_path_buf()),
        _ => PiError::PiSpawn { bin: pi_bin.to_path_buf(), source: e },
    })?;
    let text = String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    Ok(text.trim().to_string())
}
