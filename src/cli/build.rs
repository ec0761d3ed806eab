//! `abprof build`: an immutable llama-server artifact from a commit (+ one patch), built in a
//! detached worktree so the source tree is never touched.
use super::args::{OutputArgs, SourceArgs};
use crate::artifact::{build_artifact, BuildSpec};
use crate::report::artifact::BuiltArtifact;
use crate::report::emit;
use anyhow::Result;
use clap::Args;

#[derive(Args, Debug)]
#[command(
    after_help = "Example: abprof build --repo ~/llama.cpp --commit 0c1e57098 --patch cand.patch --name cand -- -DGGML_HIP=ON -DAMDGPU_TARGETS=gfx1151"
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
    let artifact = build_artifact(&spec, &mut |step| eprintln!("abprof build: {step}"))?;
    emit(&BuiltArtifact::from(&artifact), a.output.format());
    Ok(0)
}
