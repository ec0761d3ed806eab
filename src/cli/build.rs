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
    // A build is a child like the server: a signal stops its process group (cmake, ninja, every
    // compiler) and removes its worktree, as it does inside a bisect.
    let stop = crate::stop_signal::StopSignal::listen_alone()?;
    let s = &a.source;
    let spec = BuildSpec {
        repo: s.repo.clone(),
        commit: a.commit,
        patch: s.patch.clone(),
        name: a.name,
        out: s.out(),
        cmake_args: s.cmake_args.clone(),
        jobs: s.jobs(),
        cancel: Some(stop.flag()),
    };
    let artifact = match build_artifact(&spec, &mut |step| eprintln!("abprof build: {step}")) {
        Err(crate::artifact::ArtifactError::Interrupted) => {
            let n = stop.signal().unwrap_or(2);
            eprintln!("abprof: interrupted by signal {n}; the build was stopped and its worktree removed");
            return Ok(128 + n);
        }
        r => r?,
    };
    emit(&BuiltArtifact::from(&artifact), a.output.format());
    Ok(0)
}
