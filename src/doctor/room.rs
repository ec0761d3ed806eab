//! Room for a study: a free loopback port for its servers and free disk for its evidence.
use std::path::Path;

use super::finding::Finding;

const HOST: &str = "127.0.0.1";

/// Below this a study's evidence may not fit: a sample's server log and telemetry take
/// megabytes, a traced sample's kernel trace hundreds of them.
pub(crate) const DISK_MIN_BYTES: u64 = 1 << 30;

/// The study's port: a fixed one must be free (a study stops when it is not), and without one the
/// OS must give a free one (docs/methodology.md §21).
pub(crate) fn port(fixed: Option<u16>) -> Finding {
    const NAME: &str = "port";
    match fixed {
        Some(p) => match crate::server::check_port_free(HOST, p) {
            Ok(()) => Finding::ok(NAME, format!("{HOST}:{p} is free")),
            Err(_) => Finding::warn(
                NAME,
                format!("{HOST}:{p} is in use: a study with --port {p} would stop"),
                format!(
                    "stop what listens there (`ss -ltnp 'sport = :{p}'` names it), or leave --port out and abprof picks a free one"
                ),
            ),
        },
        None => match crate::server::free_port(HOST) {
            Ok(p) => Finding::ok(NAME, format!("{HOST}: the OS gives each server a free port (now {p})")),
            Err(e) => Finding::warn(
                NAME,
                format!("no free port on {HOST}: {e}"),
                "free loopback ports (too many open sockets?), or pass --port N of a free one",
            ),
        },
    }
}

/// The folder itself or the nearest one above it that exists: where `--root` would be created.
fn existing_ancestor(root: &Path) -> &Path {
    root.ancestors().find(|p| p.is_dir()).unwrap_or(Path::new("/"))
}

pub(crate) fn disk(root: &Path) -> Finding {
    let at = existing_ancestor(if root.as_os_str().is_empty() { Path::new(".") } else { root });
    match nix::sys::statvfs::statvfs(at) {
        Ok(s) => {
            let read_only = s.flags().contains(nix::sys::statvfs::FsFlags::ST_RDONLY);
            let writable = nix::unistd::access(at, nix::unistd::AccessFlags::W_OK).is_ok();
            judge_room(read_only, writable, s.blocks_available().saturating_mul(s.fragment_size()), at)
        }
        Err(e) => Finding::warn(
            "disk",
            format!("cannot read the free space at {}: {e}", at.display()),
            "pass --root DIR on a file system you can write",
        ),
    }
}

/// A read-only file system (or a folder this user may not write) holds no evidence, whatever its
/// free space; else the free space is judged.
fn judge_room(read_only: bool, writable: bool, free: u64, at: &Path) -> Finding {
    match (read_only, writable) {
        (true, _) => unwritable(at, "a read-only file system"),
        (false, false) => unwritable(at, "a folder this user may not write"),
        (false, true) => judge_disk(free, at),
    }
}

fn unwritable(at: &Path, what: &str) -> Finding {
    Finding::warn(
        "disk",
        format!("{} is on {what}: a study's evidence cannot be written there", at.display()),
        "pass --root DIR on a file system you can write (for ab as for doctor)",
    )
}

pub(crate) fn judge_disk(free: u64, at: &Path) -> Finding {
    const NAME: &str = "disk";
    let value = format!("{:.1} GiB free at {}", free as f64 / (1u64 << 30) as f64, at.display());
    if free < DISK_MIN_BYTES {
        return Finding::warn(
            NAME,
            format!("{value}, under 1 GiB: a study's evidence may not fit"),
            "free space there, or pass --root DIR on a file system with room (for ab as for doctor)",
        );
    }
    Finding::ok(NAME, value)
}

#[cfg(test)]
mod tests {
    use super::super::finding::Status;
    use super::*;

    #[test]
    fn an_unwritable_root_warns_whatever_its_free_space() {
        let at = Path::new("/mnt/ro");
        for (read_only, writable, what) in
            [(true, true, "a read-only file system"), (false, false, "a folder this user may not write")]
        {
            let f = judge_room(read_only, writable, 100 << 30, at);
            assert_eq!(f.status, Status::Warn, "{}", f.value);
            assert_eq!(f.value, format!("/mnt/ro is on {what}: a study's evidence cannot be written there"));
        }
        assert_eq!(judge_room(false, true, 100 << 30, at).status, Status::Ok);
    }

    #[test]
    fn a_held_port_warns_and_a_free_one_is_ready() {
        let held = std::net::TcpListener::bind((HOST, 0)).unwrap();
        let taken = held.local_addr().unwrap().port();
        let f = port(Some(taken));
        assert_eq!(f.status, Status::Warn);
        assert!(f.value.contains(&format!("{HOST}:{taken} is in use")), "{}", f.value);
        assert!(f.fix.unwrap().contains("leave --port out"));
        drop(held);
        assert_eq!(port(Some(taken)).status, Status::Ok);
        assert_eq!(port(None).status, Status::Ok);
    }

    #[test]
    fn little_free_disk_warns_and_a_new_root_is_measured_where_it_would_be_made() {
        let d = tempfile::tempdir().unwrap();
        assert_eq!(judge_disk(512 << 20, d.path()).status, Status::Warn);
        assert_eq!(judge_disk(8 << 30, d.path()).value, format!("8.0 GiB free at {}", d.path().display()));
        let f = disk(&d.path().join("not/yet/made"));
        assert!(f.value.ends_with(&format!("free at {}", d.path().display())), "{}", f.value);
    }
}
