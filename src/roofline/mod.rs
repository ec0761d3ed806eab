//! The decode roofline (docs/methodology.md §18): the bytes one decode step must read, from the
//! model's GGUF header and the KV cache at the measured context, over the memory bandwidth of the
//! device that decodes. `floor = bytes per step ÷ bandwidth`; a variant's step time is reported
//! as a percentage of it.
pub(crate) mod bandwidth;
pub(crate) mod bytes;
pub(crate) mod estimate;
pub(crate) mod gguf;
pub(crate) mod server_args;
#[cfg(test)]
pub(crate) mod testbed;

use bandwidth::{Bandwidth, Target};
use bytes::{KvShape, WeightBytes};
use gguf::{GgmlType, GgufHeader, ModelError};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// What a study records for one variant before its first sample (`roofline.json`): what its
/// model and KV cache weigh, and the bandwidth of the memory it decodes from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct VariantInputs {
    pub(crate) label: String,
    pub(crate) model: PathBuf,
    pub(crate) weights: Option<WeightBytes>,
    pub(crate) kv: Option<KvShape>,
    pub(crate) target: Target,
    pub(crate) bandwidth: Option<Bandwidth>,
    /// Why a piece above is missing, one line each.
    pub(crate) problems: Vec<String>,
}

/// `roofline.json` of a study.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct RooflineRecord {
    pub(crate) variants: Vec<VariantInputs>,
}

/// The weights and KV shape of `model` with the cache types `kv`.
pub(crate) fn model_inputs(model: &Path, kv: (GgmlType, GgmlType)) -> Result<(WeightBytes, KvShape), ModelError> {
    let header = GgufHeader::read(model)?;
    Ok((WeightBytes::of(&header)?, KvShape::of(&header, kv.0, kv.1)?))
}

/// The bytes of one decode step at a context length, by class.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct StepBytes {
    /// Dense weights, read whole.
    pub(crate) dense: u64,
    /// One row of the token embedding.
    pub(crate) token_embd_row: u64,
    /// The routed experts one token uses.
    pub(crate) experts_used: u64,
    /// The KV cache: bytes per position × context.
    pub(crate) kv: f64,
    pub(crate) total: f64,
}

impl StepBytes {
    pub(crate) fn at(weights: &WeightBytes, kv: &KvShape, context: f64) -> StepBytes {
        let experts_used = weights.experts.as_ref().map_or(0, |e| e.used_bytes);
        let kv_bytes = kv.bytes_per_position() as f64 * context;
        StepBytes {
            dense: weights.dense_bytes,
            token_embd_row: weights.token_embd_row_bytes,
            experts_used,
            kv: kv_bytes,
            total: weights.per_step() as f64 + kv_bytes,
        }
    }
}

/// Milliseconds to move `bytes` at `gb_per_s` (10⁹ bytes per second).
pub(crate) fn floor_ms(bytes: f64, gb_per_s: f64) -> f64 {
    bytes / (gb_per_s * 1e9) * 1e3
}
