//! Where one sample's evidence goes: every file a sample writes is named here.
use std::path::PathBuf;

#[derive(Debug, Clone)]
pub(crate) struct SampleFiles {
    pub(crate) dir: PathBuf,
}

impl SampleFiles {
    pub(crate) fn new(dir: impl Into<PathBuf>) -> Self {
        SampleFiles { dir: dir.into() }
    }
    pub(crate) fn server_log(&self) -> PathBuf {
        self.dir.join("server.log")
    }
    pub(crate) fn console_log(&self) -> PathBuf {
        self.dir.join("server.console.log")
    }
    pub(crate) fn request(&self) -> PathBuf {
        self.dir.join("request.json")
    }
    pub(crate) fn sse(&self) -> PathBuf {
        self.dir.join("response.sse")
    }
    pub(crate) fn record(&self) -> PathBuf {
        self.dir.join("sample.json")
    }
    /// Pi's JSON-lines transcript.
    pub(crate) fn pi_jsonl(&self) -> PathBuf {
        self.dir.join("pi.jsonl")
    }
    pub(crate) fn pi_stderr(&self) -> PathBuf {
        self.dir.join("pi.stderr")
    }
    /// A Pi sample's report view, written by the summary beside the sample's evidence.
    pub(crate) fn pi_view(&self) -> PathBuf {
        self.dir.join("pi-sample.json")
    }
}
