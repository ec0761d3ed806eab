//! `abprof summarize DIR`: the summary of a study's evidence folder, rebuilt from disk.
use crate::study::evidence::{write_json, Evidence};
use anyhow::Result;
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct SummarizeArgs {
    /// The study's evidence folder (the --root of `abprof ab`).
    pub dir: PathBuf,
    /// Print JSON instead of tables.
    #[arg(long)]
    pub json: bool,
}

pub fn run(a: SummarizeArgs) -> Result<i32> {
    let ev = Evidence::open(&a.dir)?;
    let s = crate::summary::summarize(&ev)?;
    write_json(&ev.path("summary.json"), &s)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&s)?);
    } else {
        print!("{}", crate::report::summary::render_text(&s));
    }
    Ok(0)
}
