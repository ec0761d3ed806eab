//! `abprof build` from its typed request to its exit status: the build runs as a child like the
//! server, so a signal stops its process group and removes its worktree (exit 128+N).
use crate::artifact::{build_artifact, ArtifactError, BuildSpec};
use crate::report::artifact::BuiltArtifact;
use crate::report::{emit, Format};
use anyhow::Result;

/// Builds `spec` (its `cancel` flag is this step's own) and prints the artifact in `format`.
pub(crate) fn build(spec: BuildSpec, format: Format) -> Result<i32> {
    let stop = crate::stop_signal::StopSignal::listen_alone()?;
    let spec = BuildSpec { cancel: Some(stop.flag()), ..spec };
    let artifact = match build_artifact(&spec, &mut |step| eprintln!("abprof build: {step}")) {
        Err(ArtifactError::Interrupted) => {
            let n = stop.signal().unwrap_or(2);
            eprintln!("abprof: interrupted by signal {n}; the build was stopped and its worktree removed");
            return Ok(128 + n);
        }
        r => r?,
    };
    emit(&BuiltArtifact::from(&artifact), format);
    Ok(0)
}
