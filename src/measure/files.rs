//! Where one sample's evidence goes: the path of every file a sample writes, given by the study's
//! layout (src/study/sample_folder.rs), which names them; `measure/` names none.
use std::path::PathBuf;

#[derive(Debug, Clone)]
pub(crate) struct SampleFiles {
    pub(crate) dir: PathBuf,
    pub(crate) server_log: PathBuf,
    pub(crate) console_log: PathBuf,
    pub(crate) request: PathBuf,
    pub(crate) sse: PathBuf,
    pub(crate) record: PathBuf,
    /// Pi's JSON-lines transcript and its stderr.
    pub(crate) pi_jsonl: PathBuf,
    pub(crate) pi_stderr: PathBuf,
    /// Copies of the agent configuration Pi ran with.
    pub(crate) pi_models: PathBuf,
    pub(crate) pi_settings: PathBuf,
    /// The Python a Pi answer held, and what running it printed.
    pub(crate) answer_code: PathBuf,
    pub(crate) answer_output: PathBuf,
    /// A llama-bench sample's stdout (its JSONL results) and stderr.
    pub(crate) bench_output: PathBuf,
    pub(crate) bench_stderr: PathBuf,
}

impl SampleFiles {
    pub(crate) fn server_log(&self) -> PathBuf {
        self.server_log.clone()
    }
    pub(crate) fn console_log(&self) -> PathBuf {
        self.console_log.clone()
    }
    pub(crate) fn request(&self) -> PathBuf {
        self.request.clone()
    }
    pub(crate) fn sse(&self) -> PathBuf {
        self.sse.clone()
    }
    pub(crate) fn record(&self) -> PathBuf {
        self.record.clone()
    }
    pub(crate) fn pi_jsonl(&self) -> PathBuf {
        self.pi_jsonl.clone()
    }
    pub(crate) fn pi_stderr(&self) -> PathBuf {
        self.pi_stderr.clone()
    }

    /// A sample's files under `dir` with names of the test's own: a unit test of this floor may
    /// not ask the study's layout above.
    #[cfg(test)]
    pub(crate) fn for_test(dir: impl Into<PathBuf>) -> Self {
        let dir: PathBuf = dir.into();
        let at = |name: &str| dir.join(name);
        SampleFiles {
            server_log: at("server.log"),
            console_log: at("server.console.log"),
            request: at("request.json"),
            sse: at("response.sse"),
            record: at("sample.json"),
            pi_jsonl: at("pi.jsonl"),
            pi_stderr: at("pi.stderr"),
            pi_models: at("pi-models.json"),
            pi_settings: at("pi-settings.json"),
            answer_code: at("answer.py"),
            answer_output: at("answer.out"),
            bench_output: at("llama-bench.jsonl"),
            bench_stderr: at("llama-bench.stderr"),
            dir,
        }
    }
}
