//! The evidence of the two runs that are not studies, laid out here beside the study folder's
//! (`evidence.rs`; every name is `layout.rs`'s), so that no other floor spells a file name:
//!
//! ```text
//! DIR/exactness.json            abprof exactness --root DIR: the report
//! DIR/exactness/facts.json      what its two sides ran on
//! DIR/exactness/prompt.txt      the prompt it calibrated
//! DIR/exactness/LABEL/          each side's sample (a sample folder) and tokens.json
//! DIR/exactness/calibration.*   the calibrating server's logs
//! EVIDENCE/bench.json           abprof bench --evidence EVIDENCE: what it ran on
//! EVIDENCE/server.log, …        its one sample (a sample folder)
//! ```
//!
//! DIR of an exactness check may be an A/B study's folder, whose own `variants.json` and
//! `prompt.txt` it must not touch. The documents' types live a floor up, with their checks; each
//! reader and writer here takes that one type (`documents.rs`).
use super::documents::{BenchFactsDoc, ExactnessFactsDoc, ExactnessReportDoc};
use super::evidence::{read_json, write_json, Evidence, EvidenceError};
use super::layout::{
    BENCH_FACTS, CALIBRATION_CONSOLE, CALIBRATION_LOG, EXACTNESS_DIR, EXACTNESS_FACTS, EXACTNESS_REPORT, PROMPT_FILE,
    TOKENS_FILE,
};
use super::sample_folder::SampleFolder;
use crate::measure::SampleFiles;
use std::path::{Path, PathBuf};

impl Evidence {
    /// The `abprof exactness` evidence run into this study's folder (`exactness.json`,
    /// `exactness/`).
    pub(crate) fn exactness(&self) -> ExactnessFolder {
        ExactnessFolder::at(&self.root)
    }
}

/// Where `abprof exactness --root DIR` keeps its evidence.
#[derive(Debug, Clone)]
pub(crate) struct ExactnessFolder {
    root: PathBuf,
}

impl ExactnessFolder {
    pub(crate) fn at(root: &Path) -> ExactnessFolder {
        ExactnessFolder { root: root.into() }
    }
    /// `DIR/exactness.json`.
    pub(crate) fn report_file(&self) -> PathBuf {
        self.root.join(EXACTNESS_REPORT)
    }
    pub(crate) fn has_report(&self) -> bool {
        self.report_file().is_file()
    }
    pub(crate) fn read_report<R: ExactnessReportDoc>(&self) -> Result<R, EvidenceError> {
        read_json(&self.report_file())
    }
    pub(crate) fn write_report<R: ExactnessReportDoc>(&self, report: &R) -> Result<PathBuf, EvidenceError> {
        let path = self.report_file();
        std::fs::create_dir_all(&self.root).map_err(|e| EvidenceError::Write { path: self.root.clone(), source: e })?;
        write_json(&path, report)?;
        Ok(path)
    }
    fn dir(&self) -> PathBuf {
        self.root.join(EXACTNESS_DIR)
    }
    pub(crate) fn facts_file(&self) -> PathBuf {
        self.dir().join(EXACTNESS_FACTS)
    }
    pub(crate) fn read_facts<F: ExactnessFactsDoc>(&self) -> Result<F, EvidenceError> {
        read_json(&self.facts_file())
    }
    pub(crate) fn write_facts<F: ExactnessFactsDoc>(&self, facts: &F) -> Result<(), EvidenceError> {
        write_json(&self.facts_file(), facts)
    }
    /// The prompt the check calibrated (its calibration record beside it).
    pub(crate) fn prompt_file(&self) -> PathBuf {
        self.dir().join(PROMPT_FILE)
    }
    /// One side's folder: its sample's files and its captured tokens.
    pub(crate) fn side_dir(&self, label: &str) -> PathBuf {
        self.dir().join(label)
    }
    /// One side's sample, as a sample folder.
    pub(crate) fn side(&self, label: &str) -> SampleFolder {
        SampleFolder::at(&self.side_dir(label))
    }
    pub(crate) fn tokens_file(&self, label: &str) -> PathBuf {
        self.side_dir(label).join(TOKENS_FILE)
    }
    /// The calibrating server's log file and console.
    pub(crate) fn calibration_logs(&self) -> (PathBuf, PathBuf) {
        (self.dir().join(CALIBRATION_LOG), self.dir().join(CALIBRATION_CONSOLE))
    }
}

/// Where `abprof bench --evidence EVIDENCE` keeps its one sample and what it ran on.
#[derive(Debug, Clone)]
pub(crate) struct BenchFolder {
    root: PathBuf,
}

impl BenchFolder {
    pub(crate) fn at(root: &Path) -> BenchFolder {
        BenchFolder { root: root.into() }
    }
    /// The sample's own files (a sample folder's layout).
    pub(crate) fn sample(&self) -> SampleFiles {
        SampleFolder::at(&self.root).files()
    }
    fn facts_file(&self) -> PathBuf {
        self.root.join(BENCH_FACTS)
    }
    /// Whether `bench.json` is here: what makes the folder a bench's.
    pub(crate) fn has_facts(&self) -> bool {
        self.facts_file().is_file()
    }
    pub(crate) fn read_facts<F: BenchFactsDoc>(&self) -> Result<F, EvidenceError> {
        read_json(&self.facts_file())
    }
    pub(crate) fn write_facts<F: BenchFactsDoc>(&self, facts: &F) -> Result<(), EvidenceError> {
        write_json(&self.facts_file(), facts)
    }
    /// The sample itself, as measure wrote it.
    pub(crate) fn read_sample(&self) -> Result<crate::measure::Sample, EvidenceError> {
        read_json(&SampleFolder::at(&self.root).record())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_exactness_check_keeps_its_files_apart_from_a_studys() {
        let f = ExactnessFolder::at(Path::new("/s"));
        assert_eq!(f.report_file(), Path::new("/s/exactness.json"));
        assert_eq!(f.facts_file(), Path::new("/s/exactness/facts.json"));
        assert_eq!(f.prompt_file(), Path::new("/s/exactness/prompt.txt"));
        assert_eq!(f.tokens_file("a"), Path::new("/s/exactness/a/tokens.json"));
        assert_eq!(BenchFolder::at(Path::new("/b")).sample().record(), Path::new("/b/sample.json"));
    }
}
