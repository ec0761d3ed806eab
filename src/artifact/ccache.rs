//! ccache for candidate builds (docs/methodology.md §6 "incremental rebuilds"): every build starts
//! in a fresh worktree and build folder, so without a compiler cache each one recompiles the whole
//! tree. With ccache as the compiler launcher and `CCACHE_BASEDIR` set to the build's scratch
//! folder, the compiler command lines of two worktrees are the same relative paths, so a build of
//! the next commit compiles only the files that changed.
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::process::Command;

pub(crate) const PROGRAM: &str = "ccache";

/// ccache on PATH, unless the user chose a compiler launcher or turned llama.cpp's own ccache
/// use off (`-DGGML_CCACHE=OFF`).
pub(crate) fn launcher(user: &[String]) -> Option<PathBuf> {
    let chose = |a: &String| {
        a.starts_with("-DCMAKE_C_COMPILER_LAUNCHER")
            || a.starts_with("-DCMAKE_CXX_COMPILER_LAUNCHER")
            || a.starts_with("-DGGML_CCACHE")
    };
    if user.iter().any(chose) {
        return None;
    }
    crate::child::on_path(PROGRAM)
}

/// The configure arguments that put `ccache` in front of the C and C++ compilers. llama.cpp would
/// find ccache itself (GGML_CCACHE), but only for its own targets and only when found on PATH;
/// an explicit launcher covers every CMake project the same way.
pub(crate) fn configure_args(ccache: &Path) -> Vec<String> {
    ["C", "CXX"].iter().map(|lang| format!("-DCMAKE_{lang}_COMPILER_LAUNCHER={}", ccache.display())).collect()
}

/// The environment of a build: paths under `scratch` (the worktree and the build folder) are
/// hashed relative to it, so builds in other scratch folders share hits.
pub(crate) fn env(scratch: &Path) -> Vec<(String, String)> {
    vec![("CCACHE_BASEDIR".into(), scratch.display().to_string())]
}

/// ccache's counters that say what a build got from the cache (`ccache --print-stats`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct CcacheCounters {
    pub(crate) direct_hits: u64,
    pub(crate) preprocessed_hits: u64,
    pub(crate) misses: u64,
    /// Compilations that failed (a commit that does not build).
    pub(crate) compile_failed: u64,
}

impl CcacheCounters {
    /// ccache's statistics now, or None when ccache is missing or says nothing readable.
    pub(crate) fn read() -> Option<CcacheCounters> {
        let out = Command::new(PROGRAM).arg("--print-stats").output().ok()?;
        out.status.success().then(|| parse_print_stats(&String::from_utf8_lossy(&out.stdout)))?
    }

    /// What happened between `before` and `self`. ccache's counters are global to its cache
    /// folder, so a compilation by another process meanwhile counts too.
    pub(crate) fn since(&self, before: &CcacheCounters) -> CcacheCounters {
        CcacheCounters {
            direct_hits: self.direct_hits.saturating_sub(before.direct_hits),
            preprocessed_hits: self.preprocessed_hits.saturating_sub(before.preprocessed_hits),
            misses: self.misses.saturating_sub(before.misses),
            compile_failed: self.compile_failed.saturating_sub(before.compile_failed),
        }
    }

    pub(crate) fn hits(&self) -> u64 {
        self.direct_hits + self.preprocessed_hits
    }

    /// Hits over cacheable compilations, %; None when nothing was compiled.
    pub(crate) fn hit_rate_pct(&self) -> Option<f64> {
        let all = self.hits() + self.misses;
        (all > 0).then(|| 100.0 * self.hits() as f64 / all as f64)
    }
}

/// `--print-stats` prints one `name<TAB>value` line per counter (ccache ≥ 4.4).
fn parse_print_stats(text: &str) -> Option<CcacheCounters> {
    let mut c = CcacheCounters::default();
    let mut seen = false;
    for line in text.lines() {
        let Some((key, value)) = line.split_once('\t') else { continue };
        let Ok(n) = value.trim().parse::<u64>() else { continue };
        let slot = match key.trim() {
            "direct_cache_hit" => &mut c.direct_hits,
            "preprocessed_cache_hit" => &mut c.preprocessed_hits,
            "cache_miss" => &mut c.misses,
            "compile_failed" => &mut c.compile_failed,
            _ => continue,
        };
        *slot = n;
        seen = true;
    }
    seen.then_some(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_ccache_print_stats_and_differences() {
        // Lines of a real `ccache --print-stats` (4.7.5, Debian 12) after one miss and one hit.
        let before = parse_print_stats(
            "autoconf_test\t0\ncache_miss\t0\ncompile_failed\t0\ndirect_cache_hit\t0\npreprocessed_cache_hit\t0\n",
        )
        .unwrap();
        let after = parse_print_stats(
            "cache_miss\t1\ncache_size_kibibyte\t8\ncompile_failed\t2\ndirect_cache_hit\t1\ndirect_cache_miss\t1\npreprocessed_cache_hit\t3\npreprocessed_cache_miss\t1\nstats_updated_timestamp\t1796044019\n",
        )
        .unwrap();
        let d = after.since(&before);
        assert_eq!(d, CcacheCounters { direct_hits: 1, preprocessed_hits: 3, misses: 1, compile_failed: 2 });
        assert_eq!(d.hit_rate_pct(), Some(80.0));
        assert_eq!(CcacheCounters::default().hit_rate_pct(), None);
        assert!(parse_print_stats("ccache: error: unknown option").is_none());
    }

    #[test]
    fn a_launcher_the_user_chose_wins() {
        assert!(launcher(&["-DCMAKE_CXX_COMPILER_LAUNCHER=sccache".into()]).is_none());
        assert!(launcher(&["-DGGML_CCACHE=OFF".into()]).is_none());
        assert_eq!(
            configure_args(Path::new("/usr/bin/ccache")),
            ["-DCMAKE_C_COMPILER_LAUNCHER=/usr/bin/ccache", "-DCMAKE_CXX_COMPILER_LAUNCHER=/usr/bin/ccache"]
        );
    }
}
