//! `abprof build`: an immutable llama-server artifact from a commit (+ one patch), built in a
//! detached worktree so the source tree is never touched.
use super::args::{OutputArgs, SourceArgs};
use crate::artifact::BuildSpec;
use anyhow::Result;
use clap::Args;

#[derive(Args, Debug)]
#[command(
    after_help = "Example: abprof build --repo ~/llama.cpp --commit 0c1e57098 --patch cand.patch --name cand -- -DGGML_HIP=ON -DAMDGPU_TARGETS=gfx1151\n\nExit status: 0 built; 1 error; 2 usage; 128+N stopped by signal N (130 SIGINT, 143 SIGTERM): the build's processes are stopped and its worktree removed. If abprof is killed (SIGKILL), the build's process group dies with it and the worktree is removed too."
)]
pub(crate) struct BuildArgs {
    #[command(flatten)]
    pub(crate) source: SourceArgs,
    /// The base commit (any name git resolves to a commit).
    #[arg(long, value_name = "SHA")]
    pub(crate) commit: String,
    /// Artifact folder name (default llama-server-<sha12>[-p<patch sha8>]).
    #[arg(long, value_name = "NAME")]
    pub(crate) name: Option<String>,
    #[command(flatten)]
    pub(crate) output: OutputArgs,
}

pub(crate) fn run(a: BuildArgs) -> Result<i32> {
    let s = &a.source;
    let spec = BuildSpec {
        repo: s.repo.clone(),
        commit: a.commit,
        patch: s.patch.clone(),
        name: a.name,
        out: s.out(),
        cmake_args: s.cmake_args.clone(),
        jobs: s.jobs(),
        cancel: None,
    };
    crate::app::build(spec, a.output.format())
}
