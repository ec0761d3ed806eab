use super::record::{Sample, ServerTiming, StreamMetrics};
use crate::client::{ChatRequest, Client, StreamRecord};
use crate::server::log::{timing_blocks, LogError};
use crate::server::{LaunchSpec, RunningServer, ServerError};
use std::path::{Path, PathBuf};
use std::time::Duration;
use thiserror::Error;

/// One sample to take.
#[derive(Debug, Clone)]
pub struct SampleSpec {
    pub launch: LaunchSpec,
    pub request: ChatRequest,
    pub expected_prompt_tokens: Option<u64>,
    pub health_timeout: Duration,
    pub stop_timeout: Duration,
    /// SIGKILL the process group if it outlives `stop_timeout`; false for a tracer, whose output
    /// a kill would destroy.
    pub kill_on_stop_timeout: bool,
    /// Pure-decode: send the prompt once (max_tokens 1, cache on) before the timed request, so
    /// the timed one decodes with the full-length KV in place and no prefill.
    pub warm_prompt_cache: bool,
    /// A regex that must appear in the server log to prove a feature engaged (a variant's
    /// `expect=`); the outcome is recorded in `Sample::extra["expect"]`.
    pub expect: Option<regex::Regex>,
}

/// Where one sample's evidence goes.
#[derive(Debug, Clone)]
pub struct SampleFiles {
    pub dir: PathBuf,
}

impl SampleFiles {
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        SampleFiles { dir: dir.into() }
    }
    pub fn server_log(&self) -> PathBuf {
        self.dir.join("server.log")
    }
    pub fn console_log(&self) -> PathBuf {
        self.dir.join("server.console.log")
    }
    pub fn request(&self) -> PathBuf {
        self.dir.join("request.json")
    }
    pub fn sse(&self) -> PathBuf {
        self.dir.join("response.sse")
    }
    pub fn record(&self) -> PathBuf {
        self.dir.join("sample.json")
    }
}

/// Where a sample is, for progress displays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SamplePhase {
    Starting,
    IdleGate,
    Request,
    Stopping,
}

impl SamplePhase {
    pub fn name(self) -> &'static str {
        match self {
            SamplePhase::Starting => "start+health",
            SamplePhase::IdleGate => "idle gate",
            SamplePhase::Request => "request",
            SamplePhase::Stopping => "stop",
        }
    }
}

/// Hooks a study plugs into a sample: the idle gate and telemetry around the request.
pub trait SampleObserver {
    fn phase(&mut self, _phase: SamplePhase) {}
    /// Between health and the request; blocks until the GPU (or the server's CPU) is idle.
    /// What it returns is stored in `Sample::extra["idle_gate"]`.
    fn before_request(&mut self, _server_pid: u32) -> Result<serde_json::Value, String> {
        Ok(serde_json::Value::Null)
    }
    /// The moment the request's response has ended, before the server is stopped: cheap work
    /// only (mark the end of measurement); the server's shutdown is not part of the request.
    fn request_finished(&mut self) {}
    /// After the request and the server's stop; stored in `Sample::extra["telemetry"]`.
    fn after_request(&mut self, _record: &StreamRecord) -> serde_json::Value {
        serde_json::Value::Null
    }
}

/// No gate, no telemetry.
pub struct NoObserver;
impl SampleObserver for NoObserver {}

#[derive(Debug, Error)]
pub enum SampleError {
    /// The server could not be started or never became healthy: nothing was measured.
    #[error(transparent)]
    Start(#[from] ServerError),
    #[error("could not write evidence {path}: {source}")]
    Evidence { path: PathBuf, source: std::io::Error },
    #[error("idle gate: {0}")]
    Gate(String),
}

fn write(path: &Path, bytes: &[u8]) -> Result<(), SampleError> {
    std::fs::write(path, bytes).map_err(|e| SampleError::Evidence { path: path.into(), source: e })
}

/// Writes `sample.json` atomically (temp file + rename): a reader never sees half a record.
pub fn save_record(files: &SampleFiles, sample: &Sample) -> Result<(), SampleError> {
    crate::atomic_file::write_json(&files.record(), sample)
        .map_err(|e| SampleError::Evidence { path: files.record(), source: e })
}

/// Takes one sample. Failures after the server is healthy (a broken stream, a server that dies
/// mid-request, a log without its timing block) still return a `Sample`, with `error` set and
/// every measured field kept; only a server that never became healthy is an `Err`.
pub async fn run_sample(
    spec: &SampleSpec,
    files: &SampleFiles,
    observer: &mut dyn SampleObserver,
) -> Result<Sample, SampleError> {
    std::fs::create_dir_all(&files.dir).map_err(|e| SampleError::Evidence { path: files.dir.clone(), source: e })?;
    let mut launch = spec.launch.clone();
    launch.log_file = files.server_log();
    launch.console_file = files.console_log();
    write(&files.request(), (serde_json::to_string_pretty(&spec.request).expect("serializable") + "\n").as_bytes())?;

    observer.phase(SamplePhase::Starting);
    let client = Client::new(&launch.base_url());
    let mut server = RunningServer::spawn(&launch)?;
    let healthy = server.wait_healthy(&client, spec.health_timeout).await?;
    let mut sample = Sample {
        usage: None,
        finish_reason: None,
        expected_prompt_tokens: spec.expected_prompt_tokens,
        max_tokens: spec.request.max_tokens,
        ignore_eos: spec.request.ignore_eos.unwrap_or(false),
        cache_prompt: spec.request.cache_prompt,
        server: None,
        draft: None,
        stream: StreamMetrics::from_record(&StreamRecord::default()),
        timing_blocks: 0,
        request_start: None,
        first_token: None,
        last_token: None,
        response_end: None,
        server_started: server.started,
        server_pid: server.pid,
        startup_ms: Some(server.started.ms_until(&healthy)),
        stop: None,
        timings: None,
        system_fingerprint: None,
        error: None,
        extra: serde_json::json!({}),
    };

    if spec.warm_prompt_cache {
        let mut warm = spec.request.clone();
        warm.max_tokens = 1;
        warm.cache_prompt = true;
        if let Err(e) = client.chat_stream(&warm).await {
            sample.error = Some(format!("prompt-cache warm-up request failed: {e}"));
        }
    }

    observer.phase(SamplePhase::IdleGate);
    let gate = tokio::task::block_in_place(|| observer.before_request(server.pid));
    match gate {
        Ok(v) => sample.extra["idle_gate"] = v,
        Err(e) => {
            drop(server);
            return Err(SampleError::Gate(e));
        }
    }

    let record = if sample.error.is_none() {
        observer.phase(SamplePhase::Request);
        match client.chat_stream(&spec.request).await {
            Ok(r) => Some(r),
            Err(e) => {
                sample.error = Some(e.to_string());
                e.partial().cloned().or(Some(StreamRecord::default()))
            }
        }
    } else {
        None
    };
    observer.request_finished();
    if let Some(r) = &record {
        write(&files.sse(), &r.raw_sse)?;
        sample.usage = r.usage.clone();
        sample.finish_reason = r.finish_reason.clone();
        sample.stream = StreamMetrics::from_record(r);
        sample.request_start = r.request_start;
        sample.first_token = r.first_token;
        sample.last_token = r.last_token;
        sample.response_end = r.response_end;
        sample.timings = r.timings.clone();
        sample.system_fingerprint = r.system_fingerprint.clone();
    }

    observer.phase(SamplePhase::Stopping);
    let exited_early = server.exited();
    match server.stop_with(spec.stop_timeout, spec.kill_on_stop_timeout) {
        Ok(report) => sample.stop = Some(report),
        Err(e) => {
            sample.error.get_or_insert(format!("stopping the server: {e}"));
        }
    }
    if let (Some(status), None) = (exited_early, &sample.error) {
        sample.error = Some(format!("the server ended during the request ({status})"));
    }
    // Telemetry work (collecting the sampler, splitting phases) happens while nothing waits on it.
    if let Some(r) = &record {
        sample.extra["telemetry"] = observer.after_request(r);
    }

    let log = std::fs::read_to_string(files.server_log()).unwrap_or_default();
    if let Some(re) = &spec.expect {
        sample.extra["expect"] = serde_json::json!({ "regex": re.as_str(), "matched": re.is_match(&log) });
    }
    let expected_blocks = if spec.warm_prompt_cache { 2 } else { 1 };
    match timing_blocks(&log) {
        Ok(blocks) => {
            sample.timing_blocks = blocks.len();
            if let Some(last) = blocks.last() {
                sample.server = Some(ServerTiming::from(last));
                sample.draft = last.draft.clone();
            }
            if blocks.len() != expected_blocks && sample.error.is_none() {
                let why = if blocks.is_empty() {
                    LogError::NoTimingBlock.to_string()
                } else {
                    format!("{} request timing blocks in the server log, expected {expected_blocks}", blocks.len())
                };
                sample.error = Some(why);
            }
        }
        Err(e) => {
            sample.error.get_or_insert(e.to_string());
        }
    }
    save_record(files, &sample)?;
    Ok(sample)
}
