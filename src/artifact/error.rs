use std::path::PathBuf;
use thiserror::Error;

#[derive(Debug, Error)]
pub(crate) enum ArtifactError {
    #[error("{0} is not a git repository: pass --repo the llama.cpp source tree to build from")]
    NotARepo(PathBuf),
    #[error("commit {commit:?} is not in {repo}: check the sha, or fetch it into that repository first")]
    UnknownCommit { repo: PathBuf, commit: String },
    #[error("cannot read patch {path}: {source}")]
    PatchUnreadable { path: PathBuf, source: std::io::Error },
    #[error(
        "patch {path} does not apply to {commit}: {detail} (make it with `git diff {commit}` against that commit)"
    )]
    PatchDoesNotApply { path: PathBuf, commit: String, detail: String },
    #[error("artifact name {0:?} must be letters, digits, '.', '_' or '-' (it names a folder)")]
    BadName(String),
    #[error(
        "artifact {0} already exists and artifacts are immutable: pick another --name (or delete it deliberately)"
    )]
    Exists(PathBuf),
    #[error("could not run {program}: {source} (is it installed? scripts/system-deps installs cmake and ninja)")]
    Tool { program: String, source: std::io::Error },
    #[error("git {action} failed: {detail}")]
    Git { action: String, detail: String },
    #[error("cmake {step} failed ({status}): {last_line} — full log: {log}")]
    Cmake { step: &'static str, status: String, last_line: String, log: PathBuf },
    #[error("the build produced no llama-server executable under {0}: is `llama-server` a target of this tree?")]
    NoBinary(PathBuf),
    #[error("could not write {path}: {source}")]
    Write { path: PathBuf, source: std::io::Error },
    #[error(
        "artifact {dir} is not the build asked for: {why}; delete it deliberately, or pass another artifact folder"
    )]
    Mismatch { dir: PathBuf, why: String },
    #[error("the build was stopped by a signal")]
    Interrupted,
}

impl ArtifactError {
    /// The commit (with its patch) does not build: a fact about the source, where every other
    /// error is one about this host or the request.
    pub(crate) fn is_build_failure(&self) -> bool {
        matches!(
            self,
            ArtifactError::Cmake { .. } | ArtifactError::NoBinary(_) | ArtifactError::PatchDoesNotApply { .. }
        )
    }
}
