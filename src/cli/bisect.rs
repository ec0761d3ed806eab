//! `abprof bisect`: the first commit between good and bad that changed a metric.
use super::args::{
    JudgementArgs, MaxSamplesArg, OutputArgs, PromptArgs, SourceArgs, VariantArgs, WorkloadArgs, STUDY_FLAGS,
};
use super::common::chat_study_file;
use super::conditions::RunConditions;
use crate::bisect::BisectPlan;
use crate::refusal::refuse;
use crate::study::check_study;
use crate::study::file::{StudyFile, Workload};
use crate::variant::template_fields;
use anyhow::Result;
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
#[command(
    after_help = "Example: abprof bisect --root /tmp/bisect --repo ~/llama.cpp --good v1 --bad HEAD --model M --server-args \"-c 4096 -t 1\" --prompt-tokens 300 --tokens 64 --ignore-eos -- -DGGML_NATIVE=ON\n\nExit status: 0 a first bad commit was named; 1 an error, or no single first bad commit (inconclusive, only commits that do not build left, good and bad not clearly different); 2 usage; 128+N stopped by signal N (the worktree is removed, the repository left as it was)."
)]
#[command(mut_arg("variants", |a| {
    a.help("The variant fields every build runs with, as a spec with no binary: build=|kv=q8_0|env=X=1 (at most one)")
}))]
#[command(mut_arg("threshold", |a| {
    a.help("% change a probed commit's whole interval must lie beyond to be bad (default: half the change measured between good and bad)")
}))]
pub(crate) struct BisectArgs {
    /// Evidence folder of the bisect (new, or empty; outside the repository).
    #[arg(long, value_name = "DIR")]
    pub(crate) root: PathBuf,
    #[command(flatten)]
    pub(crate) source: SourceArgs,
    /// The last known good commit.
    #[arg(long, value_name = "SHA")]
    pub(crate) good: String,
    /// A commit known to be bad (after good).
    #[arg(long, value_name = "SHA")]
    pub(crate) bad: String,
    /// The study every step runs (a TOML file as `abprof ab --study` reads, with one variant
    /// spec without binary, e.g. variants = ["build="]).
    #[arg(long, value_name = "FILE", conflicts_with_all = STUDY_FLAGS)]
    #[arg(conflicts_with_all = ["tokens", "workload", "samples", "prompt", "prompt_tokens", "ignore_eos", "pure_decode", "order_seed"])]
    pub(crate) study: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) variants: VariantArgs,
    #[command(flatten)]
    pub(crate) workload: WorkloadArgs,
    #[command(flatten)]
    pub(crate) prompt: PromptArgs,
    #[command(flatten)]
    pub(crate) conditions: RunConditions,
    #[command(flatten)]
    pub(crate) judgement: JudgementArgs,
    #[command(flatten)]
    pub(crate) limit: MaxSamplesArg,
    #[command(flatten)]
    pub(crate) output: OutputArgs,
}

/// A bisect step is one A/B of one prompt; the MTP yardstick's nine (§4.1) and SPEED-Bench's
/// eleven (§4.3) are `abprof ab`'s.
fn own_prompts_refused(w: Workload) -> String {
    let name = w.name();
    format!("bisect times one calibrated prompt per step: run workload {name} with abprof ab --workload {name}, and bisect with --prompt/--prompt-tokens and --tokens")
}

/// The study of every step: from --study or the flags, with the template variant's fields.
fn study(a: &BisectArgs) -> Result<(StudyFile, String)> {
    let file = match &a.study {
        Some(path) => crate::study::load_study_file(path, crate::study::file::KindName::Ab, "bisect")?,
        None => {
            let v = &a.variants;
            let Some(model) = &v.model else { refuse!("--model is required (or pass --study FILE)") };
            v.launch.common_args()?;
            if let Some(w) = a.workload.workload.filter(|w| w.own_prompts().is_some()) {
                refuse!("{}", own_prompts_refused(w))
            }
            if a.prompt.prompt.is_none() && a.prompt.prompt_tokens.is_none() {
                refuse!("give --prompt FILE (from `abprof calibrate`) or --prompt-tokens N (calibrated once on the good build)");
            }
            let tokens = a.workload.tokens()?;
            let mut file = chat_study_file(v, &a.workload, &a.prompt, &a.conditions, model.clone(), tokens);
            if file.variants.is_empty() {
                file.variants = vec!["build=".into()];
            }
            file.with_paths_from(&std::env::current_dir()?)
        }
    };
    if let Some(w) = file.workload.filter(|w| w.own_prompts().is_some()) {
        refuse!("{}", own_prompts_refused(w))
    }
    if file.llama_bench.is_some() {
        refuse!("bisect builds llama-server alone at each step, and this study's samples are llama-bench's ([llama_bench], docs/methodology.md §4.4): bisect it as a server study (--prompt-tokens and --tokens), or compare two builds' llama-bench with abprof ab --llama-bench");
    }
    let [template] = file.variants.as_slice() else {
        refuse!(
            "a bisect compares each build with the good one: give at most one variant, its fields only (build=|kv=q8_0), not {}",
            file.variants.len()
        );
    };
    let fields = template_fields(template)?;
    // The rest of the study's checks (the model exists, server args split), with stand-in
    // variants: the builds do not exist yet.
    let stand_in = format!("good=/proc/self/exe{fields}");
    check_study(&StudyFile { variants: vec![stand_in], ..file.clone() })?;
    Ok((file, fields))
}

pub(crate) fn run(a: BisectArgs) -> Result<i32> {
    let (study, variant_fields) = study(&a)?;
    let samples = study.samples;
    let max_samples = a.limit.max_samples.unwrap_or(crate::bisect::DEFAULT_MAX_SAMPLES.max(samples));
    if max_samples < samples {
        refuse!("--max-samples {max_samples} is fewer than --samples {samples}: a step can only grow");
    }
    let s = &a.source;
    let plan = BisectPlan {
        root: a.root.clone(),
        repo: s.repo.clone(),
        good: a.good.clone(),
        bad: a.bad.clone(),
        patch: s.patch.clone(),
        artifacts: s.out(),
        cmake_args: s.cmake_args.clone(),
        jobs: s.jobs(),
        study,
        variant_fields,
        metric: a.judgement.metric,
        threshold_pct: a.judgement.threshold,
        max_samples,
    };
    if let Some(p) = &plan.patch {
        if !p.exists() {
            refuse!("cannot read patch {}: it does not exist", p.display());
        }
    }
    crate::app::bisect(&plan, a.output.format())
}
