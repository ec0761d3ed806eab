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

impl SampleFiles {
    /// The telemetry series `sample` recorded in this folder, empty where it recorded none or
    /// its file cannot be read; of a server on several GPUs, the server's series of its devices'
    /// (docs/methodology.md §9.11).
    pub(crate) fn series(&self, sample: &super::Sample) -> Vec<crate::telemetry::sampler::TelemetrySample> {
        let read = |csv: &str| crate::telemetry::csv::read_series(&self.dir.join(csv)).ok();
        match sample.extra.telemetry.as_ref().filter(|t| !t.csv.is_empty()) {
            Some(t) if !t.devices.is_empty() => t
                .devices
                .iter()
                .map(|d| read(&d.csv))
                .collect::<Option<Vec<_>>>()
                .map(|each| crate::telemetry::sampler::server_series(&each))
                .unwrap_or_default(),
            Some(t) => read(&t.csv).unwrap_or_default(),
            None => Vec::new(),
        }
    }
}
