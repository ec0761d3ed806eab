//! Small conversions from parsed arguments to what lower floors take (the flags themselves are
//! in `args/`).
use crate::refusal::refuse;
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

pub(crate) fn check_model(model: &Path) -> Result<()> {
    if !model.is_file() {
        refuse!(
            "model {} does not exist: pass a GGUF file (scripts/testbed prints TARGET_MODEL and SMOLLM2_MODEL)",
            model.display()
        );
    }
    Ok(())
}

pub(crate) fn port_or_free(port: Option<u16>) -> Result<u16> {
    match port {
        Some(p) => Ok(p),
        None => crate::server::free_port("127.0.0.1").context("no free loopback port"),
    }
}

/// A fresh folder name under the system temp dir, for evidence the user did not place.
pub(crate) fn default_evidence(kind: &str) -> PathBuf {
    let ts = chrono::Local::now().format("%Y%m%d-%H%M%S");
    std::env::temp_dir().join(format!("abprof-{kind}-{ts}-{}", std::process::id()))
}

/// The study-file fields every study-running command (ab, pi, trace) fills the same way from its
/// shared flag groups; each command sets the rest (a trace or Pi study its kind and section).
pub(crate) fn study_file(
    v: &super::args::VariantArgs,
    c: &super::conditions::RunConditions,
    model: PathBuf,
    tokens: u32,
    samples: u32,
) -> crate::study::file::StudyFile {
    crate::study::file::StudyFile {
        server_args: v.launch.server_args.clone(),
        port: v.port,
        server_cpus: v.server_cpus.clone(),
        health_timeout_s: v.launch.health_timeout,
        stall_timeout_s: v.launch.stall_timeout,
        telemetry: c.telemetry(),
        telemetry_hz: c.telemetry_hz,
        idle: c.idle(),
        isolation: c.isolation(),
        ..crate::study::file::StudyFile::new(model, tokens, samples, v.variants.clone())
    }
}

/// The study file of a chat A/B (ab, bisect) from its flag groups; the variants are the caller's.
pub(crate) fn chat_study_file(
    v: &super::args::VariantArgs,
    w: &super::args::WorkloadArgs,
    p: &super::args::PromptArgs,
    c: &super::conditions::RunConditions,
    model: PathBuf,
    tokens: u32,
) -> crate::study::file::StudyFile {
    crate::study::file::StudyFile {
        workload: w.workload,
        soak_requests: w.soak_requests,
        prompt: p.prompt.clone(),
        prompt_tokens: p.prompt_tokens,
        ignore_eos: w.ignore_eos,
        pure_decode: w.pure_decode,
        order_seed: w.order_seed,
        ..study_file(v, c, model, tokens, w.samples)
    }
}
