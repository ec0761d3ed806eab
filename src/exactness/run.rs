//! Both sides, one after the other, each on a cold server of its own: the same deterministic
//! request, every generated token and its top-k captured, then compared.
use super::compare::compare;
use super::error::{ExactnessError, LogprobsError};
use super::report::{ExactnessReport, RequestReport, SideReport};
use super::tokens::{captured_tokens, CapturedToken};
use super::yardstick::VariantClass;
use crate::client::ChatRequest;
use crate::measure::{run_sample, ChatLoad, NoObserver, Sample, SampleSpec};
use crate::server::LaunchSpec;
use crate::study::run_folders::ExactnessFolder;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Top-k alternatives asked for at every position (top-5: docs/methodology.md §12).
pub(crate) const TOP_K: u32 = 5;

/// One variant, ready to launch.
#[derive(Debug, Clone)]
pub(crate) struct ExactnessSide {
    pub(crate) label: String,
    /// The `--variant` spec as written, for the report.
    pub(crate) spec: String,
    pub(crate) launch: LaunchSpec,
    /// The variant's `expect=`: a gate passed by a feature that never engaged proves nothing.
    pub(crate) expect: Option<regex::Regex>,
}

/// What both sides are asked, and where the evidence goes.
#[derive(Debug, Clone)]
pub(crate) struct ExactnessPlan {
    pub(crate) prompt: String,
    pub(crate) prompt_file: Option<PathBuf>,
    pub(crate) expected_prompt_tokens: Option<u64>,
    pub(crate) max_tokens: u32,
    pub(crate) ignore_eos: bool,
    pub(crate) health_timeout: Duration,
    pub(crate) stall_timeout: Duration,
    /// The evidence folder: the report, and each side's files.
    pub(crate) folder: ExactnessFolder,
    /// What the candidate changed, which sets the yardstick's thresholds.
    pub(crate) class: VariantClass,
}

impl ExactnessPlan {
    /// temperature 0, seed 42, no prompt cache (docs/methodology.md §12), plus top-k logprobs.
    pub(crate) fn request(&self) -> ChatRequest {
        let mut r = ChatRequest::benchmark(&self.prompt, self.max_tokens);
        r.logprobs = Some(true);
        r.top_logprobs = Some(TOP_K);
        r.ignore_eos = self.ignore_eos.then_some(true);
        r
    }
}

struct Captured {
    sample: Sample,
    tokens: Vec<CapturedToken>,
    dir: PathBuf,
}

fn write_json(path: &Path, value: &impl serde::Serialize) -> Result<(), ExactnessError> {
    crate::atomic_file::write_json(path, value).map_err(|e| ExactnessError::Write { path: path.into(), source: e })
}

async fn capture(side: &ExactnessSide, plan: &ExactnessPlan) -> Result<Captured, ExactnessError> {
    let dir = plan.folder.side_dir(&side.label);
    let spec = SampleSpec {
        expected_prompt_tokens: plan.expected_prompt_tokens,
        expect: side.expect.clone(),
        ..SampleSpec::new(side.launch.clone(), plan.health_timeout)
    };
    let mut tap = ChatLoad::new(plan.request(), false, plan.stall_timeout);
    let sample = run_sample(&spec, &plan.folder.side(&side.label).files(), &mut tap, &mut NoObserver)
        .await
        .map_err(|e| ExactnessError::Start { label: side.label.clone(), source: e })?;
    if let Some(message) = &sample.error {
        // The client rejects a malformed logprobs entry mid-stream; say so rather than blame the server.
        if let Some(i) = message.find("malformed ") {
            return Err(ExactnessError::Request {
                label: side.label.clone(),
                message: format!("malformed or missing logprobs: {}", &message[i..]),
                dir,
            });
        }
        return Err(ExactnessError::Request { label: side.label.clone(), message: message.clone(), dir });
    }
    if let Some(e) = sample.extra.expect.as_ref().filter(|e| !e.matched) {
        return Err(ExactnessError::Expect { label: side.label.clone(), regex: e.regex.clone(), dir });
    }
    let tokens =
        captured_tokens(&tap.logprobs, sample.completion_tokens(), sample.finish_reason.as_deref(), TOP_K as usize)
            .map_err(|e: LogprobsError| ExactnessError::Logprobs {
                label: side.label.clone(),
                dir: dir.clone(),
                source: e,
            })?;
    write_json(&plan.folder.tokens_file(&side.label), &tokens)?;
    if let (Some(got), Some(want)) = (sample.prompt_tokens(), plan.expected_prompt_tokens) {
        if got != want {
            return Err(ExactnessError::PromptLength { label: side.label.clone(), got, want });
        }
    }
    Ok(Captured { sample, tokens, dir })
}

fn side_report(side: &ExactnessSide, c: &Captured) -> SideReport {
    SideReport {
        label: side.label.clone(),
        spec: side.spec.clone(),
        binary: side.launch.program.clone(),
        // The study's cached hash: the same binary is hashed once per host, not per run.
        binary_sha256: crate::study::facts::file_sha256(&side.launch.program).ok().map(|f| f.sha256),
        argv: side.launch.argv(),
        env: side.launch.env.clone(),
        prompt_tokens: c.sample.prompt_tokens(),
        completion_tokens: c.sample.completion_tokens(),
        finish_reason: c.sample.finish_reason.clone(),
        system_fingerprint: c.sample.system_fingerprint.clone(),
        evidence: c.dir.clone(),
    }
}

/// Runs baseline then candidate, compares them and writes `ROOT/exactness.json`.
pub(crate) async fn run_exactness(
    baseline: &ExactnessSide,
    candidate: &ExactnessSide,
    plan: &ExactnessPlan,
) -> Result<ExactnessReport, ExactnessError> {
    let a = capture(baseline, plan).await?;
    let b = capture(candidate, plan).await?;
    if let (Some(pa), Some(pb)) = (a.sample.prompt_tokens(), b.sample.prompt_tokens()) {
        if pa != pb {
            return Err(ExactnessError::PromptMismatch {
                a_label: baseline.label.clone(),
                a: pa,
                b_label: candidate.label.clone(),
                b: pb,
            });
        }
    }
    let comparison =
        compare(&a.tokens, &b.tokens, a.sample.finish_reason.as_deref(), b.sample.finish_reason.as_deref(), plan.class);
    let req = plan.request();
    let request = RequestReport {
        prompt_file: plan.prompt_file.clone(),
        prompt_sha256: hex::encode(Sha256::digest(plan.prompt.as_bytes())),
        prompt_tokens: plan.expected_prompt_tokens.or(a.sample.prompt_tokens()),
        max_tokens: req.max_tokens,
        temperature: req.temperature,
        seed: req.seed,
        cache_prompt: req.cache_prompt,
        ignore_eos: plan.ignore_eos,
        top_logprobs: TOP_K,
    };
    let report = ExactnessReport::new(side_report(baseline, &a), side_report(candidate, &b), request, comparison);
    report.save(&plan.folder)?;
    Ok(report)
}
