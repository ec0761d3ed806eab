//! ONE Pi sample (docs/methodology.md §11): the variant's server started cold on its own port,
//! `/health`, then the whole `pi … --no-session --mode json -p PROMPT` process timed, the server
//! stopped, its log required to hold exactly one request, the JSONL read, the answer's Python run.
use super::agent_dir::{write_agent_dir, AgentModel, MODEL_ID, PROVIDER};
use super::answer::{judge_answer, CodeRun};
use super::error::PiError;
use super::process::{run_timed, TimedExit};
use super::python::CodeCheck;
use crate::client::{Client, StreamRecord};
use crate::measure::ServerTiming;
use crate::measure::{SampleObserver, SamplePhase};
use crate::server::log::{timing_blocks, DraftAcceptance};
use crate::server::{free_port, LaunchSpec, RunningServer};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// What every sample of a Pi run shares.
#[derive(Debug, Clone)]
pub struct PiSettings {
    pub pi_bin: PathBuf,
    pub prompt: String,
    pub model: AgentModel,
    /// Bound on the whole pi process.
    pub timeout: Duration,
    pub python: PathBuf,
    pub code_timeout: Duration,
    pub health_timeout: Duration,
    pub stop_timeout: Duration,
    /// Run the answer's Python (the decode workload's validity check).
    pub check_code: bool,
}

/// One measured Pi sample; every field a summary needs.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PiSample {
    pub index: usize,
    pub label: String,
    /// The how-many-th sample of this variant (0-based).
    pub repeat: usize,
    pub evidence: PathBuf,
    /// The whole pi process, spawn to exit (model load excluded: it starts after /health).
    pub pi_wall_ms: f64,
    pub pi_exit: TimedExit,
    pub startup_ms: Option<f64>,
    pub timing_blocks: usize,
    pub server: Option<ServerTiming>,
    pub draft: Option<DraftAcceptance>,
    /// Pi's usage of its answer (the server's counts are in `server`).
    pub pi_input_tokens: Option<u64>,
    pub pi_output_tokens: Option<u64>,
    pub stop_reason: Option<String>,
    pub assistant_messages: usize,
    pub tool_calls: Vec<String>,
    pub answer_chars: usize,
    pub code: Option<CodeCheck>,
    /// No failure below: one request, no tool call, pi exited 0, the Python passed.
    pub valid: bool,
    pub failures: Vec<String>,
    pub pi_argv: Vec<String>,
    pub server_argv: Vec<String>,
    /// What the idle gate saw before pi started (source, readings, threshold, time waited).
    #[serde(default)]
    pub idle_gate: serde_json::Value,
    /// The telemetry series over the pi run (GPU, or the server's CPU on GPU-less hosts).
    #[serde(default)]
    pub telemetry: serde_json::Value,
}

impl PiSample {
    pub fn output_tokens(&self) -> Option<u64> {
        self.server.as_ref().map(|s| s.decode_tokens).or(self.pi_output_tokens)
    }
}

/// The files of one sample, under `ROOT/pi/LABEL-N/`.
pub struct PiSampleFiles {
    pub dir: PathBuf,
}

impl PiSampleFiles {
    pub fn jsonl(&self) -> PathBuf {
        self.dir.join("pi.jsonl")
    }
    pub fn stderr(&self) -> PathBuf {
        self.dir.join("pi.stderr")
    }
    pub fn server_log(&self) -> PathBuf {
        self.dir.join("server.log")
    }
    pub fn console_log(&self) -> PathBuf {
        self.dir.join("server.console.log")
    }
    pub fn record(&self) -> PathBuf {
        self.dir.join("pi-sample.json")
    }
}

/// `ROOT/pi/LABEL-N/`, N counting from 1.
pub fn sample_dir(root: &Path, label: &str, repeat: usize) -> PathBuf {
    root.join("pi").join(format!("{label}-{}", repeat + 1))
}

fn evidence_err(path: &Path) -> impl FnOnce(std::io::Error) -> PiError + '_ {
    move |e| PiError::Evidence { path: path.to_path_buf(), source: e }
}

fn pi_command(settings: &PiSettings, agent_dir: &Path, work: &Path) -> Command {
    let mut c = Command::new(&settings.pi_bin);
    c.args(["--offline", "--provider", PROVIDER, "--model", MODEL_ID, "--no-session", "--mode", "json", "-p"])
        .arg(&settings.prompt)
        .env("PI_CODING_AGENT_DIR", agent_dir)
        .env("PI_CODING_AGENT_SESSION_DIR", work.join(".sessions"))
        .env("PI_OFFLINE", "1")
        .env("PI_TELEMETRY", "0")
        .env("PI_SKIP_VERSION_CHECK", "1")
        // An empty folder of its own: no project AGENTS.md or .pi settings, and nothing of the
        // user's for a tool call to touch.
        .current_dir(work)
        .stdin(Stdio::null());
    c
}

fn argv_of(c: &Command) -> Vec<String> {
    std::iter::once(c.get_program()).chain(c.get_args()).map(|s| s.to_string_lossy().into_owned()).collect()
}

/// Where a sample is in the study's order.
#[derive(Debug, Clone, Copy)]
pub struct PiSlot<'a> {
    pub index: usize,
    pub label: &'a str,
    pub repeat: usize,
}

/// Takes one sample of `launch` (its port and log paths are replaced by the sample's own).
/// `observer` gates pi's start on an idle GPU (or server CPU) and records telemetry over the
/// run, as in `abprof ab`. A server that never becomes healthy, an idle gate that times out, or
/// `cancel` set during the run is an `Err`; everything else is a sample, with its failures listed.
pub async fn run_pi_sample(
    slot: PiSlot<'_>,
    launch: &LaunchSpec,
    settings: &PiSettings,
    root: &Path,
    observer: &mut dyn SampleObserver,
    cancel: &AtomicBool,
) -> Result<PiSample, PiError> {
    let PiSlot { index, label, repeat } = slot;
    let files = PiSampleFiles { dir: sample_dir(root, label, repeat) };
    std::fs::create_dir_all(&files.dir).map_err(evidence_err(&files.dir))?;
    let mut launch = launch.clone();
    launch.port = free_port(&launch.host).map_err(evidence_err(&files.dir))?;
    launch.log_file = files.server_log();
    launch.console_file = files.console_log();

    let scratch = tempfile::tempdir().map_err(evidence_err(&files.dir))?;
    let agent_dir = scratch.path().join("agent");
    let work = scratch.path().join("work");
    std::fs::create_dir_all(&work).map_err(evidence_err(&work))?;
    write_agent_dir(&agent_dir, &launch.base_url(), settings.model).map_err(evidence_err(&agent_dir))?;
    for f in ["models.json", "settings.json"] {
        std::fs::copy(agent_dir.join(f), files.dir.join(format!("pi-{f}"))).map_err(evidence_err(&files.dir))?;
    }

    let client = Client::new(&launch.base_url());
    let mut server = RunningServer::spawn(&launch).map_err(|e| PiError::Server { label: label.into(), source: e })?;
    let healthy = server
        .wait_healthy(&client, settings.health_timeout)
        .await
        .map_err(|e| PiError::Server { label: label.into(), source: e })?;
    observer.phase(SamplePhase::IdleGate);
    let idle_gate = tokio::task::block_in_place(|| observer.before_request(server.pid))
        .map_err(|e| PiError::IdleGate { label: label.into(), reason: e })?;

    // A signal during start-up or the gate: stop here rather than start pi (dropping the server
    // stops it).
    if cancel.load(std::sync::atomic::Ordering::SeqCst) {
        return Err(PiError::Interrupted);
    }
    observer.phase(SamplePhase::Request);
    let mut cmd = pi_command(settings, &agent_dir, &work);
    let pi_argv = argv_of(&cmd);
    let out = std::fs::File::create(files.jsonl()).map_err(evidence_err(&files.dir))?;
    let err = std::fs::File::create(files.stderr()).map_err(evidence_err(&files.dir))?;
    cmd.stdout(out).stderr(err);
    let run = tokio::task::block_in_place(|| run_timed(&mut cmd, settings.timeout, cancel))
        .map_err(|e| PiError::PiSpawn { bin: settings.pi_bin.clone(), source: e })?;
    observer.request_finished();

    let mut failures = Vec::new();
    let exited_early = server.exited();
    observer.phase(SamplePhase::Stopping);
    if let Err(e) = server.stop(settings.stop_timeout) {
        failures.push(format!("stopping the server: {e}"));
    }
    // No stream stamps for pi: the series is kept whole, not split into prefill and decode.
    let telemetry = observer.after_request(&StreamRecord::default());
    if run.exit == TimedExit::Interrupted {
        return Err(PiError::Interrupted);
    }
    if let Some(status) = exited_early {
        failures.push(format!("the server ended during the Pi run ({status})"));
    }
    match run.exit {
        TimedExit::TimedOut => failures.push(format!("pi ran past the {} s timeout", settings.timeout.as_secs())),
        e if !e.success() => failures.push(format!("pi {} (see {})", e.describe(), files.stderr().display())),
        _ => {}
    }

    let log = std::fs::read_to_string(files.server_log()).unwrap_or_default();
    let (blocks, server_timing, draft) = match timing_blocks(&log) {
        Ok(b) => {
            if b.len() != 1 {
                failures.push(format!(
                    "{} request timing blocks in the server log, expected exactly one (a retry, a tool call's follow-up or a compaction request?)",
                    b.len()
                ));
            }
            (b.len(), b.last().map(ServerTiming::from), b.last().and_then(|x| x.draft.clone()))
        }
        // The parse error says what is wrong with the log; a block count would repeat it.
        Err(e) => {
            failures.push(e.to_string());
            (0, None, None)
        }
    };

    let jsonl = std::fs::read_to_string(files.jsonl()).unwrap_or_default();
    let code_run = settings.check_code.then_some(CodeRun {
        python: &settings.python,
        timeout: settings.code_timeout,
        evidence: &files.dir,
    });
    let answer = tokio::task::block_in_place(|| judge_answer(&jsonl, code_run));
    failures.extend(answer.failures);
    let (transcript, code) = (answer.transcript, answer.code);

    let sample = PiSample {
        index,
        label: label.into(),
        repeat,
        evidence: files.dir.clone(),
        pi_wall_ms: run.wall_ms,
        pi_exit: run.exit,
        startup_ms: Some(server.started.ms_until(&healthy)),
        timing_blocks: blocks,
        server: server_timing,
        draft,
        pi_input_tokens: transcript.as_ref().and_then(|t| t.input_tokens),
        pi_output_tokens: transcript.as_ref().and_then(|t| t.output_tokens),
        stop_reason: transcript.as_ref().and_then(|t| t.stop_reason.clone()),
        assistant_messages: transcript.as_ref().map_or(0, |t| t.assistant_messages),
        tool_calls: transcript.as_ref().map(|t| t.tool_calls.clone()).unwrap_or_default(),
        answer_chars: transcript.as_ref().map_or(0, |t| t.text.chars().count()),
        code,
        valid: failures.is_empty(),
        failures,
        pi_argv,
        server_argv: launch.argv(),
        idle_gate,
        telemetry,
    };
    let json = serde_json::to_string_pretty(&sample).expect("serializable") + "\n";
    std::fs::write(files.record(), json).map_err(evidence_err(&files.dir))?;
    Ok(sample)
}
