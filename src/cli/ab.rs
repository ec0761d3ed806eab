//! `abprof ab`: the A/B study.
use super::args::WORKLOADS;
use super::args::{
    AdaptiveArgs, HistoryArgs, JudgementArgs, OutputArgs, PromptArgs, SweepArgs, VariantArgs, WorkloadArgs, STUDY_FLAGS,
};
use super::common::chat_study_file;
use super::conditions::RunConditions;
use crate::app::Finishing;
use crate::refusal::refuse;
use crate::refusal::Refusal;
use crate::study::file::{KindName, StudyFile, StudyFileError, Workload, DEFAULT_MAX_SAMPLES};
use crate::summary::gate::{FailOn, Gate, GateRule};
use anyhow::Result;
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
#[command(
    after_help = "Exit status: 0 done; 1 error, also after the summary when the restore/verify hooks failed, a variant has no accepted sample or the gate could not judge a candidate (one line names the cause); 2 usage, refused before anything is created (bad flags or variant specs, a study file that does not parse, a model that is not a GGUF file, a binary that is not a llama-server or lacks a flag given to it, a prompt and output the context cannot hold, a --root that is a file or holds files, a --port in use); 3 the --fail-on gate failed; 128+N stopped by signal N (129 SIGHUP, 130 SIGINT, 143 SIGTERM; resumable)."
)]
#[command(mut_arg("variants", |a| a.conflicts_with_all(["study", "resume"])))]
#[command(mut_arg("metric", |a| a.requires("fail_on")), mut_arg("threshold", |a| a.requires("fail_on")))]
#[command(group(clap::ArgGroup::new("adaptive_rule").args(["until_ci", "until_decided"]).multiple(true)))]
#[command(mut_arg("max_samples", |a| a.requires("adaptive_rule")))]
pub(crate) struct AbArgs {
    /// Evidence folder of a new study (must not exist, or be empty).
    #[arg(long, value_name = "DIR", required_unless_present = "resume")]
    pub(crate) root: Option<PathBuf>,
    /// Run the study defined in this TOML file (written into every evidence folder as study.toml).
    #[arg(long, value_name = "FILE", conflicts_with = "resume")]
    #[arg(conflicts_with_all = ["axes", "until_ci", "until_decided", "mei", "max_samples", "retakes"])]
    pub(crate) study: Option<PathBuf>,
    /// Continue an interrupted study (or sweep) in DIR.
    #[arg(long, value_name = "DIR", conflicts_with = "root", conflicts_with_all = STUDY_FLAGS)]
    #[arg(conflicts_with_all = ["tokens", "workload", "samples", "prompt", "prompt_tokens", "ignore_eos", "pure_decode", "aa", "order_seed", "axes", "until_ci", "until_decided", "mei", "max_samples", "retakes"])]
    pub(crate) resume: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) variants: VariantArgs,
    #[command(flatten)]
    pub(crate) workload: WorkloadArgs,
    #[command(flatten)]
    pub(crate) prompt: PromptArgs,
    /// Every sample one cold llama-bench run of the variant's build (the llama-bench beside its
    /// llama-server, or the variant's binary when it is one) instead of a llama-server: ARGS are
    /// llama-bench's, its tests as it takes them (`-p 512 -n 128 -d 0,4096`, `-pg 512,128`), each
    /// judged on its own; abprof adds -m, -r 1 and -o jsonl (docs/methodology.md §4.4).
    #[arg(long, value_name = "ARGS", allow_hyphen_values = true)]
    #[arg(conflicts_with_all = ["study", "resume", "tokens", "workload", "prompt", "prompt_tokens", "ignore_eos", "pure_decode"])]
    pub(crate) llama_bench: Option<String>,
    /// Run the (single) variant against itself to measure the noise floor.
    #[arg(long)]
    pub(crate) aa: bool,
    #[command(flatten)]
    pub(crate) sweep: SweepArgs,
    #[command(flatten)]
    pub(crate) adaptive: AdaptiveArgs,
    #[command(flatten)]
    pub(crate) conditions: RunConditions,
    #[command(flatten)]
    pub(crate) output: OutputArgs,
    #[command(flatten)]
    pub(crate) history: HistoryArgs,
    /// CI gate: exit 3 when a candidate is decided slower (or, with `changed`, different) — its
    /// interval excludes 0 — and its estimate lies beyond --threshold; exit 1 when a candidate
    /// has no interval (fewer than 3 accepted samples a side).
    #[arg(long, value_enum, value_name = "WHEN", conflicts_with = "axes")]
    pub(crate) fail_on: Option<FailOn>,
    /// How the gate holds a change against --threshold: `estimate`, decided worse and the
    /// estimate beyond it; `interval`, the whole interval beyond it (a non-inferiority test).
    ///
    /// Share of builds failed at --fail-on slower --threshold 5, 3% noise, by the true change
    /// (simulated, 4,000 studies a cell; docs/methodology.md §8):
    ///
    ///   true change                      0     -3%    -4%    -5%    -6%    -8%   -10%
    ///   estimate, --samples 10         0.0%   6.4%  21.4%  49.5%  78.2%  99.0%   100%
    ///   interval, --samples 10         0.0%   0.1%   0.5%   2.6%  11.0%  57.5%  94.5%
    ///   estimate, --until-decided      0.1%   9.8%  26.9%  52.7%  79.5%  98.7%   100%
    ///
    /// (--until-decided --max-samples 10; the interval rule is refused with --until-decided,
    /// which stops as soon as the interval excludes 0.)
    #[arg(
        long,
        value_enum,
        value_name = "RULE",
        default_value = "estimate",
        requires = "fail_on",
        verbatim_doc_comment
    )]
    pub(crate) gate_rule: GateRule,
    #[command(flatten)]
    pub(crate) judgement: JudgementArgs,
}

fn study_from_flags(a: &AbArgs) -> Result<StudyFile> {
    let v = &a.variants;
    let Some(model) = &v.model else { refuse!("--model is required (or pass --study FILE)") };
    let sweep = a.sweep.section()?;
    let swept = |f: fn(&crate::study::file::SweepSection) -> bool| sweep.as_ref().is_some_and(f);
    let bench = a.llama_bench.as_ref().map(|args| crate::study::file::LlamaBenchSection { args: args.clone() });
    let tokens = match (a.workload.tokens, a.workload.workload) {
        _ if bench.is_some() => 0,
        (None, Some(w)) if !w.fixes_tokens() && swept(|s| !s.tokens.is_empty()) => 0,
        (Some(_), _) | (_, Some(_)) if swept(|s| !s.tokens.is_empty()) => {
            refuse!("--sweep tokens=… gives the output tokens: drop --tokens and --workload")
        }
        (Some(_), Some(w)) if w.fixes_tokens() => return Err(WorkloadArgs::both(w)),
        (Some(t), _) => t,
        (None, Some(w)) => w.tokens(),
        (None, None) if swept(|s| !s.tokens.is_empty()) => 0,
        (None, None) => {
            refuse!("give --tokens N or --workload {WORKLOADS} (or --sweep tokens=N,…)")
        }
    };
    // The MTP yardstick and SPEED-Bench send their own prompts.
    let own_prompts = a.workload.workload.and_then(Workload::own_prompts).is_some();
    let prompt_swept = swept(|s| !s.prompt_tokens.is_empty());
    if prompt_swept && (a.prompt.prompt.is_some() || a.prompt.prompt_tokens.is_some()) {
        refuse!("--sweep prompt-tokens=… gives the prompt lengths: drop --prompt and --prompt-tokens");
    }
    v.launch.common_args()?;
    let mut variants = v.variants.clone();
    if variants.is_empty() {
        refuse!("give at least one --variant label=BINARY (or --study FILE)");
    }
    // Each spec on its own first (a typo, a missing binary), then what they make together.
    crate::variant::parse_variants(&variants).map_err(Refusal::of)?;
    if a.aa {
        if variants.len() != 1 {
            refuse!("--aa runs one variant against itself: give exactly one --variant");
        }
        let copy = crate::variant::aa_copy(&variants[0]).expect("a parsed spec has its '='");
        variants.push(copy);
    }
    if a.prompt.prompt.is_none() && a.prompt.prompt_tokens.is_none() && !prompt_swept && !own_prompts && bench.is_none()
    {
        refuse!("give --prompt FILE (from `abprof calibrate`) or --prompt-tokens N (calibrated once on the baseline)");
    }
    if variants.len() == 1 {
        refuse!("one --variant gives nothing to compare: add a second --variant (the first is the baseline), or --aa to run it against itself and measure the noise floor");
    }
    let file = StudyFile {
        sweep,
        until_ci_pct: a.adaptive.until_ci,
        max_samples: (a.adaptive.until_ci.is_some() || a.adaptive.until_decided)
            .then(|| a.adaptive.limit.max_samples.unwrap_or(DEFAULT_MAX_SAMPLES)),
        until_decided: a.adaptive.until_decided,
        mei_pct: a.adaptive.mei,
        retakes: a.adaptive.retakes,
        variants,
        llama_bench: bench,
        ..chat_study_file(v, &a.workload, &a.prompt, &a.conditions, model.clone(), tokens)
    };
    let file = file.with_paths_from(&std::env::current_dir()?);
    // Contradictions the flags allow (a kv axis beside a variant's own kv=, --samples above
    // --max-samples) are caught here, before the folder is made.
    file.check().map_err(Refusal::of)?;
    Ok(file)
}

pub(crate) fn run(a: AbArgs) -> Result<i32> {
    // The flags that name places first: a --root or --history that cannot be used is refused
    // whatever the study says.
    let history = a.history.location()?;
    let (file, root, resume) = if let Some(dir) = &a.resume {
        (crate::study::open(dir)?.resumed_by(KindName::Ab)?.file, dir.clone(), true)
    } else {
        let root = a.root.clone().expect("clap requires --root");
        crate::study::evidence::Evidence::check_new(&root).map_err(Refusal::of)?;
        let file = match &a.study {
            Some(path) => crate::study::load_study_file(path, KindName::Ab, "ab")?,
            None => study_from_flags(&a)?,
        };
        (file, root, false)
    };
    if a.fail_on.is_some() && !resume {
        gate_can_judge(&file)?;
    }
    if a.study.is_none() && !resume {
        enough_samples(&file)?;
    }
    if file.sweep.is_some() && a.fail_on.is_some() {
        refuse!("--fail-on judges one study, and {} is a sweep: gate each point's study (abprof ab --study DIR/points/…/study.toml --fail-on …)", root.display());
    }
    if a.gate_rule == GateRule::Interval && file.until_decided {
        return Err(Refusal::of(StudyFileError::Refused(
            "--gate-rule interval asks for the whole interval beyond --threshold, and --until-decided (until_decided) stops as soon as the interval excludes 0, so a true -10% would fail it about 10% of the time (docs/methodology.md §8): give the study a fixed --samples N, or use --gate-rule estimate".into(),
        ))
        .into());
    }
    let j = &a.judgement;
    let gate = a.fail_on.map(|fail_on| Gate {
        fail_on,
        metric: j.metric,
        threshold_pct: j.threshold.unwrap_or(0.0),
        rule: a.gate_rule,
    });
    let how = Finishing { format: a.output.format(), history, gate };
    crate::app::study(&file, &root, resume, how)
}

/// Where a study plans fewer than 3 samples per variant (its cap when adaptive, else `samples`):
/// the flag that sets that count, and the count.
fn too_few_planned(file: &StudyFile) -> Option<(&'static str, u32)> {
    let n = file.max_samples.unwrap_or(file.samples).max(file.samples);
    let flag = if file.max_samples.is_some() { "--max-samples" } else { "--samples" };
    (n < crate::stats::MIN_VALUES as u32).then_some((flag, n))
}

/// Fewer than 3 values a side give no interval and no verdict (docs/methodology.md §8), so a
/// study of `--samples 1` or 2 could only end "too few samples". A study file may still plan
/// fewer (a quick run of the machinery, as the test bed's fault matrix does), but not gate it.
fn enough_samples(file: &StudyFile) -> Result<()> {
    if let Some((flag, n)) = too_few_planned(file) {
        let values = if n == 1 { "1 value" } else { "2 values" };
        refuse!("{flag} {n} gives each variant {values}, and a verdict needs an interval of at least 3 a side (docs/methodology.md §8): pass {flag} 3 or more");
    }
    Ok(())
}

/// `--fail-on` judges each candidate's interval, so a study that cannot give one — no candidate,
/// or fewer than 3 samples a side planned — would end "the gate cannot judge" after all its
/// samples: refused before the first.
fn gate_can_judge(file: &StudyFile) -> Result<()> {
    if file.variants.len() < 2 {
        refuse!("--fail-on judges candidates against the baseline, and this study has one variant: add a --variant to compare (or --aa for an A/A study)");
    }
    if let Some((flag, n)) = too_few_planned(file) {
        let samples = if n == 1 { "1 sample" } else { "2 samples" };
        refuse!("--fail-on needs an interval, which needs 3 accepted values a side (docs/methodology.md §8), and this study plans {samples} per variant: pass {flag} 3 or more (more leaves room for a rejected sample)");
    }
    Ok(())
}
