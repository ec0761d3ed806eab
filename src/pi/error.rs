use std::path::PathBuf;
use thiserror::Error;

#[derive(Debug, Error)]
pub(crate) enum PiError {
    #[error("pi not found at {0}: install it with `npm install -g @mariozechner/pi-coding-agent@0.73.1` (scripts/system-deps does) or pass --pi-bin")]
    PiMissing(PathBuf),
    #[error("could not start pi ({bin}): {source}")]
    PiSpawn { bin: PathBuf, source: std::io::Error },
    #[error("`{} --version` did not answer within {secs} s and was stopped: check that pi runs (`pi --version`), or pass another --pi-bin", bin.display())]
    VersionTimedOut { bin: PathBuf, secs: u64 },
}
