//! One Pi run as a [`Load`]: the agent's configuration is written before the server starts, the
//! process runs in its own process group between the idle gate and the server's stop, and its
//! transcript and answer are judged before the record is written.
use super::files::SampleFiles;
use super::load::{Load, LoadRun};
use super::pi::agent_dir::{agent_files, write_agent_dir, AgentModel, MODEL_ID, PROVIDER};
use super::pi::{judge_answer, CodeRun};
use super::record::{PiRun, Sample};
use crate::child::{run_watched, StallWatch, TimedExit, TimedRun};
use crate::client::Client;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// What every Pi sample of a study shares.
#[derive(Debug, Clone)]
pub(crate) struct PiSettings {
    pub(crate) pi_bin: PathBuf,
    pub(crate) prompt: String,
    pub(crate) model: AgentModel,
    /// Bound on the whole pi process.
    pub(crate) timeout: Duration,
    /// Pi streams one JSON event per chunk the server sends: this long without a new byte of
    /// its output, the run has stalled (the study's stall timeout, docs/methodology.md §2, §11).
    pub(crate) stall_timeout: Duration,
    pub(crate) python: PathBuf,
    pub(crate) code_timeout: Duration,
    /// Run the answer's Python (the decode workload's validity check).
    pub(crate) check_code: bool,
}

pub(crate) struct PiLoad {
    settings: PiSettings,
    /// Set by the study's signal listener: pi's process group is ended and the sample discarded.
    cancel: Arc<AtomicBool>,
    /// Pi's configuration and working folder, private to this sample.
    scratch: Option<tempfile::TempDir>,
    run: Option<(TimedRun, Vec<String>)>,
}

impl PiLoad {
    pub(crate) fn new(settings: PiSettings, cancel: Arc<AtomicBool>) -> PiLoad {
        PiLoad { settings, cancel, scratch: None, run: None }
    }

    fn command(&self, scratch: &Path) -> Command {
        let mut c = Command::new(&self.settings.pi_bin);
        c.args(["--offline", "--provider", PROVIDER, "--model", MODEL_ID, "--no-session", "--mode", "json", "-p"])
            .arg(&self.settings.prompt)
            .env("PI_CODING_AGENT_DIR", scratch.join("agent"))
            .env("PI_CODING_AGENT_SESSION_DIR", scratch.join("work/.sessions"))
            .env("PI_OFFLINE", "1")
            .env("PI_TELEMETRY", "0")
            .env("PI_SKIP_VERSION_CHECK", "1")
            // An empty folder of its own: no project AGENTS.md or .pi settings, and nothing of the
            // user's for a tool call to touch.
            .current_dir(scratch.join("work"))
            .stdin(Stdio::null());
        c
    }
}

fn argv_of(c: &Command) -> Vec<String> {
    std::iter::once(c.get_program()).chain(c.get_args()).map(|s| s.to_string_lossy().into_owned()).collect()
}

impl Load for PiLoad {
    fn prepare(&mut self, files: &SampleFiles, base_url: &str) -> std::io::Result<()> {
        let scratch = tempfile::tempdir()?;
        let agent_dir = scratch.path().join("agent");
        std::fs::create_dir_all(scratch.path().join("work"))?;
        write_agent_dir(&agent_dir, base_url, self.settings.model)?;
        let (models, settings) = agent_files(&agent_dir);
        std::fs::copy(models, &files.pi_models)?;
        std::fs::copy(settings, &files.pi_settings)?;
        self.scratch = Some(scratch);
        Ok(())
    }

    async fn run(&mut self, _client: &Client, files: &SampleFiles) -> LoadRun {
        // A signal during start-up or the gate: stop here rather than start pi.
        if self.cancel.load(Ordering::SeqCst) {
            return LoadRun { interrupted: true, ..LoadRun::default() };
        }
        let scratch = self.scratch.as_ref().expect("prepare ran").path().to_path_buf();
        let mut cmd = self.command(&scratch);
        let argv = argv_of(&cmd);
        let spawned = std::fs::File::create(files.pi_jsonl())
            .and_then(|out| Ok((out, std::fs::File::create(files.pi_stderr())?)))
            .and_then(|(out, err)| {
                cmd.stdout(out).stderr(err);
                let stall = StallWatch { output: files.pi_jsonl(), after: self.settings.stall_timeout };
                tokio::task::block_in_place(|| run_watched(&mut cmd, self.settings.timeout, Some(&stall), &self.cancel))
            });
        match spawned {
            Ok(run) => {
                let interrupted = run.exit == TimedExit::Interrupted;
                self.run = Some((run, argv));
                LoadRun { interrupted, ..LoadRun::default() }
            }
            Err(e) => LoadRun {
                error: Some(format!("could not start pi ({}): {e}", self.settings.pi_bin.display())),
                ..LoadRun::default()
            },
        }
    }

    fn finish(&mut self, sample: &mut Sample, files: &SampleFiles) {
        sample.max_tokens = self.settings.model.max_tokens;
        let Some((run, pi_argv)) = self.run.take() else { return };
        let jsonl = std::fs::read_to_string(files.pi_jsonl()).unwrap_or_default();
        let code_run = self.settings.check_code.then(|| CodeRun {
            python: &self.settings.python,
            timeout: self.settings.code_timeout,
            code: files.answer_code.clone(),
            output: files.answer_output.clone(),
        });
        let answer = tokio::task::block_in_place(|| judge_answer(&jsonl, code_run));
        let t = answer.transcript.as_ref();
        sample.extra.pi = Some(PiRun {
            pi_wall_ms: run.wall_ms,
            pi_exit: run.exit,
            pi_argv,
            pi_input_tokens: t.and_then(|t| t.input_tokens),
            pi_output_tokens: t.and_then(|t| t.output_tokens),
            stop_reason: t.and_then(|t| t.stop_reason.clone()),
            assistant_messages: t.map_or(0, |t| t.assistant_messages),
            tool_calls: t.map(|t| t.tool_calls.clone()).unwrap_or_default(),
            answer_chars: t.map_or(0, |t| t.text.chars().count()),
            code: answer.code,
            answer_failures: answer.failures,
        });
    }
}
