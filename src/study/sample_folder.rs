//! One sample's folder: the paths of its files (their names are `layout.rs`'s), handed down to
//! `measure/` as [`SampleFiles`] so that the floor that writes them names none, and its telemetry
//! series read back by the summary, the report and `abprof timeline`.
use super::layout::{
    device_telemetry_csv, ANSWER_CODE, ANSWER_OUTPUT, BENCH_OUTPUT, BENCH_STDERR, PI_MODELS, PI_SAMPLE_VIEW,
    PI_SETTINGS, PI_STDERR, PI_TRANSCRIPT, REQUEST_FILE, SAMPLE_RECORD, SERVER_CONSOLE, SERVER_LOG, SSE_FILE,
    TELEMETRY_CSV,
};
use crate::measure::{Sample, SampleFiles};
use crate::telemetry::record::TelemetryRecord;
use crate::telemetry::sampler::TelemetrySample;
use std::path::{Path, PathBuf};

/// A sample's folder: `samples/NNN-LABEL/`, `pi/LABEL-N/`, a trace capture's `LABEL/traced/`, an
/// exactness side's, a bench's, or the folder the calibrating server logs into.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SampleFolder {
    dir: PathBuf,
}

impl SampleFolder {
    pub(crate) fn at(dir: &Path) -> SampleFolder {
        SampleFolder { dir: dir.into() }
    }

    /// Every file `measure/` writes for the sample, as the paths it writes them to.
    pub(crate) fn files(&self) -> SampleFiles {
        let at = |name: &str| self.dir.join(name);
        SampleFiles {
            dir: self.dir.clone(),
            server_log: at(SERVER_LOG),
            console_log: at(SERVER_CONSOLE),
            request: at(REQUEST_FILE),
            sse: at(SSE_FILE),
            record: at(SAMPLE_RECORD),
            pi_jsonl: at(PI_TRANSCRIPT),
            pi_stderr: at(PI_STDERR),
            pi_models: at(PI_MODELS),
            pi_settings: at(PI_SETTINGS),
            answer_code: at(ANSWER_CODE),
            answer_output: at(ANSWER_OUTPUT),
            bench_output: at(BENCH_OUTPUT),
            bench_stderr: at(BENCH_STDERR),
        }
    }

    /// The server's log file and its console output, for a server whose folder this is.
    pub(crate) fn server_logs(&self) -> (PathBuf, PathBuf) {
        (self.dir.join(SERVER_LOG), self.dir.join(SERVER_CONSOLE))
    }

    /// `sample.json`, the sample's record.
    pub(crate) fn record(&self) -> PathBuf {
        self.dir.join(SAMPLE_RECORD)
    }

    /// A Pi sample's report view, written by the summary beside the sample's evidence.
    pub(crate) fn pi_view(&self) -> PathBuf {
        self.dir.join(PI_SAMPLE_VIEW)
    }

    /// The name the record gives the series of its `track`-th telemetry track (device `device` of
    /// a server on several GPUs): the first is `telemetry.csv`, as every release has written it.
    pub(super) fn telemetry_csv_name(track: usize, device: Option<u32>) -> String {
        match (track, device) {
            (0, _) | (_, None) => TELEMETRY_CSV.to_string(),
            (_, Some(d)) => device_telemetry_csv(d),
        }
    }

    /// The series file the record names (of a server on several GPUs, its first device's), if any.
    pub(crate) fn telemetry_file(&self, rec: &TelemetryRecord) -> Option<PathBuf> {
        (!rec.csv.is_empty()).then(|| self.dir.join(&rec.csv))
    }

    /// Every series file the record names, with its device: one per device of a server on several
    /// GPUs (docs/methodology.md §9.11), else the one series (no device); empty where none.
    pub(crate) fn telemetry_files(&self, rec: &TelemetryRecord) -> Vec<(Option<u32>, PathBuf)> {
        if rec.csv.is_empty() {
            Vec::new()
        } else if rec.devices.is_empty() {
            vec![(None, self.dir.join(&rec.csv))]
        } else {
            rec.devices.iter().map(|d| (Some(d.index), self.dir.join(&d.csv))).collect()
        }
    }

    /// The sample's telemetry series, empty where none was recorded or a file cannot be read; of a
    /// server on several GPUs, the server's series of its devices' (docs/methodology.md §9.11).
    pub(crate) fn series(&self, sample: &Sample) -> Vec<TelemetrySample> {
        let Some(rec) = sample.extra.telemetry.as_ref() else { return Vec::new() };
        let read = |p: &Path| crate::telemetry::csv::read_series(p).ok();
        match self.telemetry_files(rec).as_slice() {
            [] => Vec::new(),
            [(None, one)] => read(one).unwrap_or_default(),
            each => each
                .iter()
                .map(|(_, p)| read(p))
                .collect::<Option<Vec<_>>>()
                .map(|all| crate::telemetry::sampler::server_series(&all))
                .unwrap_or_default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sample_folder_names_its_files_as_every_release_has() {
        let f = SampleFolder::at(Path::new("/s"));
        let files = f.files();
        assert_eq!(files.server_log(), Path::new("/s/server.log"));
        assert_eq!(files.console_log(), Path::new("/s/server.console.log"));
        assert_eq!(files.record(), Path::new("/s/sample.json"));
        assert_eq!(f.pi_view(), Path::new("/s/pi-sample.json"));
        assert_eq!(SampleFolder::telemetry_csv_name(0, Some(3)), "telemetry.csv");
        assert_eq!(SampleFolder::telemetry_csv_name(1, Some(3)), "telemetry-gpu3.csv");
        assert_eq!(SampleFolder::telemetry_csv_name(1, None), "telemetry.csv");
    }
}
