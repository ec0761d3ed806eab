//! What a study ran on, read once and typed: the study file, the plan, the host's facts and each
//! variant's facts (binary, `--version`, commit, model, argv, env). The summary and the results
//! history (src/history/) both read a study's fingerprint from here.
use crate::study::evidence::{Evidence, Plan};
use crate::study::facts::{HostFacts, VariantFacts};
use crate::study::file::StudyFile;
use anyhow::Result;

#[derive(Debug, Clone)]
pub(crate) struct StudyFacts {
    pub(crate) file: StudyFile,
    pub(crate) plan: Plan,
    /// `host.json`; absent only in a folder whose start was cut short.
    pub(crate) host: Option<HostFacts>,
    /// `variants.json`, one per planned label; empty when it could not be read.
    pub(crate) variants: Vec<VariantFacts>,
    /// Why `host.json` or `variants.json` is missing from the facts although the folder holds it.
    pub(crate) unreadable: Vec<String>,
}

impl StudyFacts {
    pub(crate) fn load(ev: &Evidence) -> Result<StudyFacts> {
        let mut unreadable = Vec::new();
        let mut kept = |present: bool, e: crate::study::evidence::EvidenceError| {
            if present {
                unreadable.push(e.to_string());
            }
        };
        let host = ev.read_host().map_err(|e| kept(ev.has_host(), e)).ok();
        let variants = ev.read_variants().map_err(|e| kept(ev.has_variants(), e)).unwrap_or_default();
        Ok(StudyFacts { file: StudyFile::load(&ev.study_toml())?, plan: ev.read_plan()?, host, variants, unreadable })
    }

    /// An A/A study (`abprof ab --aa`): one variant run against itself as `LABEL-again`.
    pub(crate) fn is_aa(&self) -> bool {
        match self.file.variants.as_slice() {
            [a, b] => crate::variant::aa_copy(a).is_some_and(|copy| *b == copy),
            _ => false,
        }
    }
}

/// The fingerprint of an exactness check.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub(crate) struct ExactnessFacts {
    pub(crate) variants: Vec<VariantFacts>,
    pub(crate) host: HostFacts,
}
