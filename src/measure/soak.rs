//! The soak (docs/methodology.md §4.2): every sample is one cold server answering the study's
//! request N times back to back, so that the device reaches the thermal steady state a single
//! cold request never sees; each request's rates are kept, in order.
use super::sequence::SequenceRequest;
use crate::client::StreamRecord;
use serde::{Deserialize, Serialize};

/// Requests per soak sample when the study does not say (`--soak-requests`).
pub(crate) const DEFAULT_REQUESTS: u32 = 20;

/// A soak sample's requests (the record's `extra.soak`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct SoakRun {
    pub(crate) requests: Vec<SequenceRequest>,
}

impl SoakRun {
    /// The run of the responses `(name, response)` in the order they were sent.
    pub(crate) fn of(responses: &[(String, StreamRecord)]) -> SoakRun {
        SoakRun { requests: responses.iter().map(|(n, r)| SequenceRequest::of(n, r)).collect() }
    }
}

/// The soak's request names, in order: `request 1` … `request N`.
pub(crate) fn request_name(i: usize) -> String {
    format!("request {}", i + 1)
}
