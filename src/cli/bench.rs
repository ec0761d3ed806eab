//! `abprof bench`: one cold, honestly measured sample.
use super::common::{check_model, default_evidence, port_or_free, read_prompt, runtime, ServerOpts};
use crate::client::{calibrate, ChatRequest};
use crate::measure::{run_sample, ChatLoad, NoObserver, SampleFiles, SampleSpec};
use crate::server::LaunchSpec;
use crate::summary::rules::{sample_rejections, Expectations};
use anyhow::{bail, Result};
use clap::Args;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Args, Debug)]
pub struct BenchArgs {
    #[command(flatten)]
    pub server: ServerOpts,
    /// Calibrated prompt text (see `abprof calibrate`).
    #[arg(long, value_name = "FILE")]
    pub prompt: PathBuf,
    /// The prompt's calibrated token count (default: read from FILE.calibration.json).
    #[arg(long, value_name = "N")]
    pub prompt_tokens: Option<u64>,
    /// Output tokens (max_tokens); the sample must finish by `length` with exactly N.
    #[arg(long, value_name = "N")]
    pub tokens: u32,
    /// Send llama-server's `ignore_eos` so a model that would stop early decodes exactly N.
    #[arg(long)]
    pub ignore_eos: bool,
    /// Print the record as JSON.
    #[arg(long)]
    pub json: bool,
    /// Evidence folder (default: a new folder under the temp dir).
    #[arg(long, value_name = "DIR")]
    pub evidence: Option<PathBuf>,
}

pub fn run(a: BenchArgs) -> Result<i32> {
    check_model(&a.server.model)?;
    let prompt = read_prompt(&a.prompt)?;
    let expected = a.prompt_tokens.or_else(|| calibrate::recorded_prompt_tokens(&a.prompt));
    if expected.is_none() {
        eprintln!(
            "abprof: warning: {} has no calibration record and no --prompt-tokens was given: the prompt length is unchecked",
            a.prompt.display()
        );
    }
    if a.tokens < 2 {
        bail!("--tokens {} is too few: decode TPS needs at least 2 output tokens", a.tokens);
    }
    let mut args = vec!["-m".to_string(), a.server.model.display().to_string()];
    args.extend(a.server.common_args()?);
    let evidence = a.evidence.clone().unwrap_or_else(|| default_evidence("bench"));
    let mut request = ChatRequest::benchmark(&prompt, a.tokens);
    request.ignore_eos = a.ignore_eos.then_some(true);
    let spec = SampleSpec {
        launch: LaunchSpec {
            program: a.server.binary(),
            args,
            env: vec![],
            host: "127.0.0.1".into(),
            port: port_or_free(a.server.port)?,
            log_file: evidence.join("server.log"),
            console_file: evidence.join("server.console.log"),
            signal_descendant: None,
        },
        expected_prompt_tokens: expected,
        health_timeout: a.server.health_timeout(),
        stop_timeout: Duration::from_secs(60),
        kill_on_stop_timeout: true,
        expect: None,
    };
    let files = SampleFiles::new(&evidence);
    let sample = runtime().block_on(run_sample(&spec, &files, &mut ChatLoad::new(request, false), &mut NoObserver))?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&sample)?);
    } else {
        print!("{}", crate::report::sample::render_text(&sample));
        println!("evidence           {}", evidence.display());
    }
    let exp =
        Expectations { prompt_tokens: expected, locked_length: true, timing_blocks: 1, ..Expectations::default() };
    let rejections = sample_rejections(&sample, &exp);
    if let Some(e) = &sample.error {
        bail!("{e} (evidence kept in {})", evidence.display());
    }
    for r in &rejections {
        eprintln!("abprof: rejected ({}): {}", r.rule, r.reason);
    }
    Ok(if rejections.is_empty() { 0 } else { 3 })
}
