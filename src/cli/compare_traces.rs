//! `abprof compare-traces --variant LABEL=TRACE[:MS_PER_TOK] ...` or `--study DIR`: which kernel
//! categories moved between variants, in measured ms/token.
use std::path::PathBuf;

use anyhow::Result;
use clap::Args as ClapArgs;

use crate::report;
use crate::summary::folder_traces::compare_study_folder;
use crate::summary::traces::compared;
use crate::trace::compare::{self, VariantSpec};

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
    let rules = a.reading.rules()?;
    let format = a.output.format();
    if let Some(dir) = &a.study {
        report::emit(&compare_study_folder(dir, &rules, a.top)?, format);
        return Ok(0);
    }
    let specs = a.variants.iter().map(|v| v.parse::<VariantSpec>()).collect::<Result<Vec<_>, _>>()?;
    let comparison = compare::compare_specs(&specs, &rules, a.reading.tokens, a.top)?;
    // Folders with several traced samples (`abprof trace --traced N`) get intervals; the rest
    // print as they always did.
    if comparison.variants.iter().any(|v| v.traced_samples > 1) {
        report::emit(&compared(comparison, None), format);
    } else {
        report::emit(&comparison, format);
    }
    Ok(0)
}
