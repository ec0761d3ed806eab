//! The end of `abprof bench`: one cold sample, judged by the rulebook, its facts beside it, the
//! history.
use super::epilogue::{record, Finishing};
use crate::client::ChatRequest;
use crate::measure::{run_sample, ChatLoad, NoObserver, SampleSpec};
use crate::report::emit;
use crate::report::sample::SampleWithEvidence;
use crate::server::LaunchSpec;
use crate::stop_signal::block_on_until_signal;
use crate::study::run_folders::BenchFolder;
use crate::summary::bench::{judge_bench, BenchFacts};
use anyhow::{bail, Result};
use std::path::PathBuf;
use std::time::Duration;

/// One bench sample as its flags asked for it, checked.
pub(crate) struct BenchRequest {
    /// The server binary as given (its spec in the facts) and the program that runs.
    pub(crate) server_bin: PathBuf,
    pub(crate) program: PathBuf,
    pub(crate) model: PathBuf,
    pub(crate) common: Vec<String>,
    pub(crate) prompt: String,
    pub(crate) expected_prompt_tokens: Option<u64>,
    pub(crate) tokens: u32,
    pub(crate) ignore_eos: bool,
    pub(crate) evidence: PathBuf,
    pub(crate) port: u16,
    pub(crate) health_timeout: Duration,
    pub(crate) stall_timeout: Duration,
}

/// 0 the sample is accepted; 3 a rule rejected it (each rule on its own line).
pub(crate) fn bench(r: &BenchRequest, how: Finishing) -> Result<i32> {
    let mut history = how.open_history()?;
    let evidence = &r.evidence;
    let folder = BenchFolder::at(evidence);
    let files = folder.sample();
    let mut args = vec!["-m".to_string(), r.model.display().to_string()];
    args.extend(r.common.iter().cloned());
    let mut request = ChatRequest::benchmark(&r.prompt, r.tokens);
    request.ignore_eos = r.ignore_eos.then_some(true);
    let launch = LaunchSpec {
        program: r.program.clone(),
        args,
        env: vec![],
        host: "127.0.0.1".into(),
        port: r.port,
        log_file: files.server_log(),
        console_file: files.console_log(),
        signal_descendant: None,
        cpus: None,
        engine: Default::default(),
    };
    let spec =
        SampleSpec { expected_prompt_tokens: r.expected_prompt_tokens, ..SampleSpec::new(launch, r.health_timeout) };
    let mut load = ChatLoad::new(request, false, r.stall_timeout);
    let rt = crate::client::runtime();
    let sample =
        block_on_until_signal(&rt, async { Ok(run_sample(&spec, &files, &mut load, &mut NoObserver).await?) })?;
    emit(&SampleWithEvidence { sample: &sample, evidence }, how.format);
    if let Some(e) = &sample.error {
        bail!("{e} (evidence kept in {})", evidence.display());
    }
    let facts = bench_facts(r)?;
    folder.write_facts(&facts)?;
    let series = folder.sample_folder().series(&sample);
    let bench = judge_bench(facts, sample, &series);
    for x in &bench.rejections {
        eprintln!("abprof: rejected ({}): {}", x.rule, x.reason);
    }
    let in_record =
        record(history.as_mut(), evidence, how.format, || Ok(crate::history::StudyRecord::of_bench(evidence, &bench)));
    if let Some(sig) = in_record {
        eprintln!("abprof: interrupted by signal {sig}{}", super::epilogue::AFTER_SIGNAL_IN_RECORD);
        return Ok(128 + sig);
    }
    Ok(if bench.rejections.is_empty() { 0 } else { 3 })
}

/// What the sample ran on, hashed once it has run (a missing binary fails the sample first, with
/// its own message).
fn bench_facts(r: &BenchRequest) -> Result<BenchFacts> {
    let spec = format!("bench={}", r.server_bin.display());
    let variant = crate::variant::Variant::binary_only("bench", &r.server_bin, &spec);
    Ok(BenchFacts {
        variant: crate::study::facts::variant_facts(&variant, &r.model, &r.common)?,
        host: crate::study::facts::host_facts(None),
        common_args: r.common.clone(),
        expected_prompt_tokens: r.expected_prompt_tokens,
        ignore_eos: r.ignore_eos,
    })
}
