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

/// The one type an exactness check's facts file holds.
impl crate::study::documents::ExactnessFactsDoc for ExactnessFacts {}

impl ExactnessFacts {
    /// What the check in `folder` ran on.
    pub(crate) fn read(folder: &crate::study::run_folders::ExactnessFolder) -> Result<ExactnessFacts, EvidenceError> {
        folder.read_facts()
    }
}
