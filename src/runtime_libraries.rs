//! The GPU runtime a server actually loaded (docs/methodology.md §2.2): the libraries its process
//! (and, under a tracer, its descendants) mapped, read from `/proc/<pid>/maps` while it runs. The
//! host's `$ROCM_PATH/.info/version` says what is installed, not what a server built against a
//! TheRock tarball, a pip wheel, a toolbox image or RPATH-vendored libraries runs; the maps say
//! which files the loader chose, and a file name carries its version.
use serde::{Deserialize, Serialize};
use std::path::Path;

/// What a mapped library is, by its file name's stem (the name up to `.so`): the GPU runtimes,
/// the math libraries that pick kernels, the profiler libraries a tracer injects, and ggml's own
/// backends (a `GGML_BACKEND_DL` build loads them at run time).
const ROLES: &[(&str, &str)] = &[
    ("libamdhip64", "HIP runtime"),
    ("libhsa-runtime64", "HSA runtime"),
    ("libhsakmt", "ROCt thunk"),
    ("libamd_comgr", "AMD comgr"),
    ("librocblas", "rocBLAS"),
    ("libhipblaslt", "hipBLASLt"),
    ("libhipblas", "hipBLAS"),
    ("librocprofiler-sdk", "ROCprofiler-SDK"),
    ("librocprofiler-sdk-tool", "ROCprofiler-SDK tool"),
    ("librocprofiler-register", "ROCprofiler register"),
    ("libroctracer64", "roctracer"),
    ("libcudart", "CUDA runtime"),
    ("libcuda", "CUDA driver"),
    ("libcublas", "cuBLAS"),
    ("libcublasLt", "cuBLASLt"),
    ("libnvrtc", "NVRTC"),
    ("libcupti", "CUPTI"),
    ("libToolsInjection64", "Nsight Systems injection"),
    ("libvulkan", "Vulkan loader"),
    ("libgomp", "OpenMP runtime"),
    ("libllama", "libllama"),
];

/// One mapped library that matters to a GPU measurement.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct RuntimeLibrary {
    /// What it is ("HIP runtime", "ggml backend").
    pub(crate) role: String,
    /// The file the loader mapped (the kernel's path: symbolic links already resolved).
    pub(crate) path: String,
    /// The version its file name carries (`libamdhip64.so.7.1.25424` → `7.1.25424`), where it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) version: Option<String>,
    /// The ROCm release its folder belongs to (`../.info/version` beside `lib/`), where there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) rocm_release: Option<String>,
    /// Size in bytes and modification time (ns since the epoch): a library rebuilt or replaced in
    /// place under the same name changes one of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) size: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) mtime_ns: Option<i128>,
}

impl RuntimeLibrary {
    /// `libamdhip64.so.7.1.25424 (ROCm 7.1.0)`: the file name and what it belongs to.
    pub(crate) fn short(&self) -> String {
        let name = Path::new(&self.path).file_name().map_or(self.path.clone(), |n| n.to_string_lossy().into_owned());
        match &self.rocm_release {
            Some(r) => format!("{name} (ROCm {r})"),
            None => name,
        }
    }
}

/// The runtime libraries of one server, sorted by path.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct LoadedRuntime {
    pub(crate) libraries: Vec<RuntimeLibrary>,
}

impl LoadedRuntime {
    /// Reads the maps of `pid` and of every descendant (a tracer's server is its child).
    pub(crate) fn of_process_tree(pid: u32) -> LoadedRuntime {
        let mut paths = Vec::new();
        for p in process_tree(pid) {
            if let Ok(maps) = std::fs::read_to_string(format!("/proc/{p}/maps")) {
                paths.extend(mapped_files(&maps));
            }
        }
        LoadedRuntime::of_paths(paths)
    }

    /// The runtime libraries among `paths` (each path once).
    pub(crate) fn of_paths(paths: impl IntoIterator<Item = String>) -> LoadedRuntime {
        let mut libraries: Vec<RuntimeLibrary> = Vec::new();
        for path in paths {
            if libraries.iter().any(|l| l.path == path) {
                continue;
            }
            let Some(role) = role_of(&path) else { continue };
            let meta = std::fs::metadata(&path).ok();
            libraries.push(RuntimeLibrary {
                role,
                version: version_of(&path),
                rocm_release: rocm_release_of(Path::new(&path)),
                size: meta.as_ref().map(|m| m.len()),
                mtime_ns: meta.as_ref().map(mtime_ns),
                path,
            });
        }
        libraries.sort_by(|a, b| a.path.cmp(&b.path));
        LoadedRuntime { libraries }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.libraries.is_empty()
    }

    /// What differs from `reference`, one phrase per library (`libamdhip64.so.7.1.0 → libamdhip64.so.7.2.0`,
    /// `libggml-hip.so rebuilt in place`, `libcupti.so.13 loaded`, `… no longer loaded`); empty when the same.
    pub(crate) fn changes_from(&self, reference: &LoadedRuntime) -> Vec<String> {
        let mut out = Vec::new();
        for old in &reference.libraries {
            match self.libraries.iter().find(|l| l.path == old.path) {
                Some(new) if new == old => {}
                Some(new) => out.push(format!("{} rebuilt or replaced in place", new.short())),
                None => match self.libraries.iter().find(|l| l.role == old.role) {
                    Some(new) if !reference.libraries.iter().any(|r| r.path == new.path) => {
                        out.push(format!("{} → {}", old.path, new.path))
                    }
                    _ => out.push(format!("{} no longer loaded", old.path)),
                },
            }
        }
        for new in &self.libraries {
            let known = reference.libraries.iter().any(|r| r.path == new.path || r.role == new.role);
            if !known {
                out.push(format!("{} loaded", new.path));
            }
        }
        out
    }

    /// One line per role, e.g. `HIP runtime libamdhip64.so.7.1.25424 (ROCm 7.1.0)`; the ggml
    /// backends on one line.
    pub(crate) fn lines(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for l in &self.libraries {
            let line = format!("{} {}", l.role, l.short());
            if !out.contains(&line) {
                out.push(line);
            }
        }
        out
    }
}

fn mtime_ns(m: &std::fs::Metadata) -> i128 {
    use std::os::unix::fs::MetadataExt;
    m.mtime() as i128 * 1_000_000_000 + m.mtime_nsec() as i128
}

/// `pid` first, then every live descendant (one read of /proc; repeated passes over it reach
/// grandchildren whatever the pid order). Also how a wrapper's server is found to signal it.
pub(crate) fn process_tree(pid: u32) -> Vec<u32> {
    let mut family = vec![pid];
    let Ok(entries) = std::fs::read_dir("/proc") else { return family };
    let parents: Vec<(u32, u32)> = entries
        .flatten()
        .filter_map(|e| {
            let p: u32 = e.file_name().to_string_lossy().parse().ok()?;
            let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
            let close = stat.rfind(')')?;
            let ppid: u32 = stat[close + 1..].split_whitespace().nth(1)?.parse().ok()?;
            Some((p, ppid))
        })
        .collect();
    loop {
        let before = family.len();
        for &(p, ppid) in &parents {
            if family.contains(&ppid) && !family.contains(&p) {
                family.push(p);
            }
        }
        if family.len() == before {
            return family;
        }
    }
}

/// The files a maps text names (the sixth column, where it is an absolute path), each once, in
/// order; a mapping of a deleted file (`… (deleted)`) keeps its path without the mark.
pub(crate) fn mapped_files(maps: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in maps.lines() {
        // address perms offset dev inode path — the path may hold spaces.
        let mut rest = line;
        for _ in 0..5 {
            rest = rest.trim_start();
            rest = rest.find(char::is_whitespace).map_or("", |i| &rest[i..]);
        }
        let path = rest.trim();
        let path = path.strip_suffix(" (deleted)").unwrap_or(path);
        if path.starts_with('/') && !out.iter().any(|p| p == path) {
            out.push(path.to_string());
        }
    }
    out
}

/// The role of a library path, by its file name's stem; ggml's backends by prefix.
fn role_of(path: &str) -> Option<String> {
    let name = Path::new(path).file_name()?.to_str()?;
    let stem = name.split(".so").next()?;
    if !name.contains(".so") {
        return None;
    }
    if stem.starts_with("libggml") {
        return Some("ggml backend".into());
    }
    ROLES.iter().find(|(s, _)| *s == stem).map(|(_, role)| role.to_string())
}

/// The version a library's file name carries after `.so.`.
fn version_of(path: &str) -> Option<String> {
    let name = Path::new(path).file_name()?.to_str()?;
    let (_, version) = name.split_once(".so.")?;
    (!version.is_empty() && version.chars().all(|c| c.is_ascii_digit() || c == '.')).then(|| version.to_string())
}

/// ROCm's release file for a library in `ROOT/lib/` or `ROOT/lib64/` (`ROOT/.info/version`).
fn rocm_release_of(path: &Path) -> Option<String> {
    let root = path.parent()?.parent()?;
    let text = std::fs::read_to_string(root.join(".info/version")).ok()?;
    Some(text.trim().to_string()).filter(|s| !s.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines of a real `/proc/PID/maps` shape: address, perms, offset, dev, inode, path.
    const MAPS: &str = "\
5581a2a4b000-5581a2b2d000 r--p 00000000 103:02 1311 /opt/llama/bin/llama-server
7f1c3a000000-7f1c3a200000 r-xp 00000000 103:02 2242 /opt/rocm-7.1.0/lib/libamdhip64.so.7.1.25424
7f1c3b000000-7f1c3b100000 r--p 00000000 103:02 2243 /opt/rocm-7.1.0/lib/libhsa-runtime64.so.1.15.0
7f1c3c000000-7f1c3c100000 r-xp 00000000 103:02 4410 /opt/llama/lib/libggml-hip.so
7f1c3c100000-7f1c3c200000 r--p 00100000 103:02 4410 /opt/llama/lib/libggml-hip.so
7f1c3d000000-7f1c3d100000 r-xp 00000000 103:02 4411 /opt/llama/lib/libggml-base.so
7f1c3e000000-7f1c3e100000 r-xp 00000000 103:02 9001 /usr/lib/x86_64-linux-gnu/libc.so.6
7f1c3f000000-7f1c3f100000 rw-p 00000000 00:00 0 
7f1c40000000-7f1c40001000 rw-s 00000000 00:05 77 /dev/kfd
7f1c41000000-7f1c41100000 r-xp 00000000 103:02 5150 /tmp/dir with space/libcudart.so.12.4.127 (deleted)
7ffd6b7e3000-7ffd6b804000 rw-p 00000000 00:00 0                          [stack]
";

    #[test]
    fn the_maps_give_each_runtime_library_once_with_its_version() {
        let rt = LoadedRuntime::of_paths(mapped_files(MAPS));
        let got: Vec<(&str, &str, Option<&str>)> =
            rt.libraries.iter().map(|l| (l.role.as_str(), l.path.as_str(), l.version.as_deref())).collect();
        assert_eq!(
            got,
            vec![
                ("ggml backend", "/opt/llama/lib/libggml-base.so", None),
                ("ggml backend", "/opt/llama/lib/libggml-hip.so", None),
                ("HIP runtime", "/opt/rocm-7.1.0/lib/libamdhip64.so.7.1.25424", Some("7.1.25424")),
                ("HSA runtime", "/opt/rocm-7.1.0/lib/libhsa-runtime64.so.1.15.0", Some("1.15.0")),
                ("CUDA runtime", "/tmp/dir with space/libcudart.so.12.4.127", Some("12.4.127")),
            ],
            "sorted by path, each once (libggml-hip.so has two mappings), [stack] and /dev/kfd left out"
        );
    }

    #[test]
    fn a_library_from_another_folder_or_rebuilt_in_place_is_a_change() {
        let a = LoadedRuntime::of_paths(mapped_files(MAPS));
        assert!(a.changes_from(&a).is_empty());
        let hip = a.libraries.iter().position(|l| l.role == "HIP runtime").unwrap();
        let mut b = a.clone();
        b.libraries[hip].path = "/opt/rocm-7.2.0/lib/libamdhip64.so.7.2.26015".into();
        assert_eq!(
            b.changes_from(&a),
            vec!["/opt/rocm-7.1.0/lib/libamdhip64.so.7.1.25424 → /opt/rocm-7.2.0/lib/libamdhip64.so.7.2.26015"]
        );
        let mut c = a.clone();
        c.libraries[0].mtime_ns = Some(7);
        assert_eq!(c.changes_from(&a), vec!["libggml-base.so rebuilt or replaced in place"]);
        let mut d = a.clone();
        d.libraries.push(RuntimeLibrary {
            role: "CUPTI".into(),
            path: "/usr/local/cuda/lib64/libcupti.so.13".into(),
            version: Some("13".into()),
            rocm_release: None,
            size: None,
            mtime_ns: None,
        });
        assert_eq!(d.changes_from(&a), vec!["/usr/local/cuda/lib64/libcupti.so.13 loaded"]);
        assert_eq!(a.changes_from(&d), vec!["/usr/local/cuda/lib64/libcupti.so.13 no longer loaded"]);
    }

    #[test]
    fn a_rocm_folder_names_its_release() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join("lib")).unwrap();
        std::fs::create_dir_all(root.path().join(".info")).unwrap();
        std::fs::write(root.path().join(".info/version"), "7.1.0-20\n").unwrap();
        let lib = root.path().join("lib/libamdhip64.so.7.1.25424");
        std::fs::write(&lib, b"\x7fELF").unwrap();
        let rt = LoadedRuntime::of_paths([lib.display().to_string()]);
        assert_eq!(rt.libraries[0].rocm_release.as_deref(), Some("7.1.0-20"));
        assert_eq!(rt.libraries[0].size, Some(4));
        assert_eq!(rt.lines(), vec!["HIP runtime libamdhip64.so.7.1.25424 (ROCm 7.1.0-20)"]);
    }

    /// This test's own process maps libc at least; no GPU library, so nothing is kept from it
    /// unless the test binary links OpenMP.
    #[test]
    fn reading_a_live_process_does_not_fail() {
        let rt = LoadedRuntime::of_process_tree(std::process::id());
        assert!(rt.libraries.iter().all(|l| l.path.starts_with('/')));
    }
}
