//! THE cold-sample lifecycle (docs/methodology.md §2): start the server cold → /health →
//! warm-up → idle gate → the load → stop → parse the log → record. Every kind of sample (the
//! A/B request, the Pi agent, a request under a tracer) goes through this one function; only
//! the [`Load`] differs. Every artefact lands in the sample's folder as soon as it exists, so a
//! failure at any step loses nothing already measured.
use super::files::SampleFiles;
use super::launcher::{Launcher, ServerControl, Spawn};
use super::load::Load;
use super::observer::{GateError, GateFailure, SampleObserver, SamplePhase};
use super::record::{ExpectOutcome, Sample, SampleSteps, ServerTiming, StreamMetrics};
use crate::client::{Client, StreamRecord};
use crate::clock::{Span, Stamp};
use crate::server::log::{timing_blocks, LogError, TimingBlock};
use crate::server::{Engine, LaunchSpec, ServerError};
use std::path::PathBuf;
use std::time::Duration;
use thiserror::Error;

/// How to run one sample's server.
#[derive(Debug, Clone)]
pub(crate) struct SampleSpec {
    pub(crate) launch: LaunchSpec,
    pub(crate) expected_prompt_tokens: Option<u64>,
    pub(crate) health_timeout: Duration,
    pub(crate) stop_timeout: Duration,
    /// SIGKILL the process group if it outlives `stop_timeout`; false for a tracer, whose output
    /// a kill would destroy.
    pub(crate) kill_on_stop_timeout: bool,
    /// A regex that must appear in the server log to prove a feature engaged (a variant's
    /// `expect=`); the outcome is recorded in the sample.
    pub(crate) expect: Option<regex::Regex>,
}

/// Seconds a server may take to exit after its one SIGTERM before its group is killed.
pub(crate) const DEFAULT_STOP_TIMEOUT_S: u64 = 60;

impl SampleSpec {
    /// One sample's server with the defaults every caller shares: no prompt length to check, the
    /// default stop timeout with a kill after it, no `expect=`.
    pub(crate) fn new(launch: LaunchSpec, health_timeout: Duration) -> SampleSpec {
        SampleSpec {
            launch,
            expected_prompt_tokens: None,
            health_timeout,
            stop_timeout: Duration::from_secs(DEFAULT_STOP_TIMEOUT_S),
            kill_on_stop_timeout: true,
            expect: None,
        }
    }
}

#[derive(Debug, Error)]
pub(crate) enum SampleError {
    /// The server could not be started or never became healthy: nothing was measured.
    #[error(transparent)]
    Start(#[from] ServerError),
    #[error("could not write evidence {path}: {source}")]
    Evidence { path: PathBuf, source: std::io::Error },
    #[error("idle gate: {0}")]
    Gate(GateFailure),
    /// abprof was told to stop during the load; the server was stopped and nothing recorded.
    #[error("interrupted")]
    Interrupted,
}

/// Writes `sample.json` atomically (temp file + rename): a reader never sees half a record.
pub(crate) fn save_record(files: &SampleFiles, sample: &Sample) -> Result<(), SampleError> {
    crate::atomic_file::write_json(&files.record(), sample)
        .map_err(|e| SampleError::Evidence { path: files.record(), source: e })
}

/// Takes one sample. Failures after the server is healthy (a broken stream, a server that dies
/// mid-request, a log without its timing block) still return a `Sample`, with `error` set and
/// every measured field kept; a server that never became healthy, an idle gate that gave up, or
/// an interruption is an `Err`.
pub(crate) async fn run_sample<L: Load>(
    spec: &SampleSpec,
    files: &SampleFiles,
    load: &mut L,
    observer: &mut dyn SampleObserver,
) -> Result<Sample, SampleError> {
    let on_abprof_death =
        if spec.kill_on_stop_timeout { nix::sys::signal::Signal::SIGKILL } else { nix::sys::signal::Signal::SIGTERM };
    run_sample_with(&mut Spawn { on_abprof_death }, spec, files, load, observer).await
}

fn empty_sample(spec: &SampleSpec, server: &impl ServerControl, healthy: Stamp) -> Sample {
    Sample {
        usage: None,
        finish_reason: None,
        expected_prompt_tokens: spec.expected_prompt_tokens,
        max_tokens: 0,
        ignore_eos: false,
        cache_prompt: false,
        server: None,
        draft: None,
        memory: None,
        stream: StreamMetrics::from_record(&StreamRecord::default()),
        timing_blocks: 0,
        request_start: None,
        first_token: None,
        last_token: None,
        response_end: None,
        token_mono_ns: Vec::new(),
        server_started: server.started(),
        server_pid: server.pid(),
        server_argv: spec.launch.argv(),
        startup_ms: Some(server.started().ms_until(&healthy)),
        stop: None,
        timings: None,
        system_fingerprint: None,
        error: None,
        steps: SampleSteps { healthy: Some(healthy), ..Default::default() },
        extra: Default::default(),
    }
}

fn fill_from_stream(sample: &mut Sample, r: &StreamRecord) {
    sample.usage = r.usage.clone();
    sample.finish_reason = r.finish_reason.clone();
    sample.stream = StreamMetrics::from_record(r);
    sample.request_start = r.request_start;
    sample.first_token = r.first_token;
    sample.last_token = r.last_token;
    sample.response_end = r.response_end;
    sample.token_mono_ns = r.token_mono_ns.clone();
    sample.timings = r.timings.clone();
    sample.system_fingerprint = r.system_fingerprint.clone();
}

/// The server log's verdict: its timing block(s) into the record, and an error when their
/// count is not what the load leaves. Every block of the log, for the draft counts' check.
fn read_log<L: Load>(sample: &mut Sample, log: &str, load: &L) -> Vec<TimingBlock> {
    let expected_blocks = load.timing_blocks();
    sample.memory = crate::server::log::server_memory(log);
    match timing_blocks(log) {
        Ok(blocks) => {
            sample.timing_blocks = blocks.len();
            if let Some(timed) = TimingBlock::combined(load.timed_blocks(&blocks)) {
                sample.server = Some(ServerTiming::from(&timed));
                sample.draft = timed.draft;
            }
            if blocks.len() != expected_blocks && sample.error.is_none() {
                sample.error = Some(if blocks.is_empty() {
                    LogError::NoTimingBlock.to_string()
                } else {
                    format!("{} request timing blocks in the server log, expected {expected_blocks}", blocks.len())
                });
            }
            blocks
        }
        Err(e) => {
            sample.error.get_or_insert(e.to_string());
            Vec::new()
        }
    }
}

pub(crate) async fn run_sample_with<S: Launcher, L: Load>(
    launcher: &mut S,
    spec: &SampleSpec,
    files: &SampleFiles,
    load: &mut L,
    observer: &mut dyn SampleObserver,
) -> Result<Sample, SampleError> {
    let evidence = |e| SampleError::Evidence { path: files.dir.clone(), source: e };
    std::fs::create_dir_all(&files.dir).map_err(evidence)?;
    let mut spec = spec.clone();
    (spec.launch.log_file, spec.launch.console_file) = match spec.launch.engine {
        Engine::Server => (files.server_log(), files.console_log()),
        Engine::LlamaBench => (files.bench_output.clone(), files.bench_stderr.clone()),
    };
    let (spec, launch) = (&spec, &spec.launch);
    load.prepare(files, &launch.base_url()).map_err(evidence)?;

    observer.phase(SamplePhase::Starting);
    let client = Client::new(&launch.base_url());
    let mut server = launcher.spawn(launch)?;
    observer.server_started(server.pid());
    load.server_started(server.pid());
    let healthy = match server.wait_healthy(&client, spec.health_timeout).await {
        Ok(t) => t,
        Err(e) => {
            let _ = server.stop(spec.stop_timeout, spec.kill_on_stop_timeout);
            return Err(e.into());
        }
    };
    let mut sample = empty_sample(spec, &server, healthy);
    let warm_up = Stamp::now();
    if let Err(e) = load.warm_up(&client).await {
        sample.error = Some(e);
    }
    sample.steps.warm_up = Some(Span::until_now(warm_up));

    observer.phase(SamplePhase::IdleGate);
    let gate = Stamp::now();
    match tokio::task::block_in_place(|| observer.before_request(server.pid())) {
        Ok(record) => {
            sample.steps.idle_gate = Some(Span::until_now(gate));
            sample.extra.idle_gate = record;
        }
        Err(e) => {
            let _ = server.stop(spec.stop_timeout, spec.kill_on_stop_timeout);
            return Err(match e {
                GateError::Interrupted => SampleError::Interrupted,
                GateError::Failed(why) => SampleError::Gate(why),
            });
        }
    }

    let run = if sample.error.is_none() {
        observer.phase(SamplePhase::Request);
        Some(load.run(&client, files).await)
    } else {
        None
    };
    observer.request_finished();
    // Before the stop, while the threads are there to read (§2.1): a few /proc files, after the
    // timed request.
    if run.is_some() {
        let placement = crate::server::placement::ServerPlacement::read(server.pid(), launch.cpus.clone());
        sample.extra.placement = (!placement.threads.is_empty()).then_some(placement);
        let runtime = crate::runtime_libraries::LoadedRuntime::of_process_tree(server.pid());
        sample.extra.runtime = (!runtime.is_empty()).then_some(runtime);
    }
    // The server's own draft counters, while it runs (§7.18): one GET after the timed work.
    let metrics = if run.is_some() && crate::variant::speculation_requested(&launch.args).is_some() {
        client.metrics().await
    } else {
        None
    };
    let interrupted = run.as_ref().is_some_and(|r| r.interrupted);
    let stream = run.as_ref().and_then(|r| r.stream.as_ref());
    if let Some(r) = stream {
        std::fs::write(files.sse(), &r.raw_sse).map_err(|e| SampleError::Evidence { path: files.sse(), source: e })?;
        fill_from_stream(&mut sample, r);
    }
    if let Some(e) = run.as_ref().and_then(|r| r.error.clone()) {
        sample.error.get_or_insert(e);
    }

    if run.is_some() {
        load.before_stop().await;
    }
    observer.phase(SamplePhase::Stopping);
    let exited_early = server.exited();
    let stop = Stamp::now();
    match server.stop(spec.stop_timeout, spec.kill_on_stop_timeout) {
        Ok(report) => sample.stop = Some(report),
        Err(e) => {
            sample.error.get_or_insert(format!("stopping the server: {e}"));
        }
    }
    sample.steps.stop = Some(Span::until_now(stop));
    // Telemetry work (collecting the sampler, splitting phases) happens while nothing waits on it.
    if run.is_some() {
        sample.extra.telemetry = observer.after_request(stream.unwrap_or(&StreamRecord::default()));
    }
    if interrupted {
        return Err(SampleError::Interrupted);
    }
    if let (Some(status), None, false) = (exited_early, &sample.error, load.ends_itself()) {
        sample.error = Some(format!("the server ended during the request ({status})"));
    }

    // llama-bench prints what it loaded and engaged to stderr; its stdout is its results.
    let log = match launch.engine {
        Engine::Server => files.server_log(),
        Engine::LlamaBench => files.bench_stderr.clone(),
    };
    let log = crate::server::log::read_lossy(&log).unwrap_or_default();
    if let Some(re) = &spec.expect {
        sample.extra.expect = Some(ExpectOutcome { regex: re.as_str().into(), matched: re.is_match(&log) });
    }
    if launch.engine == Engine::Server {
        sample.extra.backend_sampling = super::backend_sampling::prove(&spec.launch.args, &log);
        let blocks = read_log(&mut sample, &log, load);
        sample.extra.spec_metrics = metrics.and_then(|m| super::spec_metrics::of(&m, &blocks));
    }
    load.finish(&mut sample, files);
    save_record(files, &sample)?;
    Ok(sample)
}
