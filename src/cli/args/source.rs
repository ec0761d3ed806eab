//! `--repo`, `--patch`, `--out`, `--jobs` and the CMake arguments after `--`: what a candidate
//! build is made from and where it is kept.
use clap::Args;
use std::path::PathBuf;

/// Source: the tree a build reads, the one patch on top, the artifact folder, the build's
/// parallelism and the CMake arguments (build, bisect).
#[derive(Args, Debug, Clone)]
pub(crate) struct SourceArgs {
    /// The git source tree (it may hold uncommitted work: it is only read).
    #[arg(long, value_name = "DIR")]
    pub(crate) repo: PathBuf,
    /// One patch applied with `git apply` on top of the commit (e.g. `git diff BASE -- file.cu`).
    #[arg(long, value_name = "FILE")]
    pub(crate) patch: Option<PathBuf>,
    /// Where artifact folders are kept (default $ABPROF_CACHE/artifacts, else ~/.cache/abprof/artifacts).
    #[arg(long, value_name = "DIR")]
    pub(crate) out: Option<PathBuf>,
    /// Parallel build jobs (default: the number of CPUs).
    #[arg(long, value_name = "N", value_parser = crate::bounds::u32_flag(1, 4096))]
    pub(crate) jobs: Option<u32>,
    /// CMake configure arguments after `--`, e.g. -DGGML_HIP=ON (Ninja and Release unless given).
    #[arg(last = true, value_name = "CMAKE_ARGS")]
    pub(crate) cmake_args: Vec<String>,
}

impl SourceArgs {
    pub(crate) fn out(&self) -> PathBuf {
        if let Some(o) = &self.out {
            return o.clone();
        }
        if let Some(c) = std::env::var_os("ABPROF_CACHE") {
            return PathBuf::from(c).join("artifacts");
        }
        let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_else(std::env::temp_dir);
        home.join(".cache/abprof/artifacts")
    }

    pub(crate) fn jobs(&self) -> usize {
        self.jobs.map_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()), |j| j as usize)
    }
}
