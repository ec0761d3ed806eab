//! The end of an exactness check: both sides' deterministic requests compared, exactness.json
//! and the sides' facts in the evidence folder, the history, and the gate's exit status.
use super::epilogue::{record, Finishing};
use crate::exactness::{run_exactness, ExactnessPlan, ExactnessSide, Gate, VariantClass};
use crate::measure::calibrate::{prompt_or_calibrate, PromptSource};
use crate::report::emit;
use crate::report::exactness::SavedExactness;
use crate::server::{free_port, LaunchSpec};
use crate::stop_signal::block_on_until_signal;
use crate::study::run_folders::ExactnessFolder;
use crate::summary::fingerprint::ExactnessFacts;
use crate::variant::Variant;
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// An exactness check as its flags asked for it, checked.
pub(crate) struct ExactnessRequest {
    pub(crate) root: PathBuf,
    /// Baseline, candidate.
    pub(crate) variants: [Variant; 2],
    /// Each side's model (its own model=, else --model), checked to exist.
    pub(crate) models: [PathBuf; 2],
    pub(crate) common: Vec<String>,
    pub(crate) class: VariantClass,
    /// A prompt file; without one, a prompt of `prompt_tokens` is calibrated on the baseline.
    pub(crate) prompt: Option<PathBuf>,
    pub(crate) prompt_tokens: u64,
    pub(crate) tokens: u32,
    pub(crate) ignore_eos: bool,
    pub(crate) health_timeout: Duration,
    pub(crate) stall_timeout: Duration,
}

impl Gate {
    /// The exit status of `abprof exactness` (its --help says the same).
    fn exit_status(self) -> i32 {
        match self {
            Gate::Exact => 0,
            Gate::CosinePass => 3,
            Gate::Fail => 4,
        }
    }
}

pub(crate) fn exactness(r: &ExactnessRequest, how: Finishing) -> Result<i32> {
    let mut history = how.open_history()?;
    let root = &r.root;
    let folder = ExactnessFolder::at(root);
    let mut sides = Vec::new();
    for (v, model) in r.variants.iter().zip(&r.models) {
        let logs = folder.side(&v.label).server_logs();
        sides.push(ExactnessSide {
            label: v.label.clone(),
            spec: v.spec.clone(),
            launch: launch(v, model, &r.common, logs)?,
            expect: v.expect_regex(),
        });
    }
    let rt = crate::client::runtime();
    let calibrated = folder.prompt_file();
    let source = match &r.prompt {
        Some(p) => PromptSource::File(p),
        None => {
            let mut launch = sides[0].launch.clone();
            (launch.log_file, launch.console_file) = folder.calibration_logs();
            PromptSource::Calibrate {
                tokens: r.prompt_tokens,
                launch: Box::new(launch),
                health_timeout: r.health_timeout,
                stall: r.stall_timeout,
            }
        }
    };
    let prompt_file = Some(r.prompt.clone().unwrap_or_else(|| calibrated.clone()));
    let who = sides[0].label.clone();
    let prompt = block_on_until_signal(&rt, prompt_or_calibrate(source, &calibrated, &who))?;
    let plan = ExactnessPlan {
        prompt: prompt.text,
        prompt_file,
        expected_prompt_tokens: prompt.tokens,
        max_tokens: r.tokens,
        ignore_eos: r.ignore_eos,
        health_timeout: r.health_timeout,
        stall_timeout: r.stall_timeout,
        folder: folder.clone(),
        class: r.class,
    };
    let report = block_on_until_signal(&rt, async { Ok(run_exactness(&sides[0], &sides[1], &plan).await?) })?;
    let file = folder.report_file();
    emit(&SavedExactness { report: &report, file: &file }, how.format);
    let facts = exactness_facts(&r.variants, &r.models, &r.common)?;
    folder.write_facts(&facts)?;
    let in_record = record(history.as_mut(), root, how.format, || {
        Ok(crate::history::StudyRecord::of_exactness(root, &report, Some(&facts)))
    });
    if let Some(sig) = in_record {
        eprintln!("abprof: interrupted by signal {sig}{}", super::epilogue::AFTER_SIGNAL_IN_RECORD);
        return Ok(128 + sig);
    }
    Ok(report.gate.exit_status())
}

fn launch(v: &Variant, model: &Path, common: &[String], logs: (PathBuf, PathBuf)) -> Result<LaunchSpec> {
    // A port of its own per server: the previous one's socket may linger.
    let port = free_port("127.0.0.1").context("no free loopback port")?;
    Ok(LaunchSpec::for_variant(v, model, common, port, logs))
}

/// What the two sides ran on (binary and model hashed, `--version`), for the evidence and the
/// results history.
fn exactness_facts(variants: &[Variant], models: &[PathBuf], common: &[String]) -> Result<ExactnessFacts> {
    let mut facts = Vec::new();
    for (v, m) in variants.iter().zip(models) {
        facts.push(
            crate::study::facts::variant_facts(v, m, common)
                .with_context(|| format!("variant {}: hashing its files", v.label))?,
        );
    }
    Ok(ExactnessFacts { variants: facts, host: crate::study::facts::host_facts(None) })
}
