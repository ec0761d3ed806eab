//! What an artifact records about itself: `build-info.json` for tools and `VERSION.txt` for
//! people (docs/methodology.md §6: base commit + patch hash + build configuration + binary hash).
use serde::{Deserialize, Serialize};
use std::fmt::Write;
use std::path::PathBuf;

pub(crate) const BINARY_PATH: &str = "bin/llama-server";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct PatchInfo {
    /// Where the patch was read from; a copy is kept in the artifact as `source.patch`.
    pub(crate) source: PathBuf,
    pub(crate) sha256: String,
    pub(crate) bytes: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct BuildInfo {
    pub(crate) name: String,
    pub(crate) repo: PathBuf,
    pub(crate) base_commit: String,
    pub(crate) patch: Option<PatchInfo>,
    /// The full `cmake` configure arguments.
    pub(crate) configure_args: Vec<String>,
    /// The build type, generator, compilers and every -D variable, as the cache holds them.
    pub(crate) cache_options: Vec<(String, String)>,
    /// `LANG: PATH — version` per compiler.
    pub(crate) compilers: Vec<String>,
    pub(crate) cmake_version: Option<String>,
    pub(crate) binary: String,
    pub(crate) binary_sha256: String,
    pub(crate) built_at: String,
    pub(crate) build_seconds: f64,
    pub(crate) abprof_version: String,
}

impl BuildInfo {
    pub(crate) fn version_txt(&self) -> String {
        let mut o = String::new();
        let _ = writeln!(o, "name: {}", self.name);
        let _ = writeln!(o, "base_commit: {}", self.base_commit);
        let _ = writeln!(o, "repo: {}", self.repo.display());
        match &self.patch {
            Some(p) => {
                let _ = writeln!(o, "patch: {} ({} bytes, kept as source.patch)", p.source.display(), p.bytes);
                let _ = writeln!(o, "patch_sha256: {}", p.sha256);
            }
            None => {
                let _ = writeln!(o, "patch: none");
            }
        }
        let _ = writeln!(o, "binary: {}", self.binary);
        let _ = writeln!(o, "binary_sha256: {}", self.binary_sha256);
        let _ = writeln!(o, "cmake: {}", self.cmake_version.as_deref().unwrap_or("unknown"));
        let _ = writeln!(o, "configure: cmake {}", self.configure_args.join(" "));
        for (k, v) in &self.cache_options {
            let _ = writeln!(o, "cache: {k}={v}");
        }
        for c in &self.compilers {
            let _ = writeln!(o, "compiler {c}");
        }
        let _ = writeln!(o, "built_at: {}", self.built_at);
        let _ = writeln!(o, "build_seconds: {:.1}", self.build_seconds);
        let _ = writeln!(o, "built_by: abprof {}", self.abprof_version);
        o
    }
}
