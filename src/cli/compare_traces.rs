//! `abprof compare-traces --variant LABEL=TRACE[:MS_PER_TOK] ...`: which kernel categories
//! moved between variants, in measured ms/token.

use anyhow::Result;
use clap::Args as ClapArgs;

use crate::trace::compare::{self, VariantSpec};
use crate::trace::render;

#[derive(ClapArgs, Debug)]
pub struct Args {
    /// LABEL=TRACE[:MS_PER_TOK], repeated; the first is the baseline. TRACE is a trace file or an
    /// `abprof trace` folder (whose trace.json gives MS_PER_TOK when it is left out). MS_PER_TOK
    /// must come from untraced runs at the trace's output length.
    #[arg(long = "variant", value_name = "LABEL=TRACE[:MS_PER_TOK]", required = true)]
    pub variants: Vec<String>,
    /// Print the comparison as JSON.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub reading: super::attribute::TraceReading,
    /// How many moved kernels to list.
    #[arg(long, default_value_t = 10, value_name = "N")]
    pub top: usize,
}

pub fn run(a: Args) -> Result<i32> {
    let rules = a.reading.rules()?;
    let specs = a.variants.iter().map(|v| v.parse::<VariantSpec>()).collect::<Result<Vec<_>, _>>()?;
    let inputs =
        specs.iter().map(|s| compare::load_variant(s, &rules, a.reading.tokens)).collect::<Result<Vec<_>, _>>()?;
    let comparison = compare::compare(&inputs, a.top)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&comparison)?);
    } else {
        print!("{}", render::comparison_text(&comparison));
    }
    Ok(0)
}
