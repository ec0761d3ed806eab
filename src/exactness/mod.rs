//! The exactness gate (docs/methodology.md §12): before a candidate's speed matters, does it compute
//! the same thing? Baseline and candidate each answer the same deterministic request on a cold
//! server (temperature 0, seed 42, no prompt cache, the same calibrated prompt) with every
//! generated token's id and top-5 logprobs; the verdict is **exact**, **equal tokens** (with the
//! largest logprob change) or **diverged at token k** (with both continuations), plus the
//! cosine ≥ 0.99 fallback on the top-k logprob vectors and the community's yardstick (same
//! top-1 %, top-k KL divergence) judged by the candidate's class. Stored as `exactness.json` in the
//! evidence folder.
//!
//! The logprobs come from the ordinary streamed chat request: the test bed's llama-server sends
//! each token's `logprobs.content[]` entry (id, logprob, five alternatives with ids) in the same
//! chunk as the token (tests/fixtures/exactness/), so no second, non-streamed request is needed.
mod compare;
mod cosine;
mod error;
mod report;
mod run;
mod tokens;
mod yardstick;

pub(crate) use compare::{ExactnessVerdict, ShownToken};
pub(crate) use error::ExactnessError;
pub(crate) use report::{ExactnessReport, Gate, SideReport};
pub(crate) use run::{run_exactness, ExactnessPlan, ExactnessSide};
pub(crate) use yardstick::VariantClass;
