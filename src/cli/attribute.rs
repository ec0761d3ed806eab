//! `abprof attribute TRACE`: one trace's decode kernels by category, per token.
use std::path::PathBuf;

use anyhow::Result;
use clap::Args as ClapArgs;

use super::args::OutputArgs;
use crate::report::{self, trace::AttributionView};
use crate::trace::{self, Rules};

#[derive(ClapArgs, Debug)]
pub(crate) struct Args {
    /// A rocprofv3 rocpd database (.db), a rocprofv3 kernel_trace.csv, an Nsight Systems SQLite
    /// export (.sqlite), or an `abprof trace` output folder.
    pub(crate) trace: PathBuf,
    #[command(flatten)]
    pub(crate) output: OutputArgs,
    #[command(flatten)]
    pub(crate) reading: TraceReading,
    /// Also compute the decode window's GPU busy time (union of kernel intervals) and each
    /// kernel's exclusive part of it, which is what to read when kernels overlap (one more pass
    /// over the trace, sorted by start).
    #[arg(long)]
    pub(crate) busy: bool,
    /// How many kernels the "top kernels" table lists.
    #[arg(long, default_value_t = 15, value_name = "N")]
    pub(crate) top: usize,
}

/// How a trace is read, shared by `attribute` and `compare-traces`.
#[derive(ClapArgs, Debug)]
pub(crate) struct TraceReading {
    /// Category rules (TOML, same layout as assets/kernel-categories.toml) instead of the built-in ones.
    #[arg(long, value_name = "FILE")]
    pub(crate) rules: Option<PathBuf>,
    /// Output tokens of the traced request (default: from the folder's trace.json); needed for
    /// per-token figures and for finding decode in a bare trace file.
    #[arg(long, value_name = "N", value_parser = crate::bounds::u32_flag(1, crate::bounds::MAX_TOKENS))]
    pub(crate) tokens: Option<u32>,
}

impl TraceReading {
    pub(crate) fn rules(&self) -> Result<Rules> {
        load_rules(self.rules.as_deref())
    }
}

fn load_rules(path: Option<&std::path::Path>) -> Result<Rules> {
    Ok(match path {
        Some(p) => Rules::load(p)?,
        None => Rules::builtin(),
    })
}

pub(crate) fn run(a: Args) -> Result<i32> {
    let rules = a.reading.rules()?;
    let input = crate::study::trace_folder::trace_input(&a.trace)?;
    let attribution = trace::analyze_with(&input, &rules, a.reading.tokens, a.busy)?;
    report::emit(&AttributionView { attribution: &attribution, top: a.top }, a.output.format());
    Ok(0)
}
