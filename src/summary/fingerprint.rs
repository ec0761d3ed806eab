//! What an exactness check ran on (a study's own facts are read with its folder:
//! `study::StudyFacts`).
use crate::study::evidence::EvidenceError;
use crate::study::facts::{HostFacts, VariantFacts};

/// The fingerprint of an exactness check.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub(crate) struct ExactnessFacts {
    pub(crate) variants: Vec<VariantFacts>,
    pub(crate) host: HostFacts,
}

impl ExactnessFacts {
    /// What the check in `folder` ran on, typed here: the folder's reader is generic, as this
    /// type lives a floor above it.
    pub(crate) fn read(folder: &crate::study::run_folders::ExactnessFolder) -> Result<ExactnessFacts, EvidenceError> {
        folder.read_facts()
    }
}
