//! `git bisect` in a worktree of its own (docs/methodology.md §19): `git worktree add --detach
//! --no-checkout` gives it a HEAD, an index and bisect refs of its own and no files, and
//! `git bisect start --no-checkout` only moves its `BISECT_HEAD`. The user's checkout, index,
//! branches and status are never touched; on every way out (an error, a signal, a panic) the
//! bisect is reset and the worktree removed and pruned.
use crate::artifact::git::{check, first_line, git, DetachedWorktree};
use crate::artifact::ArtifactError;
use std::path::Path;

/// What git wants next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Position {
    /// Test this commit.
    Probe(String),
    /// The bisect is over.
    FirstBad(String),
    /// Only skipped commits are left: the first bad commit is one of these.
    OnlySkipped(Vec<String>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mark {
    Good,
    Bad,
    Skip,
}

impl Mark {
    fn word(self) -> &'static str {
        match self {
            Mark::Good => "good",
            Mark::Bad => "bad",
            Mark::Skip => "skip",
        }
    }
}

pub(crate) struct BisectWorktree {
    /// Before `tree`, so dropped first: removes the worktree if abprof is killed (SIGKILL).
    _leash: crate::artifact::leash::BuildLeash,
    tree: DetachedWorktree,
}

fn is_sha(s: &str) -> bool {
    s.len() == 40 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Reads where a `git bisect` command left the bisect from what it printed (C locale).
fn position_from(stdout: &str) -> Option<Position> {
    if let Some(line) = stdout.lines().find(|l| l.ends_with(" is the first bad commit")) {
        return line.split_whitespace().next().filter(|s| is_sha(s)).map(|s| Position::FirstBad(s.to_string()));
    }
    if stdout.contains("only 'skip'ped commits left to test") {
        let shas = stdout.lines().map(str::trim).filter(|l| is_sha(l)).map(str::to_string).collect();
        return Some(Position::OnlySkipped(shas));
    }
    None
}

impl BisectWorktree {
    /// A worktree at `path` (which must not exist), with `git bisect start` run in it.
    pub(crate) fn start(repo: &Path, path: &Path, good: &str, bad: &str) -> Result<(Self, Position), ArtifactError> {
        let tree = DetachedWorktree::add_without_files(repo, path, bad)?;
        let leash = crate::artifact::leash::BuildLeash::hold(repo, path, None)
            .map_err(|e| ArtifactError::Tool { program: "sh".into(), source: e })?;
        let me = BisectWorktree { _leash: leash, tree };
        let pos = me.run(&["bisect", "start", "--no-checkout", bad, good], "bisect start")?;
        Ok((me, pos))
    }

    fn run(&self, args: &[&str], action: &str) -> Result<Position, ArtifactError> {
        let out = git(&self.tree.path, args)?;
        let stdout = String::from_utf8_lossy(&out.stdout).to_string();
        if let Some(p) = position_from(&stdout) {
            return Ok(p);
        }
        check(out, action)?;
        let head = check(git(&self.tree.path, &["rev-parse", "BISECT_HEAD"])?, "rev-parse BISECT_HEAD")?;
        let sha = first_line(&head.stdout);
        if !is_sha(&sha) {
            return Err(ArtifactError::Git { action: action.into(), detail: format!("no next commit in {stdout:?}") });
        }
        Ok(Position::Probe(sha))
    }

    /// `git bisect good|bad|skip COMMIT`.
    pub(crate) fn mark(&self, commit: &str, mark: Mark) -> Result<Position, ArtifactError> {
        self.run(&["bisect", mark.word(), commit], &format!("bisect {}", mark.word()))
    }

    /// `git bisect log`: what `git bisect replay` re-runs.
    pub(crate) fn log(&self) -> String {
        git(&self.tree.path, &["bisect", "log"])
            .map(|o| String::from_utf8_lossy(&o.stdout).to_string())
            .unwrap_or_default()
    }
}

impl Drop for BisectWorktree {
    fn drop(&mut self) {
        // Then the worktree's own drop removes it and prunes the repository's list.
        let _ = git(&self.tree.path, &["bisect", "reset"]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_what_git_bisect_printed() {
        // git 2.47, C locale.
        let first_bad = "6cf1047358e2d01b958bf5bc1e70c9b06fb36b91 is the first bad commit\ncommit 6cf1047358e2d01b958bf5bc1e70c9b06fb36b91\nAuthor: a <a@b>\n\n    c5\n";
        assert_eq!(
            position_from(first_bad),
            Some(Position::FirstBad("6cf1047358e2d01b958bf5bc1e70c9b06fb36b91".into()))
        );
        let skipped = "There are only 'skip'ped commits left to test.\nThe first bad commit could be any of:\n4aff826947a683b1c1fa5917919eb76a46d6daa6\n6cf1047358e2d01b958bf5bc1e70c9b06fb36b91\nWe cannot bisect more!\n";
        assert_eq!(
            position_from(skipped),
            Some(Position::OnlySkipped(vec![
                "4aff826947a683b1c1fa5917919eb76a46d6daa6".into(),
                "6cf1047358e2d01b958bf5bc1e70c9b06fb36b91".into()
            ]))
        );
        assert_eq!(position_from("Bisecting: 3 revisions left to test after this (roughly 2 steps)\n[4aff826947a683b1c1fa5917919eb76a46d6daa6] c4\n"), None);
    }
}
