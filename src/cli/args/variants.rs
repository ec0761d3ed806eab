//! `--variant SPEC …`, `--model`, `--port` and the launch flags: the servers a study compares.
use super::LaunchArgs;
use clap::Args;
use std::path::PathBuf;

/// Variants: `--variant SPEC` (repeatable; the first is the baseline), the `--model` they run
/// unless a spec says `model=`, the study's `--port`, and [`LaunchArgs`] (ab, pi, trace).
#[derive(Args, Debug, Clone)]
pub(crate) struct VariantArgs {
    /// A variant: label=binary[|kv=TYPE][|env=VAR=VAL]...[|extra=ARGS][|model=PATH][|expect=REGEX]. First = baseline.
    #[arg(long = "variant", value_name = "SPEC")]
    pub(crate) variants: Vec<String>,
    /// Model every variant runs unless its spec says model=.
    #[arg(long, value_name = "GGUF")]
    pub(crate) model: Option<PathBuf>,
    /// Fixed loopback port for every sample (default: one free port for the whole study).
    #[arg(long)]
    pub(crate) port: Option<u16>,
    #[command(flatten)]
    pub(crate) launch: LaunchArgs,
}
