//! `abprof build`: an immutable llama-server artifact from a commit (+ one patch), built in a
//! detached worktree so the source tree is never touched.
use super::args::OutputArgs;
use crate::artifact::{build_artifact, BuildSpec};
use crate::report::artifact::BuiltArtifact;
use crate::report::emit;
use anyhow::Result;
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
#[command(
    after_help = "Example: abprof build --repo ~/llama.cpp --commit 0c1e57098 --patch cand.patch --name cand -- -DGGML_HIP=ON -DAMDGPU_TARGETS=gfx1151"
)]
pub(crate) struct BuildArgs {
    /// The git source tree (it may hold uncommitted work: it is only read).
    #[arg(long, value_name = "DIR")]
    pub(crate) repo: PathBuf,
    /// The base commit (any name git resolves to a commit).
    #[arg(long, value_name = "SHA")]
    pub(crate) commit: String,
    /// One patch applied with `git apply` on top of the commit (e.g. `git diff BASE -- file.cu`).
    #[arg(long, value_name = "FILE")]
    pub(crate) patch: Option<PathBuf>,
    /// Artifact folder name (default llama-server-<sha12>[-p<patch sha8>]).
    #[arg(long, value_name = "NAME")]
    pub(crate) name: Option<String>,
    /// Where artifact folders are kept (default $ABPROF_CACHE/artifacts, else ~/.cache/abprof/artifacts).
    #[arg(long, value_name = "DIR")]
    pub(crate) out: Option<PathBuf>,
    /// Parallel build jobs (default: the number of CPUs).
    #[arg(long, value_name = "N")]
    pub(crate) jobs: Option<usize>,
    /// CMake configure arguments after `--`, e.g. -DGGML_HIP=ON (Ninja and Release unless given).
    #[arg(last = true, value_name = "CMAKE_ARGS")]
    pub(crate) cmake_args: Vec<String>,
    #[command(flatten)]
    pub(crate) output: OutputArgs,
}

fn default_out() -> PathBuf {
    crate::cache_dir::cache_dir().join("artifacts")
}

pub(crate) fn run(a: BuildArgs) -> Result<i32> {
    let spec = BuildSpec {
        repo: a.repo,
        commit: a.commit,
        patch: a.patch,
        name: a.name,
        out: a.out.unwrap_or_else(default_out),
        cmake_args: a.cmake_args,
        jobs: a.jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())).max(1),
    };
    let artifact = build_artifact(&spec, &mut |step| eprintln!("abprof build: {step}"))?;
    emit(&BuiltArtifact::from(&artifact), a.output.format());
    Ok(0)
}
