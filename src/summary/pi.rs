//! The Pi study's report (`pi.json`): every sample with its verdict from the one rulebook, and
//! per-variant medians over the valid ones (a failed sample's speed proves nothing).
use super::rules::{sample_rejections, Expectations};
use crate::measure::{PiRun, Sample, ServerTiming};
use crate::server::log::DraftAcceptance;
use crate::study::evidence::{Evidence, Plan};
use crate::study::file::StudyKind;
use crate::study::sample_folder::SampleFolder;
use crate::study::StudyFacts;
use crate::telemetry::record::{IdleGateRecord, TelemetryRecord};
use anyhow::Context;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// One Pi sample as the report shows it: the Pi run's own record, where it ran, and the rulebook's
/// verdict.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct PiSample {
    pub(crate) index: usize,
    pub(crate) label: String,
    /// The how-many-th sample of this variant (0-based).
    pub(crate) repeat: usize,
    pub(crate) evidence: PathBuf,
    #[serde(flatten)]
    pub(crate) run: PiRun,
    pub(crate) startup_ms: Option<f64>,
    pub(crate) timing_blocks: usize,
    pub(crate) server: Option<ServerTiming>,
    pub(crate) draft: Option<DraftAcceptance>,
    /// No rule broken: one request, no tool call, pi exited 0, the Python passed.
    pub(crate) valid: bool,
    pub(crate) failures: Vec<String>,
    pub(crate) server_argv: Vec<String>,
    /// What the idle gate saw before pi started.
    pub(crate) idle_gate: Option<IdleGateRecord>,
    /// The telemetry series over the pi run (GPU, or the server's CPU on GPU-less hosts).
    pub(crate) telemetry: Option<TelemetryRecord>,
}

impl PiSample {
    pub(crate) fn output_tokens(&self) -> Option<u64> {
        self.server.as_ref().map(|s| s.decode_tokens).or(self.run.pi_output_tokens)
    }
}

/// Medians over a variant's valid samples.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct PiVariantSummary {
    pub(crate) label: String,
    pub(crate) spec: String,
    pub(crate) samples: usize,
    pub(crate) valid: usize,
    pub(crate) median_pi_wall_ms: Option<f64>,
    pub(crate) median_prefill_ms: Option<f64>,
    pub(crate) median_prefill_tps: Option<f64>,
    pub(crate) median_decode_ms: Option<f64>,
    pub(crate) median_decode_tps: Option<f64>,
    pub(crate) median_output_tokens: Option<f64>,
    pub(crate) median_acceptance: Option<f64>,
    /// Server prompt token counts seen (one value when the Pi prompt was identical every time).
    pub(crate) prompt_tokens: Vec<u64>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct PiReport {
    pub(crate) created: String,
    pub(crate) mode: String,
    pub(crate) prompt: String,
    pub(crate) pi_bin: PathBuf,
    pub(crate) pi_version: Option<String>,
    pub(crate) max_tokens: u32,
    pub(crate) context_window: u32,
    /// The run order, as labels.
    pub(crate) order: Vec<String>,
    pub(crate) samples: Vec<PiSample>,
    pub(crate) variants: Vec<PiVariantSummary>,
    /// Study-level problems (prompt token counts that differ across samples, …).
    pub(crate) warnings: Vec<String>,
    /// The telemetry source the idle gate and series used, and why it was chosen.
    pub(crate) telemetry: String,
    /// The restore and verify hooks ran and succeeded (true when none were declared); `None`
    /// while the study runs.
    pub(crate) restored: Option<bool>,
    /// The signal that stopped the study (2 SIGINT, 15 SIGTERM); its sample in flight was discarded.
    pub(crate) interrupted_by: Option<i32>,
}

/// The one type a Pi study's `pi.json` holds.
impl crate::study::documents::PiReportDoc for PiReport {}

/// The rulebook's expectations of a Pi sample: one request per log; no prompt length or output
/// length is fixed (Pi writes its own prompt), and Pi's own node process is "other load".
fn expectations(restored: Option<bool>) -> Expectations {
    Expectations {
        prompt_tokens: None,
        locked_length: false,
        timing_blocks: 1,
        foreign_cpu_max_pct: None,
        isolation_restored: restored,
        power_state: None,
    }
}

/// One recorded Pi sample as the report shows it, judged by the rulebook; `None` for a sample
/// whose pi never ran (its server failed first: the order log says why).
/// `restored`: the study's restore outcome, `None` while it runs.
pub(crate) fn pi_sample(
    ev: &Evidence,
    plan: &Plan,
    slot: &crate::schedule::Slot,
    s: &Sample,
    restored: Option<bool>,
) -> Option<PiSample> {
    let run = s.extra.pi.clone()?;
    let reasons = sample_rejections(s, &expectations(restored));
    Some(PiSample {
        index: slot.index,
        label: plan.labels[slot.variant].clone(),
        repeat: slot.repeat,
        evidence: ev.sample_dir(plan, slot),
        run,
        startup_ms: s.startup_ms,
        timing_blocks: s.timing_blocks,
        server: s.server.clone(),
        draft: s.draft.clone(),
        valid: reasons.is_empty(),
        failures: reasons.into_iter().map(|r| r.reason).collect(),
        server_argv: s.server_argv.clone(),
        idle_gate: s.extra.idle_gate.clone(),
        telemetry: s.extra.telemetry.clone(),
    })
}

fn summarize_variant(label: &str, spec: &str, samples: &[PiSample]) -> PiVariantSummary {
    let mine: Vec<&PiSample> = samples.iter().filter(|s| s.label == label).collect();
    let valid: Vec<&PiSample> = mine.iter().copied().filter(|s| s.valid).collect();
    let of = |f: &dyn Fn(&PiSample) -> Option<f64>| {
        crate::stats::median(&valid.iter().filter_map(|s| f(s)).collect::<Vec<_>>())
    };
    let mut prompt_tokens: Vec<u64> = mine.iter().filter_map(|s| s.server.as_ref().map(|t| t.prompt_tokens)).collect();
    prompt_tokens.sort_unstable();
    prompt_tokens.dedup();
    PiVariantSummary {
        label: label.into(),
        spec: spec.into(),
        samples: mine.len(),
        valid: valid.len(),
        median_pi_wall_ms: of(&|s| Some(s.run.pi_wall_ms)),
        median_prefill_ms: of(&|s| s.server.as_ref().map(|t| t.prefill_ms)),
        median_prefill_tps: of(&|s| s.server.as_ref().map(|t| t.prefill_tps)),
        median_decode_ms: of(&|s| s.server.as_ref().map(|t| t.decode_ms)),
        median_decode_tps: of(&|s| s.server.as_ref().map(|t| t.decode_tps)),
        median_output_tokens: of(&|s| s.output_tokens().map(|n| n as f64)),
        median_acceptance: of(&|s| s.draft.as_ref().map(|d| d.rate)),
        prompt_tokens,
    }
}

fn warnings(summaries: &[PiVariantSummary]) -> Vec<String> {
    let mut all: Vec<u64> = summaries.iter().flat_map(|s| s.prompt_tokens.iter().copied()).collect();
    all.sort_unstable();
    all.dedup();
    let mut w = Vec::new();
    if all.len() > 1 {
        w.push(format!(
            "server prompt token counts differ across samples ({}): the Pi prompts were not identical, so prefill does not compare",
            all.iter().map(u64::to_string).collect::<Vec<_>>().join(", ")
        ));
    }
    for s in summaries.iter().filter(|s| s.valid == 0) {
        w.push(format!("variant {}: no valid sample, so no medians", s.label));
    }
    w
}

/// What the report says beyond the samples: the tool's version and the run's end state.
pub(crate) struct PiRunFacts {
    pub(crate) pi_version: Option<String>,
    pub(crate) restored: Option<bool>,
    pub(crate) interrupted_by: Option<i32>,
}

/// Builds the report of the Pi study in `ev` from its evidence alone (so a resumed study reports
/// every sample it ever finished).
pub(crate) fn pi_report(ev: &Evidence, study: &StudyFacts, facts: PiRunFacts) -> anyhow::Result<PiReport> {
    let (file, plan) = (&study.file, &study.plan);
    let StudyKind::Pi(pi) = &file.kind else {
        anyhow::bail!(
            "{} is {}, not a Pi study: `abprof {} --resume` continues it",
            ev.root.display(),
            file.kind.name().a_study(),
            file.kind.name().command()
        )
    };
    let restored = facts.restored.or_else(|| ev.read_isolation().ok()?.restored);
    let mut samples = Vec::new();
    for f in ev.samples(plan) {
        if let Some(p) = f.sample.as_ref().and_then(|s| pi_sample(ev, plan, &f.slot, s, restored)) {
            samples.push(p);
        }
    }
    samples.sort_by_key(|s| s.index);
    let variants: Vec<PiVariantSummary> = plan
        .labels
        .iter()
        .enumerate()
        .map(|(i, l)| summarize_variant(l, file.variants.get(i).map_or("", |s| s.as_str()), &samples))
        .collect();
    Ok(PiReport {
        created: chrono::Local::now().to_rfc3339(),
        mode: pi.mode.clone(),
        prompt: pi.prompt.clone(),
        pi_bin: pi.pi_bin.clone(),
        pi_version: facts.pi_version,
        max_tokens: pi.max_tokens,
        context_window: pi.context_window,
        order: plan.slots.iter().map(|s| plan.labels[s.variant].clone()).collect(),
        warnings: warnings(&variants),
        samples,
        variants,
        telemetry: study.host.as_ref().and_then(|h| h.telemetry.clone()).unwrap_or_default(),
        restored: facts.restored,
        interrupted_by: facts.interrupted_by,
    })
}

/// Writes `pi.json` atomically.
pub(crate) fn save_pi_report(ev: &Evidence, report: &PiReport) -> anyhow::Result<()> {
    ev.write_pi_report(report)?;
    Ok(())
}

/// Writes the sample's report view beside its evidence (`pi-sample.json`).
pub(crate) fn save_pi_sample(sample: &PiSample) -> anyhow::Result<()> {
    let path = SampleFolder::at(&sample.evidence).pi_view();
    crate::atomic_file::write_json(&path, sample).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}
