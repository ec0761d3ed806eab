//! The folder a build happens in: one of a few fixed slots under the temp folder
//! (`abprof-build-slot-N`), taken with an exclusive lock, emptied before and after. A fixed path,
//! not a fresh random one, because some generated sources hold absolute paths: llama.cpp's unity
//! build of `src/` writes `#include "/…/src/llama-….cpp"` lines, and a file whose text differs
//! never hits ccache (docs/methodology.md §19 "incremental rebuilds"). Two builds at once take two
//! slots; a build in the same slot as the last one reuses every cached object.
use std::fs::File;
use std::path::{Path, PathBuf};

/// How many builds may run at once before the next one waits for a free slot.
const SLOTS: usize = 8;

pub(crate) struct Scratch {
    path: PathBuf,
    _lock: File,
}

fn try_lock(lock: &Path) -> std::io::Result<Option<File>> {
    use std::os::fd::AsRawFd;
    let f = std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(lock)?;
    #[allow(deprecated)] // nix's Flock wrapper takes the File by value; the raw call keeps it ours.
    match nix::fcntl::flock(f.as_raw_fd(), nix::fcntl::FlockArg::LockExclusiveNonblock) {
        Ok(()) => Ok(Some(f)),
        Err(nix::errno::Errno::EWOULDBLOCK) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

impl Scratch {
    /// The first free slot under `base` (the temp folder), emptied.
    pub(crate) fn take(base: &Path) -> std::io::Result<Scratch> {
        loop {
            for n in 0..SLOTS {
                let path = base.join(format!("abprof-build-slot-{n}"));
                if let Some(lock) = try_lock(&base.join(format!("abprof-build-slot-{n}.lock")))? {
                    // A build that was killed left its folder: nobody holds it now.
                    if path.exists() {
                        std::fs::remove_dir_all(&path)?;
                    }
                    std::fs::create_dir_all(&path)?;
                    return Ok(Scratch { path, _lock: lock });
                }
            }
            std::thread::sleep(std::time::Duration::from_millis(500));
        }
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The slot's lock, held while the slot is this build's.
    pub(crate) fn lock(&self) -> &File {
        &self._lock
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slot_is_reused_and_never_shared() {
        let d = tempfile::tempdir().unwrap();
        let a = Scratch::take(d.path()).unwrap();
        std::fs::write(a.path().join("left.txt"), "x").unwrap();
        let b = Scratch::take(d.path()).unwrap();
        assert_ne!(a.path(), b.path());
        let first = a.path().to_path_buf();
        drop(a);
        assert!(!first.exists());
        let c = Scratch::take(d.path()).unwrap();
        assert_eq!(c.path(), first, "the freed slot comes back");
        assert_eq!(std::fs::read_dir(c.path()).unwrap().count(), 0);
    }
}
