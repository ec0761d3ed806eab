//! Where one sample's evidence goes: every file a sample writes is named here.
use std::path::PathBuf;

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
    /// Pi's JSON-lines transcript.
    pub fn pi_jsonl(&self) -> PathBuf {
        self.dir.join("pi.jsonl")
    }
    pub fn pi_stderr(&self) -> PathBuf {
        self.dir.join("pi.stderr")
    }
}
