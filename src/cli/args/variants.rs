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
    /// Place every server on these CPUs (e.g. 0-7,16, or node:N for a NUMA node's) and abprof's
    /// own threads on the others (docs/methodology.md §2.1). Default: where the kernel puts them.
    #[arg(long, value_name = "CPUS", value_parser = server_cpus)]
    pub(crate) server_cpus: Option<String>,
    #[command(flatten)]
    pub(crate) launch: LaunchArgs,
}

/// Checked before anything starts; kept as typed (`node:0` stays `node:0` in study.toml).
fn server_cpus(text: &str) -> Result<String, String> {
    crate::server::placement::CpuList::parse(text).map(|_| text.to_string())
}
