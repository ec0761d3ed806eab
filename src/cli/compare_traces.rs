//! `abprof compare-traces --variant LABEL=TRACE[:MS_PER_TOK] ...` or `--study DIR`: which kernel
//! categories moved between variants, in measured ms/token.
use std::path::PathBuf;

use anyhow::Result;
use clap::Args as ClapArgs;

use crate::app::{CompareRequest, TraceSource};
use crate::refusal::Refusal;
use crate::trace::compare::VariantSpec;

#[derive(ClapArgs, Debug)]
pub(crate) struct Args {
    /// LABEL=TRACE[:MS_PER_TOK], repeated; the first is the baseline. TRACE is a trace file or an
    /// `abprof trace` folder (whose trace.json gives MS_PER_TOK when it is left out). MS_PER_TOK
    /// must come from untraced runs at the trace's output length.
    #[arg(long = "variant", value_name = "LABEL=TRACE[:MS_PER_TOK]", required_unless_present = "study")]
    pub(crate) variants: Vec<String>,
    /// An `abprof ab` evidence folder: compares its traces/LABEL/ folders (`abprof trace --root
    /// DIR/traces`), each scaled by the study's median ms/token, as its summary does.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["variants", "tokens"])]
    pub(crate) study: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) output: super::args::OutputArgs,
    #[command(flatten)]
    pub(crate) reading: super::attribute::TraceReading,
    /// How many moved kernels to list.
    #[arg(long, default_value_t = 10, value_name = "N")]
    pub(crate) top: usize,
}

pub(crate) fn run(a: Args) -> Result<i32> {
    let source = match a.study {
        Some(dir) => TraceSource::Study(dir),
        None => TraceSource::Traces {
            // A malformed LABEL=TRACE is a usage error, refused before any trace is read.
            specs: a
                .variants
                .iter()
                .map(|v| v.parse::<VariantSpec>())
                .collect::<Result<Vec<_>, _>>()
                .map_err(Refusal::of)?,
            tokens: a.reading.tokens,
        },
    };
    crate::app::compare_traces(CompareRequest {
        source,
        rules: a.reading.rules()?,
        top: a.top,
        format: a.output.format(),
    })
}
