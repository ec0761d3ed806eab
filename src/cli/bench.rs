//! `abprof bench`: one cold, honestly measured sample.
use super::args::{HistoryArgs, OutputArgs, PromptArgs, ServerArgs};
use super::common::{block_on_until_signal, check_model, default_evidence, port_or_free, runtime};
use crate::client::ChatRequest;
use crate::measure::{run_sample, ChatLoad, NoObserver, SampleFiles, SampleSpec};
use crate::report::emit;
use crate::report::sample::SampleWithEvidence;
use crate::server::LaunchSpec;
use crate::summary::bench::{judge_bench, BenchFacts, BENCH_FACTS_FILE};
use anyhow::{bail, Result};
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
#[command(mut_arg("prompt", |a| a.required(true)))]
pub(crate) struct BenchArgs {
    #[command(flatten)]
    pub(crate) server: ServerArgs,
    #[command(flatten)]
    pub(crate) prompt: PromptArgs,
    /// Output tokens (max_tokens); the sample must finish by `length` with exactly N (at least 2:
    /// decode TPS needs two).
    #[arg(long, value_name = "N", value_parser = crate::bounds::u32_flag(2, crate::bounds::MAX_TOKENS))]
    pub(crate) tokens: u32,
    /// Send llama-server's `ignore_eos` so a model that would stop early decodes exactly N.
    #[arg(long)]
    pub(crate) ignore_eos: bool,
    #[command(flatten)]
    pub(crate) output: OutputArgs,
    /// Evidence folder (default: a new folder under the temp dir).
    #[arg(long, value_name = "DIR")]
    pub(crate) evidence: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) history: HistoryArgs,
}

/// What the sample ran on, hashed once it has run (a missing binary fails the sample first, with
/// its own message).
fn bench_facts(a: &BenchArgs, common: &[String], expected: Option<u64>) -> Result<BenchFacts> {
    let spec = format!("bench={}", a.server.server_bin.display());
    let variant = crate::variant::Variant::binary_only("bench", &a.server.server_bin, &spec);
    Ok(BenchFacts {
        variant: crate::study::facts::variant_facts(&variant, &a.server.model, common)?,
        host: crate::study::facts::host_facts(None),
        common_args: common.to_vec(),
        expected_prompt_tokens: expected,
        ignore_eos: a.ignore_eos,
    })
}

pub(crate) fn run(a: BenchArgs) -> Result<i32> {
    check_model(&a.server.model)?;
    let prompt_file = a.prompt.prompt.as_deref().expect("clap requires --prompt");
    let read = crate::measure::calibrate::read_prompt_file(prompt_file)?;
    let (prompt, expected) = (read.text, a.prompt.prompt_tokens.or(read.tokens));
    if expected.is_none() {
        eprintln!(
            "abprof: warning: {} has no calibration record and no --prompt-tokens was given: the prompt length is unchecked",
            prompt_file.display()
        );
    }
    let common = a.server.launch.common_args()?;
    let mut args = vec!["-m".to_string(), a.server.model.display().to_string()];
    args.extend(common.iter().cloned());
    let mut history = a.history.open()?;
    let evidence = a.evidence.clone().unwrap_or_else(|| default_evidence("bench"));
    let mut request = ChatRequest::benchmark(&prompt, a.tokens);
    request.ignore_eos = a.ignore_eos.then_some(true);
    let launch = LaunchSpec {
        program: a.server.binary(),
        args,
        env: vec![],
        host: "127.0.0.1".into(),
        port: port_or_free(a.server.port)?,
        log_file: evidence.join("server.log"),
        console_file: evidence.join("server.console.log"),
        signal_descendant: None,
    };
    let spec =
        SampleSpec { expected_prompt_tokens: expected, ..SampleSpec::new(launch, a.server.launch.health_timeout()) };
    let files = SampleFiles::new(&evidence);
    let mut load = ChatLoad::new(request, false, a.server.launch.stall_timeout());
    let sample =
        block_on_until_signal(&runtime(), async { Ok(run_sample(&spec, &files, &mut load, &mut NoObserver).await?) })?;
    emit(&SampleWithEvidence { sample: &sample, evidence: &evidence }, a.output.format());
    if let Some(e) = &sample.error {
        bail!("{e} (evidence kept in {})", evidence.display());
    }
    let facts = bench_facts(&a, &common, expected)?;
    crate::study::evidence::write_json(&evidence.join(BENCH_FACTS_FILE), &facts)?;
    let bench = judge_bench(facts, sample);
    for r in &bench.rejections {
        eprintln!("abprof: rejected ({}): {}", r.rule, r.reason);
    }
    crate::finish::record(history.as_mut(), &evidence, a.output.format(), || {
        Ok(crate::history::StudyRecord::of_bench(&evidence, &bench))
    });
    Ok(if bench.rejections.is_empty() { 0 } else { 3 })
}
