//! What ends a build when abprof itself dies without a chance to clean up (SIGKILL, a crash).
//!
//! `PR_SET_PDEATHSIG` in the build's child is not enough: it reaches only that child (cmake),
//! and ninja and the compilers that cmake's children start keep compiling, reparented to init;
//! it also fires when the *thread* that forked exits, not the process. So a small watcher holds
//! the other end of a pipe from abprof: abprof tells it each build step's process group, and
//! `done` when the build is over. When the pipe closes without `done` (abprof is gone, however
//! it died), the watcher ends the step's whole group, removes the worktree and prunes it from
//! the user's repository. It sends SIGTERM first and SIGKILL up to 2 s later, as a timed child
//! gets (`child::run_timed`): ninja runs each command in a process group of its own, so only
//! ninja itself, told to stop, can end the compilers; a SIGKILL of the step's group alone would
//! leave them running. The watcher also holds the build slot's lock (an inherited descriptor
//! of the same open file, fd 3) until it has cleaned up, so no other build takes the slot first.
use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::Mutex;

const SCRIPT: &str = r#"g=
while read what n; do
  case $what in group) g=$n ;; done) exit 0 ;; esac
done
if [ -n "$g" ]; then
  kill -TERM -"$g" 2>/dev/null
  i=0
  while kill -0 -"$g" 2>/dev/null && [ $i -lt 20 ]; do sleep 0.1; i=$((i + 1)); done
  kill -9 -"$g" 2>/dev/null
fi
git -C "$1" worktree remove --force "$2" 2>/dev/null
rm -rf "$2"
git -C "$1" worktree prune 2>/dev/null
# Another watcher (a bisect's own worktree) may hold the repository's lock right now.
sleep 0.5
git -C "$1" worktree prune 2>/dev/null
exit 0
"#;

pub(crate) struct BuildLeash {
    stdin: Mutex<Option<ChildStdin>>,
    child: Child,
}

impl BuildLeash {
    /// Starts the watcher of `worktree` (a worktree of `repo`), holding `slot_lock` (a build
    /// slot's) when given.
    pub(crate) fn hold(repo: &Path, worktree: &Path, slot_lock: Option<&File>) -> std::io::Result<BuildLeash> {
        use std::os::fd::AsRawFd;
        use std::os::unix::process::CommandExt;
        let fd = slot_lock.map(|f| f.as_raw_fd());
        let mut cmd = Command::new("sh");
        cmd.arg("-c").arg(SCRIPT).arg("abprof-build-leash").arg(repo).arg(worktree);
        // Its own process group: a Ctrl-C at the terminal is abprof's to handle, not the watcher's.
        cmd.stdin(Stdio::piped()).stdout(Stdio::null()).stderr(Stdio::null()).process_group(0);
        if let Some(fd) = fd {
            // SAFETY: between fork and exec only async-signal-safe calls (dup2, fcntl).
            unsafe {
                cmd.pre_exec(move || {
                    let r = if fd == 3 { nix::libc::fcntl(3, nix::libc::F_SETFD, 0) } else { nix::libc::dup2(fd, 3) };
                    if r < 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                });
            }
        }
        let mut child = cmd.spawn()?;
        let stdin = child.stdin.take();
        Ok(BuildLeash { stdin: Mutex::new(stdin), child })
    }

    fn say(&self, line: &str) {
        if let Some(s) = self.stdin.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
            let _ = s.write_all(line.as_bytes());
            let _ = s.flush();
        }
    }

    /// The process group of the build step now running (`None`: the step ended).
    pub(crate) fn group(&self, pgid: Option<u32>) {
        self.say(&format!("group {}\n", pgid.map_or(String::new(), |p| p.to_string())));
    }
}

impl Drop for BuildLeash {
    /// The build is over (done or failed, its worktree removed by its own drop): the watcher
    /// exits without touching anything.
    fn drop(&mut self) {
        self.say("done\n");
        self.stdin.lock().unwrap_or_else(|e| e.into_inner()).take();
        let _ = self.child.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_closed_pipe_without_done_kills_the_group_and_removes_the_folder() {
        use std::os::unix::process::CommandExt;
        let d = tempfile::tempdir().unwrap();
        let tree = d.path().join("src");
        std::fs::create_dir(&tree).unwrap();
        let lock = File::create(d.path().join("slot.lock")).unwrap();
        let mut group = Command::new("sleep").arg("30").process_group(0).spawn().unwrap();
        let leash = BuildLeash::hold(d.path(), &tree, Some(&lock)).unwrap();
        leash.group(Some(group.id()));
        // As if abprof died: the pipe closes with no `done`.
        let mut leash = std::mem::ManuallyDrop::new(leash);
        leash.stdin.lock().unwrap().take();
        let _ = leash.child.wait();
        let status = group.wait().unwrap();
        assert!(!status.success(), "the build's group was killed");
        assert!(!tree.exists(), "the worktree folder was removed");
        // A build that ends normally leaves everything to its own clean-up.
        let kept = d.path().join("kept");
        std::fs::create_dir(&kept).unwrap();
        drop(BuildLeash::hold(d.path(), &kept, None).unwrap());
        assert!(kept.exists());
    }
}
