//! Where abprof keeps what it may reuse across runs (hashes, measured bandwidth, artifacts):
//! `$ABPROF_CACHE`, else `~/.cache/abprof`.
use std::path::PathBuf;

pub(crate) fn cache_dir() -> PathBuf {
    std::env::var_os("ABPROF_CACHE")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/abprof")))
        .unwrap_or_else(|| std::env::temp_dir().join("abprof-cache"))
}
