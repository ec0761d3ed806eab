//! `abprof compare-traces --variant LABEL=TRACE[:MS_PER_TOK] ...`: which kernel categories
//! moved between variants, in measured ms/token.
use std::path::PathBuf;

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
    /// Category rules (TOML) instead of the built-in ones.
    #[arg(long, value_name = "FILE")]
    pub rules: Option<PathBuf>,
    /// Output tokens of the traced requests, for traces without a trace.json.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub tokens: Option<u32>,
    /// How many moved kernels to list.
    #[arg(long, default_value_t = 10, value_name = "N")]
    pub top: usize,
}

pub fn run(a: Args) -> Result<i32> {
    let rules = super::attribute::load_rules(a.rules.as_deref())?;
    let specs = a
        .variants
        .iter()
        .map(|v| v.parse::<VariantSpec>())
        .collect::<Result<Vec<_>, _>>()?;
    let inputs = specs
        .iter()
        .map(|s| compare::load_variant(s, &rules, a.tokens))
        .collect::<Result<Vec<_>, _>>()?;
    let comparison = compare::compare(&inputs, a.top)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&comparison)?);
    } else {
        print!("{}", render::comparison_text(&comparison));
    }
    Ok(0)
}
