//! The request timing block of a llama-server log.
//!
//! The server prints one block per finished request (`server_slot::print_timings`). A cold-cache
//! sample is only trustworthy if its log holds exactly one: zero means the request never
//! completed, two mean something else (a retry, a client's second request, a warm-up) shared the
//! server. Every form printed since early 2024 is read (one real log of each in
//! tests/fixtures/llama-server-wild/README.md): text logs with or without the `M.SS.mmm.uuu L`
//! prefix, router mode's `[PORT] ` prefix, the 2024 `INFO [ print_timings]` text and
//! `--log-format json` logs, `--log-jsonl`, the one-call block and `LOG_TEE` forms, and every
//! draft-acceptance wording with its mean length and per-position rates (the pinned build's
//! draft-mtp lines: tests/fixtures/llama-server-mtp/README.md). llama-cli's own summaries are
//! refused, never taken for a request.
mod block;
mod error;
mod first_error;
mod foreign;
mod line;
mod memory;
#[cfg(test)]
mod mtp_tests;
mod parse;
mod patterns;
mod read;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod wild_tests;

pub(crate) use block::{DraftAcceptance, SpecStatistics, TimingBlock};
pub(crate) use error::LogError;
pub(crate) use first_error::first_error_line;
pub(crate) use memory::{server_memory, BufferKind, MemoryRole, ServerMemory};
pub(crate) use parse::{single_timing_block, timing_blocks};
pub(crate) use read::read_lossy;
