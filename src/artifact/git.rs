//! The few git operations a safe build needs. The source repository's checkout, index, stash
//! and branches are never touched: the build happens in a detached worktree of its own, removed
//! afterwards (docs/methodology.md §6 "candidate builds").
use super::error::ArtifactError;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// `git -C dir ARGS`, in the C locale: callers read its messages.
pub(crate) fn git(dir: &Path, args: &[&str]) -> Result<Output, ArtifactError> {
    Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("LC_ALL", "C")
        .output()
        .map_err(|e| ArtifactError::Tool { program: "git".into(), source: e })
}

pub(crate) fn first_line(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("").to_string()
}

pub(crate) fn check(out: Output, action: &str) -> Result<Output, ArtifactError> {
    if out.status.success() {
        Ok(out)
    } else {
        Err(ArtifactError::Git { action: action.into(), detail: first_line(&out.stderr) })
    }
}

/// The full sha of `commit` in `repo`.
pub(crate) fn resolve_commit(repo: &Path, commit: &str) -> Result<String, ArtifactError> {
    if !git(repo, &["rev-parse", "--git-dir"])?.status.success() {
        return Err(ArtifactError::NotARepo(repo.to_path_buf()));
    }
    let out = git(repo, &["rev-parse", "--verify", "--quiet", &format!("{commit}^{{commit}}")])?;
    if !out.status.success() {
        return Err(ArtifactError::UnknownCommit { repo: repo.to_path_buf(), commit: commit.into() });
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Whether `ancestor` is `commit` or one of its ancestors.
pub(crate) fn is_ancestor(repo: &Path, ancestor: &str, commit: &str) -> Result<bool, ArtifactError> {
    Ok(git(repo, &["merge-base", "--is-ancestor", ancestor, commit])?.status.success())
}

/// The first line of a commit's message.
pub(crate) fn subject(repo: &Path, commit: &str) -> String {
    git(repo, &["log", "-1", "--format=%s", commit])
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}

/// A detached worktree of one commit; removed (and pruned from the repository's list) when
/// dropped, on every path out of a build.
pub(crate) struct DetachedWorktree {
    repo: PathBuf,
    pub(crate) path: PathBuf,
}

impl DetachedWorktree {
    pub(crate) fn add(repo: &Path, path: &Path, commit: &str) -> Result<DetachedWorktree, ArtifactError> {
        Self::add_with(repo, path, commit, &[])
    }

    /// The worktree's own HEAD and git state, and no files: what `git bisect --no-checkout` needs.
    pub(crate) fn add_without_files(repo: &Path, path: &Path, commit: &str) -> Result<DetachedWorktree, ArtifactError> {
        Self::add_with(repo, path, commit, &["--no-checkout"])
    }

    fn add_with(repo: &Path, path: &Path, commit: &str, extra: &[&str]) -> Result<DetachedWorktree, ArtifactError> {
        let p = path.to_string_lossy();
        // A worktree whose folder a killed run left and a later one deleted is still registered
        // at that path; prune forgets it (only entries whose folders are gone).
        let _ = git(repo, &["worktree", "prune"]);
        let mut args = vec!["worktree", "add", "--quiet", "--detach"];
        args.extend(extra);
        args.extend([p.as_ref(), commit]);
        check(git(repo, &args)?, "worktree add")?;
        Ok(DetachedWorktree { repo: repo.to_path_buf(), path: path.to_path_buf() })
    }

    /// `git apply` of one patch file, checked first so a failure leaves the tree as it was.
    pub(crate) fn apply(&self, patch: &Path, patch_name: &Path, commit: &str) -> Result<(), ArtifactError> {
        let p = patch.to_string_lossy();
        let dry = git(&self.path, &["apply", "--check", &p])?;
        if !dry.status.success() {
            return Err(ArtifactError::PatchDoesNotApply {
                path: patch_name.to_path_buf(),
                commit: commit.chars().take(12).collect(),
                detail: first_line(&dry.stderr),
            });
        }
        check(git(&self.path, &["apply", &p])?, "apply")?;
        Ok(())
    }
}

impl Drop for DetachedWorktree {
    fn drop(&mut self) {
        let p = self.path.to_string_lossy().to_string();
        let _ = git(&self.repo, &["worktree", "remove", "--force", &p]);
        let _ = git(&self.repo, &["worktree", "prune"]);
    }
}
