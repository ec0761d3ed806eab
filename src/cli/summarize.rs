//! `abprof summarize DIR`: the summary of a study's evidence folder, rebuilt from disk.
use super::args::OutputArgs;
use crate::report::emit;
use crate::study::evidence::{summary_in, write_json};
use crate::study::Shape;
use anyhow::Result;
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub(crate) struct SummarizeArgs {
    /// The study's (or sweep's) evidence folder (the --root of `abprof ab`).
    pub(crate) dir: PathBuf,
    #[command(flatten)]
    pub(crate) output: OutputArgs,
}

pub(crate) fn run(a: SummarizeArgs) -> Result<i32> {
    let folder = crate::study::open(&a.dir)?;
    if folder.shape == Shape::Sweep {
        let s = crate::summary::sweep::summarize_sweep(&folder.evidence)?;
        for (dir, point) in &s.point_summaries {
            write_json(&summary_in(dir), &point.summary)?;
        }
        folder.evidence.write_summary(&s)?;
        emit(&s, a.output.format());
        return Ok(0);
    }
    let ev = folder.evidence;
    let s = crate::summary::summarize(&ev)?;
    ev.write_summary(&s)?;
    emit(&s, a.output.format());
    Ok(0)
}
