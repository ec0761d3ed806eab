//! The A/B configuration of the study loop: every sample is one streamed chat request of the
//! study's calibrated prompt (docs/methodology.md §3, §4), or a workload's own prompts: the MTP
//! yardstick's nine (§4.1), SPEED-Bench's eleven (§4.3).
use super::drive::{StudyConfig, StudyContext};
use super::evidence::Evidence;
use super::file::{LoadShape, StudyFile};
use super::judge::Judge;
use crate::client::calibrate::sidecar_path;
use crate::client::ChatRequest;
use crate::measure::calibrate::{prompt_or_calibrate, PromptSource};
use crate::measure::{soak, ChatLoad, SequenceKind};
use crate::schedule::Slot;
use crate::server::LaunchSpec;
use anyhow::Result;
use std::time::Duration;

/// The prompt every sample sends, fixed once per run.
#[derive(Default)]
pub(crate) struct ChatStudy {
    prompt: String,
    expected_prompt_tokens: Option<u64>,
    judge: Option<Judge>,
}

/// The study's prompt: the copy in the evidence folder, else the study file's prompt file, else
/// one calibrated once on the baseline (and kept, so a resume sends the same text).
async fn prompt_for(ctx: &StudyContext<'_>) -> Result<(String, Option<u64>)> {
    let (ev, file): (&Evidence, &StudyFile) = (ctx.evidence, ctx.file);
    let dst = ev.prompt();
    if dst.is_file() {
        let text = std::fs::read_to_string(&dst)?;
        return Ok((text, ev.expected_prompt_tokens(file)));
    }
    let base = &ctx.variants[0];
    let source = match (&file.prompt, file.prompt_tokens) {
        (Some(src), _) => PromptSource::File(src),
        (None, Some(tokens)) => PromptSource::Calibrate {
            tokens,
            launch: Box::new(LaunchSpec::for_variant(
                base,
                &file.model,
                ctx.common_args,
                ctx.port.ensure_free()?,
                ev.calibration_logs(),
            )),
            health_timeout: Duration::from_secs(file.health_timeout_s),
            stall: Duration::from_secs(file.stall_timeout_s),
        },
        (None, None) => unreachable!("StudyFile::check: a chat study has a prompt or prompt_tokens"),
    };
    let prompt = prompt_or_calibrate(source, &dst, &format!("the baseline {}", base.label)).await?;
    if let Some(src) = &file.prompt {
        // The calibration record first, so a resume never reads a prompt without its count.
        if sidecar_path(src).is_file() {
            std::fs::copy(sidecar_path(src), sidecar_path(&dst))?;
        }
        crate::atomic_file::write_atomic(&dst, prompt.text.as_bytes())?;
        return Ok((prompt.text, ev.expected_prompt_tokens(file)));
    }
    Ok((prompt.text, prompt.tokens))
}

impl ChatStudy {
    /// An A/B study that asks `judge` for more blocks once its planned samples are taken, and
    /// whether each sample is accepted.
    pub(crate) fn judged_by(judge: Option<Judge>) -> ChatStudy {
        ChatStudy { judge, ..ChatStudy::default() }
    }

    pub(crate) fn request(&self, file: &StudyFile) -> ChatRequest {
        request_of(&self.prompt, file)
    }
}

/// The benchmark request of `prompt` with the study's length and flags.
fn request_of(prompt: &str, file: &StudyFile) -> ChatRequest {
    let mut request = ChatRequest::benchmark(prompt, file.tokens);
    request.ignore_eos = file.ignore_eos.then_some(true);
    request.cache_prompt = file.pure_decode;
    request
}

/// A workload's own requests in their fixed order: the MTP yardstick's nine (§4.1: the PR
/// script's seed 42), SPEED-Bench's eleven (§4.3), at temperature 0 (greedy) as every abprof
/// request.
fn own_requests(prompts: &[(&str, &str)], file: &StudyFile) -> Vec<(String, ChatRequest)> {
    prompts.iter().map(|(name, text)| (name.to_string(), request_of(text, file))).collect()
}

impl StudyConfig for ChatStudy {
    type Load = ChatLoad;

    async fn prepare(&mut self, ctx: &StudyContext<'_>) -> Result<()> {
        if ctx.file.workload.and_then(|w| w.own_prompts()).is_none() {
            (self.prompt, self.expected_prompt_tokens) = prompt_for(ctx).await?;
        }
        Ok(())
    }

    fn expected_prompt_tokens(&self) -> Option<u64> {
        self.expected_prompt_tokens
    }

    fn judge(&self) -> Option<&Judge> {
        self.judge.as_ref()
    }

    fn load(&self, ctx: &StudyContext<'_>, _slot: &Slot) -> Result<ChatLoad> {
        let stall = Duration::from_secs(ctx.file.stall_timeout_s);
        Ok(match ctx.file.load_shape() {
            LoadShape::MtpYardstick => ChatLoad::sequence(
                SequenceKind::MtpYardstick,
                own_requests(&crate::measure::mtp_yardstick::PROMPTS, ctx.file),
                stall,
            ),
            LoadShape::SpeedBench => ChatLoad::sequence(
                SequenceKind::SpeedBench,
                own_requests(&crate::measure::speed_bench::PROMPTS, ctx.file),
                stall,
            ),
            LoadShape::Soak => {
                let requests = (0..ctx.file.timing_blocks()).map(|i| (soak::request_name(i), self.request(ctx.file)));
                ChatLoad::sequence(SequenceKind::Soak, requests.collect(), stall)
            }
            LoadShape::OneRequest => ChatLoad::new(self.request(ctx.file), ctx.file.pure_decode, stall),
        })
    }
}
