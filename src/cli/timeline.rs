//! `abprof timeline SAMPLE --out FILE.json`: one sample as a Trace Event Format file.
use super::args::OutputArgs;
use crate::refusal::{refuse, Refusal};
use crate::report::{emit, timeline::TimelineWritten};
use anyhow::{Context, Result};
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub(crate) struct TimelineArgs {
    /// A sample folder (DIR/samples/NNN-LABEL), a study folder with --sample N, or an `abprof
    /// trace` folder (DIR/LABEL: its traced sample, with the kernels of its trace).
    pub(crate) path: PathBuf,
    /// Which sample of a study folder, from 1 (the NNN of samples/NNN-LABEL).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) sample: Option<u32>,
    /// Where to write the Chrome trace-event JSON (opens in ui.perfetto.dev and chrome://tracing).
    #[arg(long, value_name = "FILE.json")]
    pub(crate) out: PathBuf,
    #[command(flatten)]
    pub(crate) output: OutputArgs,
}

pub(crate) fn run(a: TimelineArgs) -> Result<i32> {
    let parent = a.out.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(std::path::Path::new("."));
    if !parent.is_dir() {
        refuse!(
            "--out {}: the folder {} does not exist; create it or write elsewhere",
            a.out.display(),
            parent.display()
        );
    }
    if a.out.is_dir() {
        refuse!(
            "--out {} is a folder: name the file to write, e.g. {}/timeline.json",
            a.out.display(),
            a.out.display()
        );
    }
    // A folder that is no sample, or a sample it lacks: a usage error (exit 2).
    let input = crate::timeline::resolve(&a.path, a.sample.map(|n| n as usize)).map_err(Refusal::of)?;
    let timeline = crate::timeline::build(&input, &crate::trace::Rules::builtin());
    crate::timeline::write(&timeline, &a.out).with_context(|| format!("cannot write {}", a.out.display()))?;
    emit(&TimelineWritten { out: &a.out, facts: &timeline.facts }, a.output.format());
    Ok(0)
}
