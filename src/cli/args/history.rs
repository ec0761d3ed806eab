//! `--history DB` and `--no-history`: where a finished study is recorded (docs/methodology.md
//! §15). The database is opened (created, migrated) before anything of the study is.
use crate::history::default_path;
use anyhow::{Context, Result};
use clap::Args;
use std::path::PathBuf;

/// The results history a command records into or reads.
#[derive(Args, Debug, Clone)]
pub(crate) struct HistoryDb {
    /// The results history database [default: $XDG_DATA_HOME/abprof/history.db, else
    /// ~/.local/share/abprof/history.db].
    #[arg(long = "history", value_name = "DB", value_parser = history_path)]
    pub(crate) history: Option<PathBuf>,
}

impl HistoryDb {
    pub(crate) fn path(&self) -> Result<PathBuf> {
        self.history.clone().or_else(default_path).context(
            "no place for the results history: set XDG_DATA_HOME or HOME, or pass --history DB (or --no-history)",
        )
    }
}

/// A study's record in the history: where, or not at all.
#[derive(Args, Debug, Clone)]
pub(crate) struct HistoryArgs {
    #[command(flatten)]
    pub(crate) db: HistoryDb,
    /// Do not record this run in the results history.
    #[arg(long, conflicts_with = "history")]
    pub(crate) no_history: bool,
}

impl HistoryArgs {
    /// Where this run records (`None` with --no-history); `finish/` opens it (creates, migrates)
    /// before anything of the run is.
    pub(crate) fn path(&self) -> Result<Option<PathBuf>> {
        if self.no_history {
            return Ok(None);
        }
        Ok(Some(self.db.path()?))
    }
}

fn history_path(s: &str) -> Result<PathBuf, String> {
    let p = PathBuf::from(s);
    if s.is_empty() {
        return Err("an empty path: pass a database file, e.g. --history ~/abprof-history.db".into());
    }
    if p.is_dir() {
        return Err(format!("{s} is a folder: pass the database file itself, e.g. --history {s}/history.db"));
    }
    Ok(p)
}
