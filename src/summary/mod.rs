//! Medians, confidence intervals and verdicts (docs/methodology.md §8); the rejection rules (§7). A
//! `Summary` is built from an evidence folder alone, so it can be rebuilt at any time, also from an
//! interrupted study.
pub(crate) mod adaptive;
pub(crate) mod answer;
pub(crate) mod bench;
mod boundary_table;
pub(crate) mod capture;
pub(crate) mod covariate;
pub(crate) mod devices;
#[cfg(test)]
mod energy_tests;
pub(crate) mod fingerprint;
pub(crate) mod floor;
pub(crate) mod folder_traces;
pub(crate) mod gate;
pub(crate) mod llama_bench;
pub(crate) mod memory;
mod metric;
pub(crate) mod mtp_yardstick;
pub(crate) mod noise;
pub(crate) mod phases;
pub(crate) mod pi;
pub(crate) mod retake;
pub(crate) mod rules;
pub(crate) mod sequential;
#[cfg(test)]
pub(crate) mod simulate;
pub(crate) mod soak;
pub(crate) mod speed_bench;
pub(crate) mod stats;
pub(crate) mod study_judge;
pub(crate) mod sweep;
mod t_test;
pub(crate) mod traces;
pub(crate) mod view;
pub(crate) mod windows;

use crate::measure::Sample;
use crate::study::evidence::{Evidence, OrderEntry};
use crate::study::file::StudyFile;
use crate::study::isolation::IsolationRecord;
use crate::study::StudyFacts;
use rules::{prompt_tokens_differ, sample_rejections, Expectations, Rejection};
use serde::{Deserialize, Serialize};
use stats::{mean, median, pct_change, ChangeCi, Measured, Verdict};

pub(crate) use metric::{Metric, MetricInput};

/// Draft acceptance rates further apart than this (absolute) make decode TPS no proof of a kernel
/// change (docs/methodology.md §7 "acceptance caveat").
pub(crate) const ACCEPTANCE_MATERIAL: f64 = 0.05;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct MetricSummary {
    pub(crate) metric: Metric,
    pub(crate) runs: Vec<f64>,
    /// The interleaved block of each of `runs` (its repeat in the plan): which baseline value a
    /// candidate's pairs with (a bisect pools the pairs' spread, docs/methodology.md §19). Kept in
    /// memory only: the bisect reads the summary it has just computed, and summary.json's bytes
    /// stay those every reader knows (tests/golden.rs); plan.json holds the blocks.
    #[serde(skip)]
    pub(crate) blocks: Vec<usize>,
    pub(crate) mean: Option<f64>,
    pub(crate) median: Option<f64>,
    /// The accepted values' coefficient of variation, % (docs/methodology.md §8).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) cv_pct: Option<f64>,
    /// `cv_pct` is above [`noise::HIGH_CV_PCT`]: flagged beside the metric in every report
    /// (docs/methodology.md §8 "Per-sample noise").
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) high_cv: bool,
    /// The change vs the baseline, %: the estimate the interval is built on (the paired mean
    /// log ratio, else the difference of the two sides' mean logs; docs/methodology.md §8), the
    /// centre of `ci` on the log scale. None for the baseline.
    pub(crate) change_pct: Option<f64>,
    /// `100*(median/baseline median - 1)`: the ratio of medians, a secondary figure (§8) that
    /// no verdict uses. None for the baseline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) median_change_pct: Option<f64>,
    pub(crate) ci: Option<ChangeCi>,
    pub(crate) verdict: Option<Verdict>,
    /// What this metric measured when it is not what its name says (pure decode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) measures: Option<String>,
    /// An energy metric's source over the accepted samples: "energy counter", "power integral"
    /// (and which power), or both where samples differ (docs/methodology.md §9.6).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) energy_from: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct VariantSummary {
    pub(crate) label: String,
    pub(crate) spec: String,
    pub(crate) planned: usize,
    pub(crate) accepted: usize,
    pub(crate) metrics: Vec<MetricSummary>,
    /// 1000 / median server decode TPS, the figure a trace comparison scales by.
    pub(crate) ms_per_token: Option<f64>,
    pub(crate) decode_tps_n_minus_1_median: Option<f64>,
    pub(crate) acceptance: Vec<f64>,
    pub(crate) acceptance_median: Option<f64>,
    /// The 95% t-interval of the mean acceptance rate over the accepted samples (3 or more that
    /// drafted), clipped to [0, 1] (docs/methodology.md §7.11).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) acceptance_ci: Option<[f64; 2]>,
    /// Median of the samples' mean acceptance length (1 + accepted per verification step), as the
    /// server prints it: the tokens one decode step yields.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) mean_acceptance_length_median: Option<f64>,
    /// Per draft position, the median over the samples whose log printed per-position rates
    /// (`acc per pos`, at `-lv 4` on the pinned build).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) acceptance_per_position_median: Option<Vec<f64>>,
    /// The server's buffers (model, KV, recurrent, compute, the MTP or draft context), medians
    /// over the samples whose log sized them (docs/methodology.md §7.11 "memory").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) memory: Option<memory::MemoryFigures>,
    /// The MTP yardstick's aggregate block (docs/methodology.md §4.1); none for other workloads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) mtp_yardstick: Option<mtp_yardstick::MtpYardstickFigures>,
    /// The soak's rate per request and its drift (docs/methodology.md §4.2); none for other
    /// workloads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) soak: Option<soak::SoakFigures>,
    /// SPEED-Bench's figures per category, and a candidate's speedups and intervals per category
    /// (docs/methodology.md §4.3); none for other workloads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) speed_bench: Option<speed_bench::SpeedBenchFigures>,
    /// A llama-bench study's build and model as llama-bench printed them (docs/methodology.md
    /// §4.4); none for a server study.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) llama_bench: Option<llama_bench::LlamaBenchBuild>,
    pub(crate) output_tokens: Vec<u64>,
    pub(crate) prompt_tokens: Vec<u64>,
    pub(crate) idle_gate_ms_median: Option<f64>,
    /// Telemetry per phase (GPU, or the server's CPU on GPU-less hosts).
    pub(crate) prefill: Option<phases::PhaseFigures>,
    pub(crate) decode: Option<phases::PhaseFigures>,
    /// Accepted samples (1-based study index) throttled during decode (docs/methodology.md §9.5).
    pub(crate) throttled: Vec<usize>,
    /// The same samples with what throttled each: the firmware's limits where the source counts
    /// their residency ("fast PPT"), else "gfx clock" (a sag > 10% below the study's median).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) throttled_by: Vec<(usize, Vec<String>)>,
    /// Each accepted sample's decode rate per 32-token window, its sag and throttle signals
    /// (docs/methodology.md §9.8); samples of fewer than 33 tokens have none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) decode_windows: Vec<windows::SampleWindows>,
    /// Comparison caveats, e.g. acceptance differing materially from the baseline's.
    pub(crate) caveats: Vec<String>,
    /// A server on several GPUs (docs/methodology.md §9.11): each device's phase figures, whose
    /// sum `prefill` and `decode` are; empty for one device.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) devices: Vec<devices::DeviceFigures>,
    /// Decode against its bandwidth floor (docs/methodology.md §18); none for a study recorded
    /// before the roofline (no roofline.json).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) floor: Option<floor::DecodeFloor>,
}

impl VariantSummary {
    pub(crate) fn metric(&self, m: Metric) -> Option<&MetricSummary> {
        self.metrics.iter().find(|x| x.metric == m)
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct RejectedSample {
    pub(crate) index: usize,
    pub(crate) label: String,
    pub(crate) dir: String,
    pub(crate) reasons: Vec<Rejection>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Summary {
    pub(crate) root: String,
    pub(crate) name: Option<String>,
    pub(crate) tokens: u32,
    /// A llama-bench study's arguments (`[llama_bench] args`, docs/methodology.md §4.4); none
    /// for a server study.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) llama_bench_args: Option<String>,
    pub(crate) samples_per_variant: u32,
    pub(crate) pure_decode: bool,
    pub(crate) expected_prompt_tokens: Option<u64>,
    pub(crate) variants: Vec<VariantSummary>,
    pub(crate) rejected: Vec<RejectedSample>,
    /// Planned slots with no sample on disk yet (an interrupted study: `abprof ab --resume`).
    pub(crate) missing: usize,
    pub(crate) order: Vec<OrderEntry>,
    pub(crate) isolation_restored: Option<bool>,
    /// The telemetry source the study sampled (host.json).
    pub(crate) telemetry: Option<String>,
    /// Why the summary has no energy or power metric: no accepted sample's telemetry measured
    /// power or energy (docs/methodology.md §9.6); None where one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) energy_not_measured: Option<String>,
    /// The power state the study recorded when it started (host.json, docs/methodology.md §9.7),
    /// as one line; None for a study that recorded none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) power_state: Option<String>,
    /// The line naming `--backend-sampling` when a GPU study's decode samples spread well beyond a
    /// cold llama-bench's (docs/methodology.md §8 "The noise budget"); None otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) noise_hint: Option<String>,
    pub(crate) dead_time_ms_median: Option<f64>,
    pub(crate) dead_time_ms_max: Option<f64>,
    /// Kernel attribution beside the medians when the study has `traces/<label>/` folders
    /// (`abprof trace --root DIR/traces`): the comparison, or why not.
    pub(crate) traces: Option<traces::TraceComparison>,
    /// `exactness.json` of the study, when `abprof exactness --root` wrote one.
    pub(crate) exactness: Option<crate::exactness::ExactnessReport>,
    /// Whether start temperature (or the decode clock) explains decode TPS within the variants,
    /// and where it does the adjusted comparison (docs/methodology.md §9.10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) covariate: Option<covariate::CovariateFit>,
    /// An adaptive study (`until_ci_pct`): its samples per variant and why it stopped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) adaptive: Option<adaptive::Adaptive>,
    /// Blocks spoiled by a rule about the host and the blocks added to retake them (§7.19).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) retakes: Option<retake::Retakes>,
    /// The rule limits the study set to other than their defaults (docs/methodology.md §7.22);
    /// empty, and absent from summary.json, at the defaults.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) changed_limits: Vec<crate::study::file::limits::RuleLimit>,
    /// Each candidate's one-line answer (docs/methodology.md §8 "The answer").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) answer: Vec<answer::Answer>,
    /// The runtime libraries each variant's servers loaded (docs/methodology.md §2.2), from its
    /// first sample that recorded them; empty where no sample did.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) runtimes: Vec<VariantRuntime>,
}

impl Summary {
    /// The metrics this summary holds, in the order every table lists them: [`Metric::EVERY`]'s
    /// (an energy metric only where measured), or a llama-bench study's tests.
    pub(crate) fn metrics(&self) -> Vec<Metric> {
        let mut out: Vec<Metric> = Vec::new();
        for m in self.variants.iter().flat_map(|v| v.metrics.iter().map(|m| m.metric)) {
            if !out.contains(&m) {
                out.push(m);
            }
        }
        out
    }

    /// The metrics a study's answer, adaptive rule and gate judge: server decode (§8 "The
    /// answer"), or each test of a llama-bench study (§4.4).
    pub(crate) fn judged_metrics(&self) -> Vec<Metric> {
        let tests: Vec<Metric> = self
            .variants
            .first()
            .map(|v| v.metrics.iter().map(|m| m.metric).filter(|m| m.llama_bench_test().is_some()).collect())
            .unwrap_or_default();
        if tests.is_empty() {
            vec![adaptive::PRIMARY]
        } else {
            tests
        }
    }
}

/// A variant's runtime libraries, one line each (`HIP runtime libamdhip64.so.7.1.25424 (ROCm 7.1.0)`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct VariantRuntime {
    pub(crate) label: String,
    pub(crate) libraries: Vec<String>,
}

/// Each variant's runtime, as its first untraced sample (by run order) that recorded one loaded it.
fn variant_runtimes(
    found: &[crate::study::evidence::FoundSample],
    plan: &crate::study::evidence::Plan,
) -> Vec<VariantRuntime> {
    let labels = plan.labels.iter().enumerate();
    labels
        .filter_map(|(v, label)| {
            let first = first_runtime(found, plan, v)?;
            Some(VariantRuntime { label: label.clone(), libraries: first.lines() })
        })
        .collect()
}

/// The runtime variant `v`'s first untraced sample (by run order) recorded (§2.2): the reference
/// of `runtime-changed` (§7.26) and what the summary prints. A traced sample runs under a tracer
/// that maps libraries of its own, so it is never the reference.
fn first_runtime<'a>(
    found: &'a [crate::study::evidence::FoundSample],
    plan: &crate::study::evidence::Plan,
    v: usize,
) -> Option<&'a crate::runtime_libraries::LoadedRuntime> {
    found
        .iter()
        .filter(|f| f.slot.variant == v && !plan.is_traced(&f.slot))
        .filter_map(|f| Some((f.slot.index, f.sample.as_ref()?.extra.runtime.as_ref()?)))
        .min_by_key(|(index, _)| *index)
        .map(|(_, r)| r)
}

/// The one type a study's `summary.json` holds.
impl crate::study::documents::StudySummaryDoc for Summary {}

fn ms(v: Vec<f64>) -> (Option<f64>, Option<f64>) {
    (median(&v), v.iter().cloned().reduce(f64::max))
}

/// One sample the rulebook judged: accepted (no rejections) or rejected with its rules. The
/// summary's medians are the accepted ones; the results history keeps them all.
#[derive(Debug, Clone)]
pub(crate) struct JudgedSample {
    /// The study index (0-based) of its planned slot.
    pub(crate) index: usize,
    /// Its variant's position in the plan.
    pub(crate) variant: usize,
    /// Its folder, relative to the study's.
    pub(crate) dir: String,
    pub(crate) rejections: Vec<Rejection>,
    /// The record, when one was written and could be read.
    pub(crate) sample: Option<Sample>,
    /// Its metrics' values, from its record and telemetry series ([`Metric::values`]).
    pub(crate) values: Vec<(Metric, f64)>,
}

/// A study as the summary layer read it: the summary, every judged sample, and the study's
/// fingerprint, each read from the evidence folder once.
#[derive(Debug, Clone)]
pub(crate) struct Judged {
    pub(crate) summary: Summary,
    pub(crate) samples: Vec<JudgedSample>,
    pub(crate) facts: StudyFacts,
}

/// Each draft position's median rate over the samples that printed per-position rates.
fn per_position_medians(samples: &[&Sample]) -> Option<Vec<f64>> {
    let rows: Vec<&Vec<f64>> =
        samples.iter().filter_map(|s| s.draft.as_ref().and_then(|d| d.per_position.as_ref())).collect();
    let n = rows.iter().map(|r| r.len()).max().filter(|&n| n > 0)?;
    Some((0..n).filter_map(|i| median(&rows.iter().filter_map(|r| r.get(i).copied()).collect::<Vec<_>>())).collect())
}

/// The adaptive rule on a summary of the study `file` describes, with `blocks` planned
/// (docs/methodology.md §17).
fn adaptive_rule_of(file: &StudyFile, blocks: usize, s: &Summary) -> Option<adaptive::Adaptive> {
    let rule = file.adaptive_rule()?;
    let judged = s.judged_metrics();
    let candidates = s
        .variants
        .iter()
        .skip(1)
        .flat_map(|v| {
            judged.iter().map(move |&m| {
                let label = match m.llama_bench_test() {
                    Some(t) => format!("{} {}", v.label, t.name()),
                    None => v.label.clone(),
                };
                adaptive::CandidatePrecision::of(&label, v.metric(m).and_then(|x| x.ci.as_ref()), &rule)
            })
        })
        .collect();
    let judged = judged.iter().any(|m| m.llama_bench_test().is_some()).then(|| "test".to_string());
    Some(adaptive::Adaptive { judged, ..adaptive::judge(rule, blocks, candidates) })
}

/// What scales each variant's trace: its median ms/token and its samples' decode rates.
pub(crate) fn trace_scales(variants: &[VariantSummary]) -> Vec<traces::StudyScale<'_>> {
    variants
        .iter()
        .map(|v| traces::StudyScale {
            label: &v.label,
            ms_per_token: v.ms_per_token,
            decode_tps: v.metric(Metric::ServerDecodeTps).map_or(&[], |m| m.runs.as_slice()),
        })
        .collect()
}

/// Builds the summary of the study in `ev`.
pub(crate) fn summarize(ev: &Evidence) -> anyhow::Result<Summary> {
    Ok(judge(ev)?.summary)
}

/// Judges every sample of the study in `ev` and builds its summary, its traces compared with the
/// built-in rules; the study's facts (its study file among them) are read here, once.
pub(crate) fn judge(ev: &Evidence) -> anyhow::Result<Judged> {
    judge_with(ev, StudyFacts::load(ev)?, TraceReading::Builtin)
}

/// [`judge`] of an opened study folder, whose study file was read when it was opened.
pub(crate) fn judge_folder(folder: &crate::study::StudyFolder) -> anyhow::Result<Judged> {
    judge_with(&folder.evidence, folder.facts()?, TraceReading::Builtin)
}

/// How a summary reads the study's traces: a trace scan is the costly part of a summary, so a
/// caller that compares with rules of its own, or wants only the samples' verdicts (the adaptive
/// rule between blocks), skips it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TraceReading {
    Builtin,
    Skip,
}

/// What every sample of the study in `ev` is held to by the per-sample rules (rules.rs).
pub(crate) fn expectations(ev: &Evidence, facts: &StudyFacts) -> Expectations {
    let iso: Option<IsolationRecord> = ev.read_isolation().ok();
    Expectations {
        prompt_tokens: ev.expected_prompt_tokens(&facts.file),
        locked_length: true,
        timing_blocks: facts.file.timing_blocks(),
        foreign_cpu_max_pct: Some(facts.file.idle.foreign_cpu_max_pct),
        isolation_restored: iso.as_ref().and_then(|i| i.restored),
        power_state: facts.host.as_ref().and_then(|h| h.power.clone()),
    }
}

/// [`judge`] of the study in `ev` whose facts the caller read (`study.toml` is read once per
/// judgement, and passed down from there), reading the traces as `traces` says.
pub(crate) fn judge_with(ev: &Evidence, facts: StudyFacts, traces: TraceReading) -> anyhow::Result<Judged> {
    let (file, plan) = (&facts.file, &facts.plan);
    let exp = expectations(ev, &facts);
    let (expected, restored) = (exp.prompt_tokens, exp.isolation_restored);
    let found = ev.samples(plan);
    let rel = |p: &std::path::Path| p.strip_prefix(&ev.root).unwrap_or(p).display().to_string();
    let Acceptance { accepted, rejected, missing } = accept(&found, plan, &exp, &rel);
    let study = AcceptedSamples::read(&found, &accepted, file, plan.counted_blocks(), ev.read_roofline().ok());
    let judged = judged_samples(&study, &rejected, plan, &rel);
    let mut variants = Vec::new();
    let mut plain = Vec::new();
    let mut on_device = Vec::new();
    for (vi, label) in plan.labels.iter().enumerate() {
        let samples = study.samples(vi);
        plain.push(samples.iter().all(|s| crate::variant::speculation_requested(&s.server_argv).is_none()));
        on_device.push(!samples.is_empty() && samples.iter().all(|s| noise::samples_on_device(&s.server_argv)));
        variants.push(study.variant_summary(vi, label, plan));
    }
    acceptance_caveats(&mut variants, &plain);
    let order = ev.order();
    let (dead_med, dead_max) = ms(order
        .iter()
        .filter(|o| o.status == crate::study::evidence::AttemptStatus::Ok)
        .map(|o| o.timeline.dead_ms)
        .collect());
    let traces = match traces {
        TraceReading::Builtin => traces::compare_study_traces(
            ev,
            file,
            &trace_scales(&variants),
            file.tokens,
            &crate::trace::Rules::builtin(),
            traces::SUMMARY_TOP,
        ),
        TraceReading::Skip => None,
    };
    let telemetry = facts.host.as_ref().and_then(|h| h.telemetry.clone());
    let mut summary = Summary {
        root: ev.root.display().to_string(),
        name: file.name.clone(),
        tokens: file.tokens,
        llama_bench_args: file.llama_bench.as_ref().map(|b| b.args.clone()),
        samples_per_variant: file.samples,
        pure_decode: file.pure_decode,
        expected_prompt_tokens: expected,
        noise_hint: noise_hint(telemetry.as_deref(), &variants, &on_device, &found),
        variants,
        rejected,
        missing,
        order,
        isolation_restored: restored,
        energy_not_measured: (!study.metrics.iter().any(|m| m.is_energy()))
            .then(|| phases::not_measured_line(telemetry.as_deref())),
        telemetry: phases::telemetry_line(
            telemetry,
            found.iter().filter_map(|f| f.sample.as_ref()?.extra.telemetry.as_ref()).map(|t| t.torn_reads).sum(),
        ),
        power_state: facts.host.as_ref().and_then(|h| h.power.as_ref()).map(|p| p.line()),
        runtimes: variant_runtimes(&found, plan),
        dead_time_ms_median: dead_med,
        dead_time_ms_max: dead_max,
        traces,
        exactness: crate::exactness::ExactnessReport::read(&ev.exactness()).ok(),
        adaptive: None,
        retakes: None,
        changed_limits: Vec::new(),
        answer: Vec::new(),
        covariate: covariate_fit(
            &accepted,
            &|fi| study.input(fi),
            &|fi| found[fi].slot.repeat,
            &study.phases,
            &plan.labels,
        ),
    };
    summary.adaptive = adaptive_rule_of(file, plan.counted_blocks(), &summary);
    summary.retakes = retake::Retakes::of(file, plan, summary.rejected.iter().map(|r| (r.index, r.reasons.as_slice())));
    summary.changed_limits = file.changed_limits();
    let mut answers = Vec::new();
    for metric in summary.judged_metrics() {
        let primary: Option<Vec<answer::Primary>> = summary
            .variants
            .iter()
            .map(|v| {
                v.metric(metric).map(|m| answer::Primary {
                    label: &v.label,
                    metric,
                    accepted: m.runs.len(),
                    change_pct: m.change_pct,
                    ci: m.ci,
                    verdict: m.verdict,
                })
            })
            .collect();
        answers.extend(answer::answers(&primary.unwrap_or_default(), &summary.order, file.margin_pct()));
    }
    // Each candidate's lines together, its metrics in the study's order.
    let position = |label: &str| summary.variants.iter().position(|v| v.label == label);
    answers.sort_by_key(|a| position(&a.candidate));
    summary.answer = answers;
    Ok(Judged { summary, samples: judged, facts })
}

/// The noise hint (docs/methodology.md §8): decode's per-sample spread against the backend
/// sampler, never recommended where a sample showed it fell back to the CPU.
fn noise_hint(
    telemetry: Option<&str>,
    variants: &[VariantSummary],
    on_device: &[bool],
    found: &[crate::study::evidence::FoundSample],
) -> Option<String> {
    noise::backend_sampling_hint(
        telemetry,
        &variants
            .iter()
            .zip(on_device)
            .map(|(v, &backend_sampling)| noise::DecodeNoise {
                label: &v.label,
                cv_pct: v.metric(Metric::ServerDecodeTps).and_then(|m| crate::stats::cv_pct(&m.runs)),
                backend_sampling,
            })
            .collect::<Vec<_>>(),
        found
            .iter()
            .any(|f| f.sample.as_ref().and_then(|s| s.extra.backend_sampling.as_ref()).is_some_and(|p| !p.engaged)),
    )
}

/// Which samples count: per variant, indices into the found samples; the rejected with every
/// rule each broke; how many planned samples are not taken yet.
struct Acceptance {
    accepted: Vec<Vec<usize>>,
    rejected: Vec<RejectedSample>,
    missing: usize,
}

/// Judges every found sample by the rules (docs/methodology.md §7); traced samples are the
/// trace's evidence, never a median.
fn accept(
    found: &[crate::study::evidence::FoundSample],
    plan: &crate::study::evidence::Plan,
    exp: &Expectations,
    rel: &dyn Fn(&std::path::Path) -> String,
) -> Acceptance {
    let mut rejected = Vec::new();
    let mut accepted: Vec<Vec<usize>> = vec![Vec::new(); plan.labels.len()];
    let mut missing = 0;
    for (fi, f) in found.iter().enumerate() {
        // A traced sample is the trace's evidence; a tracer slows decode, so it is never a median.
        if plan.is_traced(&f.slot) {
            continue;
        }
        for (dir, s) in &f.earlier_attempts {
            let why = s
                .as_ref()
                .and_then(|s| s.error.clone())
                .unwrap_or_else(|| "interrupted before its record was written".into());
            rejected.push(RejectedSample {
                index: f.slot.index,
                label: f.label.clone(),
                dir: rel(dir),
                reasons: vec![Rejection { rule: rules::Rule::SupersededAttempt, reason: why }],
            });
        }
        let Some(s) = &f.sample else {
            match &f.corrupt {
                Some(why) => rejected.push(RejectedSample {
                    index: f.slot.index,
                    label: f.label.clone(),
                    dir: rel(&f.dir),
                    reasons: vec![rules::corrupt_record(why)],
                }),
                None => missing += 1,
            }
            continue;
        };
        let mut reasons = sample_rejections(s, exp);
        if let crate::study::seal::SealCheck::Changed(what) = f.seal() {
            reasons.insert(0, rules::evidence_changed(&what));
        }
        if reasons.is_empty() {
            accepted[f.slot.variant].push(fi);
        } else {
            rejected.push(RejectedSample { index: f.slot.index, label: f.label.clone(), dir: rel(&f.dir), reasons });
        }
    }
    // Every sample of a variant ran the runtime its first sample loaded (§7.26).
    for (v, list) in accepted.iter_mut().enumerate() {
        let Some(first) = first_runtime(found, plan, v) else { continue };
        list.retain(|&fi| {
            let f = &found[fi];
            let Some(why) =
                f.sample.as_ref().and_then(|s| s.extra.runtime.as_ref()).and_then(|r| rules::runtime_changed(r, first))
            else {
                return true;
            };
            rejected.push(RejectedSample {
                index: f.slot.index,
                label: f.label.clone(),
                dir: rel(&f.dir),
                reasons: vec![why],
            });
            false
        });
    }
    // Prompt lengths must agree across variants even when no calibrated count is known.
    if exp.prompt_tokens.is_none() {
        let sample_of = |fi: usize| found[fi].sample.as_ref().expect("accepted samples exist");
        let base_prompt = accepted[0].first().and_then(|&fi| sample_of(fi).prompt_tokens());
        for list in accepted.iter_mut().skip(1) {
            list.retain(|&fi| match prompt_tokens_differ(sample_of(fi).prompt_tokens(), base_prompt) {
                None => true,
                Some(why) => {
                    rejected.push(RejectedSample {
                        index: found[fi].slot.index,
                        label: found[fi].label.clone(),
                        dir: rel(&found[fi].dir),
                        reasons: vec![why],
                    });
                    false
                }
            });
        }
    }
    rejected.sort_by_key(|r| (r.index, r.dir.clone()));
    Acceptance { accepted, rejected, missing }
}

/// The tests a llama-bench study's samples asked for, in the order they asked them; empty for a
/// study of server samples.
fn llama_bench_tests(found: &[crate::study::evidence::FoundSample]) -> Vec<crate::llama_bench::BenchTest> {
    let mut tests = Vec::new();
    for run in found.iter().filter_map(|f| f.sample.as_ref()?.extra.llama_bench.as_ref()) {
        for t in &run.asked {
            if !tests.contains(t) {
                tests.push(*t);
            }
        }
    }
    tests
}

/// The accepted samples of a study with what every section reads from them, each read once:
/// their telemetry phases and series, the study's decode clock, the look levels of its
/// sequential rule and the metrics some sample measured.
struct AcceptedSamples<'a> {
    found: &'a [crate::study::evidence::FoundSample],
    accepted: &'a [Vec<usize>],
    file: &'a StudyFile,
    /// Each found sample's telemetry phases (prefill, decode), parsed once from its JSON.
    phases: Vec<Option<[crate::telemetry::phases::PhaseStats; 2]>>,
    /// Each accepted sample's telemetry series (its telemetry.csv; of a server on several GPUs,
    /// the server's series of its devices', docs/methodology.md §9.11), empty where none.
    series: Vec<Vec<crate::telemetry::sampler::TelemetrySample>>,
    /// The study's median decode gfx clock, against which each sample's sag is judged.
    clock: Option<f64>,
    levels: Option<stats::LookLevels>,
    /// An energy metric is in the summary only where some accepted sample measured it (§9.6).
    metrics: Vec<Metric>,
    roofline: Option<crate::roofline::RooflineRecord>,
}

impl<'a> AcceptedSamples<'a> {
    fn read(
        found: &'a [crate::study::evidence::FoundSample],
        accepted: &'a [Vec<usize>],
        file: &'a StudyFile,
        blocks: usize,
        roofline: Option<crate::roofline::RooflineRecord>,
    ) -> AcceptedSamples<'a> {
        let phases: Vec<_> = found.iter().map(|f| f.sample.as_ref().and_then(phases::sample_phases)).collect();
        let clock = median(
            &accepted
                .iter()
                .flatten()
                .filter_map(|&fi| phases[fi].as_ref().and_then(|p| p[1].gfx_clock_median_mhz))
                .collect::<Vec<_>>(),
        );
        let is_accepted = |fi: usize| accepted.iter().any(|l| l.contains(&fi));
        let series = (0..found.len()).map(|fi| if is_accepted(fi) { found[fi].series() } else { Vec::new() }).collect();
        let mut study = AcceptedSamples {
            found,
            accepted,
            file,
            phases,
            series,
            clock,
            levels: adaptive::look_levels(file, blocks),
            metrics: Vec::new(),
            roofline,
        };
        // A llama-bench study's metrics are its tests (docs/methodology.md §4.4); a server's
        // speed metrics always, its energy metrics where some accepted sample measured them.
        let tests = llama_bench_tests(found);
        study.metrics = if tests.is_empty() {
            Metric::every()
                .filter(|m| !m.is_energy() || (0..accepted.len()).any(|vi| !study.values(vi, *m).is_empty()))
                .collect()
        } else {
            let energy = tests.iter().map(|&t| Metric::LlamaBenchJPerToken(t));
            let measured: Vec<Metric> =
                energy.filter(|m| (0..accepted.len()).any(|vi| !study.values(vi, *m).is_empty())).collect();
            tests.into_iter().map(Metric::LlamaBenchTps).chain(measured).collect()
        };
        study
    }

    fn sample(&self, fi: usize) -> &'a Sample {
        self.found[fi].sample.as_ref().expect("accepted samples exist")
    }

    /// What a metric reads of the found sample `fi`: its record and series.
    fn input(&self, fi: usize) -> metric::MetricInput<'_> {
        metric::MetricInput { sample: self.sample(fi), series: &self.series[fi] }
    }

    fn samples(&self, vi: usize) -> Vec<&'a Sample> {
        self.accepted[vi].iter().map(|&fi| self.sample(fi)).collect()
    }

    /// Each value with its interleaved block, so the interval can pair the variants within blocks.
    fn measured(&self, vi: usize, m: Metric) -> Vec<Measured> {
        self.accepted[vi]
            .iter()
            .filter_map(|&fi| m.of(self.input(fi)).map(|value| Measured { block: self.found[fi].slot.repeat, value }))
            .collect()
    }

    /// The SPEED-Bench runs of a variant's accepted samples, each with its block.
    fn speed_bench_runs(&self, vi: usize) -> Vec<(usize, &crate::measure::speed_bench::SpeedBenchRun)> {
        self.accepted[vi]
            .iter()
            .filter_map(|&fi| self.sample(fi).extra.speed_bench.as_ref().map(|r| (self.found[fi].slot.repeat, r)))
            .collect()
    }

    fn values(&self, vi: usize, m: Metric) -> Vec<f64> {
        self.measured(vi, m).iter().map(|x| x.value).collect()
    }

    /// What throttled sample `fi`'s decode (§9.5): the firmware's limits, or the clock's sag.
    fn throttled_by(&self, fi: usize) -> Vec<String> {
        self.phases[fi].as_ref().map_or_else(Vec::new, |p| phases::throttled_by(&p[1], self.clock))
    }

    /// Each metric's runs, centre, spread and, for a candidate, its change against the baseline
    /// with the interval and verdict (docs/methodology.md §8).
    fn metric_summaries(&self, vi: usize, samples: &[&Sample]) -> Vec<MetricSummary> {
        let file = self.file;
        let mut metrics = Vec::new();
        for &m in &self.metrics {
            let runs = self.values(vi, m);
            let (change_pct, ci, verdict) = if vi == 0 {
                (None, None, None)
            } else {
                let change = stats::change_estimate(&self.measured(0, m), &self.measured(vi, m));
                let ci = stats::look_ci(&self.measured(0, m), &self.measured(vi, m), self.levels);
                let verdict = Verdict::with_margin(ci.as_ref(), m.higher_is_better(), file.margin_pct());
                // Below 3 accepted a side there is no estimate to read (docs/methodology.md §8
                // "too few samples"): no change is given, only the medians'.
                (change.filter(|_| verdict != Verdict::TooFewSamples), ci, Some(verdict))
            };
            let median_change_pct = (vi > 0)
                .then(|| median(&self.values(0, m)).zip(median(&runs)).map(|(b, c)| pct_change(b, c)))
                .flatten();
            metrics.push(MetricSummary {
                metric: m,
                mean: mean(&runs),
                median: median(&runs),
                cv_pct: crate::stats::cv_pct(&runs),
                high_cv: crate::stats::cv_pct(&runs).is_some_and(|cv| cv > noise::HIGH_CV_PCT),
                median_change_pct,
                blocks: self.measured(vi, m).iter().map(|x| x.block).collect(),
                runs,
                change_pct,
                ci,
                verdict,
                measures: file.pure_decode.then(|| m.pure_decode_caveat()).flatten().map(String::from),
                energy_from: phases::energy_from_line(samples.iter().filter_map(|s| m.energy_basis(s))),
            });
        }
        metrics
    }

    /// Each accepted sample's decode rate per window (docs/methodology.md §9.8); none for a
    /// sequence, whose requests have prefills between their decodes (§4.1, §4.2).
    fn decode_windows(&self, vi: usize) -> Vec<windows::SampleWindows> {
        self.accepted[vi]
            .iter()
            .filter_map(|&fi| {
                let s = self.sample(fi);
                if s.extra.sequence().is_some() {
                    return None;
                }
                let w = windows::decode_windows(&s.token_mono_ns, &self.series[fi]);
                (!w.is_empty())
                    .then(|| windows::sample_windows(self.found[fi].slot.index + 1, w, self.throttled_by(fi)))
            })
            .collect()
    }

    /// One variant's figures: each section's, from its accepted samples.
    fn variant_summary(&self, vi: usize, label: &str, plan: &crate::study::evidence::Plan) -> VariantSummary {
        let file = self.file;
        let samples = self.samples(vi);
        let sample_phases: Vec<_> = self.accepted[vi].iter().filter_map(|&fi| self.phases[fi].as_ref()).collect();
        let decode_med = median(&self.values(vi, Metric::ServerDecodeTps));
        let n_minus_1_med = median(
            &samples.iter().filter_map(|s| s.server.as_ref().map(|t| t.decode_tps_n_minus_1)).collect::<Vec<_>>(),
        );
        let acceptance: Vec<f64> = samples.iter().filter_map(|s| s.draft.as_ref().map(|d| d.rate)).collect();
        let gate: Vec<f64> = samples.iter().filter_map(|s| s.extra.idle_gate.as_ref().map(|g| g.waited_ms)).collect();
        VariantSummary {
            label: label.to_string(),
            spec: file.variants.get(vi).cloned().unwrap_or_default(),
            planned: plan.slots.iter().filter(|s| s.variant == vi && !plan.is_traced(s)).count(),
            accepted: samples.len(),
            metrics: self.metric_summaries(vi, &samples),
            ms_per_token: decode_med.map(|t| 1000.0 / t),
            decode_tps_n_minus_1_median: n_minus_1_med,
            acceptance_median: median(&acceptance),
            acceptance_ci: mtp_yardstick::acceptance_interval(&acceptance),
            mean_acceptance_length_median: median(
                &samples.iter().filter_map(|s| s.draft.as_ref().and_then(|d| d.mean_len)).collect::<Vec<_>>(),
            ),
            acceptance_per_position_median: per_position_medians(&samples),
            memory: memory::figures(&samples),
            mtp_yardstick: mtp_yardstick::figures(&samples),
            soak: samples.iter().any(|s| s.extra.soak.is_some()).then(|| self.soak(vi)).flatten(),
            speed_bench: speed_bench::figures(
                &self.speed_bench_runs(vi),
                (vi > 0).then(|| self.speed_bench_runs(0)).as_deref(),
                self.levels.map(|l| l.difference),
            ),
            llama_bench: llama_bench::build(&samples),
            acceptance,
            output_tokens: samples.iter().filter_map(|s| s.completion_tokens()).collect(),
            prompt_tokens: samples.iter().filter_map(|s| s.prompt_tokens()).collect(),
            idle_gate_ms_median: median(&gate),
            prefill: phases::figures(&sample_phases.iter().map(|p| &p[0]).collect::<Vec<_>>()),
            decode: phases::figures(&sample_phases.iter().map(|p| &p[1]).collect::<Vec<_>>()),
            throttled: self.accepted[vi]
                .iter()
                .filter(|&&fi| !self.throttled_by(fi).is_empty())
                .map(|&fi| self.found[fi].slot.index + 1)
                .collect(),
            throttled_by: self.accepted[vi]
                .iter()
                .map(|&fi| (self.found[fi].slot.index + 1, self.throttled_by(fi)))
                .filter(|(_, by)| !by.is_empty())
                .collect(),
            decode_windows: self.decode_windows(vi),
            devices: devices::device_figures(&samples),
            caveats: devices::variant_caveat(
                file.variants.get(vi).map(String::as_str),
                samples.first().map_or(&[][..], |s| s.server_argv.as_slice()),
                devices::metered_devices(&samples),
            )
            .into_iter()
            .collect(),
            // One decode context per request, not a sequence's summed prompt (§4.1, §4.2).
            floor: self
                .roofline
                .as_ref()
                .filter(|_| {
                    file.load_shape() == crate::study::file::LoadShape::OneRequest && file.llama_bench.is_none()
                })
                .and_then(|r| r.variants.iter().find(|x| x.label == *label))
                .map(|inputs| floor::decode_floor(inputs, &samples, n_minus_1_med)),
        }
    }

    fn soak(&self, vi: usize) -> Option<soak::SoakFigures> {
        let with_series: Vec<_> =
            self.accepted[vi].iter().map(|&fi| (self.sample(fi), self.series[fi].clone())).collect();
        soak::figures(&with_series)
    }
}

/// The acceptance caveat (docs/methodology.md §7.11) on every variant whose acceptance differs
/// materially from the baseline's: medians more than [`ACCEPTANCE_MATERIAL`] apart, or one side
/// drafting and the other not (speculative against plain decoding, MTP on against off). A study
/// where some variant drafted also gives each plain variant (`plain[i]`: no accepted sample asked
/// for speculation) its one token per decode step, so "tok/step" compares the two sides.
fn acceptance_caveats(variants: &mut [VariantSummary], plain: &[bool]) {
    let drafts = |v: &VariantSummary| v.acceptance_median.filter(|_| v.accepted > 0);
    let Some(base) = variants.first().map(|b| (drafts(b), b.accepted > 0)) else { return };
    let any_drafted = variants.iter().any(|v| drafts(v).is_some());
    for (v, &plain) in variants.iter_mut().zip(plain) {
        if any_drafted && plain && v.accepted > 0 {
            v.mean_acceptance_length_median = Some(1.0);
        }
    }
    for v in variants.iter_mut().skip(1).filter(|v| v.accepted > 0) {
        let why = match (base, drafts(v)) {
            ((Some(b), _), Some(a)) if (a - b).abs() > ACCEPTANCE_MATERIAL => {
                format!("draft acceptance differs materially ({b:.3} → {a:.3}): its decode TPS is not proof of a kernel change")
            }
            ((None, true), Some(a)) => format!(
                "draft acceptance differs materially (the baseline drafts nothing → {a:.3}): speculative against plain decoding, so its decode TPS is not proof of a kernel change"
            ),
            ((Some(b), _), None) => format!(
                "draft acceptance differs materially ({b:.3} → this variant drafts nothing): plain against speculative decoding, so its decode TPS is not proof of a kernel change"
            ),
            _ => continue,
        };
        v.caveats.push(why);
    }
}

/// The covariate model of §9.10 over the accepted samples: their start temperature where every
/// one has it (a thermal-gated study), else their median decode clock where every one has it.
fn covariate_fit<'a>(
    accepted: &[Vec<usize>],
    input_of: &dyn Fn(usize) -> metric::MetricInput<'a>,
    block_of: &dyn Fn(usize) -> usize,
    phases_of: &[Option<[crate::telemetry::phases::PhaseStats; 2]>],
    labels: &[String],
) -> Option<covariate::CovariateFit> {
    use covariate::{Covariate, Observation};
    let start = |fi: usize| input_of(fi).sample.extra.idle_gate.as_ref()?.thermal.as_ref().map(|t| t.start_c);
    let clock = |fi: usize| phases_of[fi].as_ref()?[1].gfx_clock_median_mhz;
    let all = accepted.iter().flatten();
    let (cov, x): (Covariate, &dyn Fn(usize) -> Option<f64>) = if all.clone().all(|&fi| start(fi).is_some()) {
        (Covariate::StartTemperature, &start)
    } else if all.clone().all(|&fi| clock(fi).is_some()) {
        (Covariate::DecodeClock, &clock)
    } else {
        return None;
    };
    let obs: Vec<Observation> = accepted
        .iter()
        .enumerate()
        .flat_map(|(variant, list)| {
            list.iter().filter_map(move |&fi| {
                Some(Observation {
                    variant,
                    block: block_of(fi),
                    tps: Metric::ServerDecodeTps.of(input_of(fi))?,
                    x: x(fi)?,
                })
            })
        })
        .collect();
    covariate::fit(cov, &obs, labels)
}

/// Every sample on disk with its verdict and its metrics' values, in study order: the accepted
/// ones of each variant and every rejected one (a superseded attempt or a corrupt record has no
/// readable sample).
fn judged_samples(
    study: &AcceptedSamples,
    rejected: &[RejectedSample],
    plan: &crate::study::evidence::Plan,
    rel: &dyn Fn(&std::path::Path) -> String,
) -> Vec<JudgedSample> {
    let found = study.found;
    let mut out = Vec::new();
    for (variant, list) in study.accepted.iter().enumerate() {
        for &fi in list {
            let f = &found[fi];
            let values = Metric::values(study.input(fi));
            let (index, dir, sample) = (f.slot.index, rel(&f.dir), f.sample.clone());
            out.push(JudgedSample { index, variant, dir, rejections: Vec::new(), sample, values });
        }
    }
    let on_disk = |dir: &str| -> Option<(&std::path::Path, &Sample)> {
        found.iter().find_map(|f| {
            if rel(&f.dir) == dir {
                return f.sample.as_ref().map(|s| (f.dir.as_path(), s));
            }
            f.earlier_attempts.iter().find(|(d, _)| rel(d) == dir).and_then(|(d, s)| Some((d.as_path(), s.as_ref()?)))
        })
    };
    for r in rejected {
        let sample = on_disk(&r.dir);
        let values = sample.map_or_else(Vec::new, |(dir, s)| {
            let series = crate::study::sample_folder::SampleFolder::at(dir).series(s);
            Metric::values(metric::MetricInput { sample: s, series: &series })
        });
        out.push(JudgedSample {
            index: r.index,
            variant: plan.labels.iter().position(|l| *l == r.label).unwrap_or(0),
            dir: r.dir.clone(),
            rejections: r.reasons.clone(),
            sample: sample.map(|(_, s)| s.clone()),
            values,
        });
    }
    out.sort_by(|a, b| (a.index, &a.dir).cmp(&(b.index, &b.dir)));
    out
}

#[cfg(test)]
mod acceptance_tests {
    /// §7.26 through `accept`: the sample whose server loaded another HIP runtime than its
    /// variant's first is rejected `runtime-changed`, naming both paths; the other variant's
    /// samples, whose runtime never changed, all count, and a sample of an earlier release
    /// (no record) is not judged.
    #[test]
    fn a_sample_that_loaded_another_runtime_than_its_variants_first_is_rejected() {
        use crate::runtime_libraries::{LoadedRuntime, RuntimeLibrary};
        let lib = |path: &str| RuntimeLibrary {
            role: "HIP runtime".into(),
            path: path.into(),
            version: None,
            rocm_release: None,
            size: Some(1),
            mtime_ns: Some(1),
        };
        let rt = |path: &str| Some(LoadedRuntime { libraries: vec![lib(path)] });
        let (old, new) = ("/opt/rocm-7.1.0/lib/libamdhip64.so.7", "/opt/rocm-7.2.0/lib/libamdhip64.so.7");
        let runtimes = [rt(old), rt(old), rt(old), rt(new), rt(old), None];
        let dir = tempfile::tempdir().unwrap();
        let found: Vec<crate::study::evidence::FoundSample> = runtimes
            .iter()
            .enumerate()
            .map(|(index, runtime)| {
                let mut sample = super::rules::tests::sample(Default::default());
                sample.extra.runtime = runtime.clone();
                crate::study::evidence::FoundSample {
                    slot: crate::schedule::Slot { index, variant: index % 2, repeat: index / 2 },
                    label: ["a", "b"][index % 2].into(),
                    dir: dir.path().join(format!("{index:03}")),
                    sample: Some(sample),
                    corrupt: None,
                    earlier_attempts: Vec::new(),
                }
            })
            .collect();
        let plan = crate::study::evidence::Plan {
            labels: vec!["a".into(), "b".into()],
            order_seed: None,
            slots: found.iter().map(|f| f.slot).collect(),
            layout: Default::default(),
            traced: Vec::new(),
            retakes: 0,
        };
        let exp = super::Expectations { prompt_tokens: Some(300), locked_length: true, ..Default::default() };
        let got = super::accept(&found, &plan, &exp, &|p| p.display().to_string());
        assert_eq!(got.accepted, vec![vec![0, 2, 4], vec![1, 5]]);
        assert_eq!(got.rejected.len(), 1);
        let r = &got.rejected[0];
        assert_eq!((r.index, r.label.as_str(), r.reasons[0].rule.as_str()), (3, "b", "runtime-changed"));
        assert!(r.reasons[0].reason.contains(&format!("{old} → {new}")), "{}", r.reasons[0].reason);
        let runtimes = super::variant_runtimes(&found, &plan);
        assert_eq!(runtimes[1].libraries, vec!["HIP runtime libamdhip64.so.7"], "the first sample's, by run order");
    }

    #[test]
    fn the_acceptance_interval_is_a_t_interval_of_the_mean_clipped_to_0_1() {
        assert_eq!(super::mtp_yardstick::acceptance_interval(&[1.0, 1.0]), None, "below 3 samples no interval");
        let [lo, hi] = super::mtp_yardstick::acceptance_interval(&[0.5, 0.6, 0.7]).unwrap();
        // mean 0.6, s 0.1, t(2 df, 97.5%) = 4.303
        let half = 4.303 * 0.1 / 3f64.sqrt();
        assert!((lo - (0.6 - half)).abs() < 1e-3 && (hi - (0.6 + half)).abs() < 1e-3, "{lo} {hi}");
        assert_eq!(super::mtp_yardstick::acceptance_interval(&[1.0, 1.0, 0.875]).unwrap()[1], 1.0, "clipped at 1");
    }

    /// §7.11: medians more than 0.05 apart, or one side drafting and the other not, caveat the
    /// variant; a plain variant beside a drafting one yields one token a step.
    #[test]
    fn acceptance_differing_or_drafting_on_one_side_only_is_caveated() {
        let v = |label: &str, acc: Option<f64>| super::VariantSummary {
            label: label.into(),
            accepted: 3,
            acceptance: acc.into_iter().collect(),
            acceptance_median: acc,
            ..Default::default()
        };
        let caveated = |vs: &[super::VariantSummary], plain: &[bool]| {
            let mut vs = vs.to_vec();
            super::acceptance_caveats(&mut vs, plain);
            vs
        };
        let out = caveated(&[v("off", None), v("on", Some(0.98)), v("off2", None)], &[true, false, true]);
        assert!(out[1].caveats[0].contains("the baseline drafts nothing → 0.980"), "{:?}", out[1].caveats);
        assert!(out[2].caveats.is_empty(), "plain against plain");
        assert_eq!(out[0].mean_acceptance_length_median, Some(1.0), "plain: one token a step");
        assert_eq!(out[1].mean_acceptance_length_median, None, "the server's own figure, none here");
        let out = caveated(
            &[v("on", Some(0.98)), v("near", Some(0.95)), v("far", Some(0.02)), v("off", None)],
            &[false, false, false, true],
        );
        assert!(out[1].caveats.is_empty(), "0.03 apart is within the threshold");
        assert!(out[2].caveats[0].contains("(0.980 → 0.020)"), "{:?}", out[2].caveats);
        assert!(out[3].caveats[0].contains("this variant drafts nothing"), "{:?}", out[3].caveats);
        let out = caveated(&[v("a", None), v("b", None)], &[true, true]);
        assert!(out.iter().all(|v| v.caveats.is_empty() && v.mean_acceptance_length_median.is_none()));
    }
}
