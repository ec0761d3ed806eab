//! The evidence of the runs that are not studies, laid out here beside the study folder's
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
//! DIR/bisect.json               abprof bisect --root DIR: the log, every build and step
//! DIR/bisect-log.txt            `git bisect log` (git bisect replay re-runs it)
//! DIR/source.patch              the patch every build applied, when one was given
//! DIR/steps/00-bad/             the reference A/B: good against bad
//! DIR/steps/NN-SHA12/           one A/B study folder per probed commit that built
//! DIR/worktree/                 git's bisect state while it runs; removed on every way out
//! ```
//!
//! DIR of an exactness check may be an A/B study's folder, whose own `variants.json` and
//! `prompt.txt` it must not touch. The documents' types live a floor up, with their checks; each
//! reader and writer here takes that one type (`documents.rs`).
use super::documents::{BenchFactsDoc, BisectLogDoc, ExactnessFactsDoc, ExactnessReportDoc};
use super::evidence::{read_json, write_json, Evidence, EvidenceError};
use super::layout::{
    BENCH_FACTS, BISECT_GIT_LOG, BISECT_LOG, BISECT_PATCH, CALIBRATION_CONSOLE, CALIBRATION_LOG, EXACTNESS_DIR,
    EXACTNESS_FACTS, EXACTNESS_REPORT, PROMPT_FILE, STEPS_DIR, TOKENS_FILE, WORKTREE_DIR,
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
        self.sample_folder().files()
    }
    /// The folder of its one sample: the bench's folder itself.
    pub(crate) fn sample_folder(&self) -> SampleFolder {
        SampleFolder::at(&self.root)
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

/// Where `abprof bisect --root DIR` keeps its log, its git state and one A/B study per step.
#[derive(Debug, Clone)]
pub(crate) struct BisectFolder {
    root: PathBuf,
}

impl BisectFolder {
    pub(crate) fn at(root: &Path) -> BisectFolder {
        BisectFolder { root: root.into() }
    }
    /// `bisect.json`, the log.
    pub(crate) fn log_file(&self) -> PathBuf {
        self.root.join(BISECT_LOG)
    }
    /// Writes the log atomically (temp file + rename): a bisect killed mid-step keeps the last one.
    pub(crate) fn write_log<L: BisectLogDoc>(&self, log: &L) -> std::io::Result<()> {
        crate::atomic_file::write_json(&self.log_file(), log)
    }
    /// `bisect-log.txt`: `git bisect log`.
    pub(crate) fn git_log_file(&self) -> PathBuf {
        self.root.join(BISECT_GIT_LOG)
    }
    /// `source.patch`: the copy of the patch every build applies.
    pub(crate) fn patch_copy(&self) -> PathBuf {
        self.root.join(BISECT_PATCH)
    }
    /// `steps/`, which holds one study folder per step.
    pub(crate) fn steps_dir(&self) -> PathBuf {
        self.root.join(STEPS_DIR)
    }
    /// Where git keeps the bisect's state while it runs.
    pub(crate) fn worktree(&self) -> PathBuf {
        self.root.join(WORKTREE_DIR)
    }
    /// Step `index`'s study folder relative to the bisect's, as the log keeps it: `steps/00-bad`
    /// for the reference, `steps/NN-SHA12` for a probe.
    pub(crate) fn step_rel(index: usize, name: &str) -> String {
        format!("{STEPS_DIR}/{index:02}-{name}")
    }
    /// A step's study folder, from its folder as the log keeps it ([`BisectFolder::step_rel`]).
    pub(crate) fn step(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
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
        let b = BisectFolder::at(Path::new("/x"));
        assert_eq!(b.log_file(), Path::new("/x/bisect.json"));
        assert_eq!(b.git_log_file(), Path::new("/x/bisect-log.txt"));
        assert_eq!(b.step(&BisectFolder::step_rel(0, "bad")), Path::new("/x/steps/00-bad"));
        assert_eq!(BisectFolder::step_rel(7, "0123456789ab"), "steps/07-0123456789ab");
    }
}
