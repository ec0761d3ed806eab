//! `--history DB|URL` and `--no-history`: where a finished study is recorded (docs/methodology.md
//! §15). The location is parsed once, into a SQLite path or a PostgreSQL URL; the database is
//! opened (created, migrated) before anything of the study is.
use crate::history::{default_path, BadLocation, HistoryLocation};
use crate::refusal::Refusal;
use anyhow::{Context, Result};
use clap::Args;

/// The environment variable a CI job sets instead of passing `--history` to every command.
pub(crate) const HISTORY_ENV: &str = "ABPROF_HISTORY";

/// The results history a command records into or reads.
#[derive(Args, Debug, Clone)]
pub(crate) struct HistoryDb {
    /// The results history: a SQLite file, or a PostgreSQL database as postgres://USER@HOST:PORT/DB
    /// (password from PGPASSWORD or ~/.pgpass, never in the URL) [env: ABPROF_HISTORY; default:
    /// $XDG_DATA_HOME/abprof/history.db, else ~/.local/share/abprof/history.db].
    #[arg(long = "history", value_name = "DB|URL", value_parser = LocationParser)]
    pub(crate) history: Option<HistoryLocation>,
}

impl HistoryDb {
    /// `--history`, else `ABPROF_HISTORY`, else the default file.
    pub(crate) fn location(&self) -> Result<HistoryLocation> {
        if let Some(l) = &self.history {
            return Ok(l.clone());
        }
        if let Some(v) = std::env::var_os(HISTORY_ENV).filter(|v| !v.is_empty()) {
            let v = v.to_string_lossy();
            return v
                .parse::<HistoryLocation>()
                .map_err(|e| Refusal::of(BadLocation(format!("{HISTORY_ENV}: {e}"))).into());
        }
        default_path().map(HistoryLocation::Sqlite).context(
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
    /// Where this run records (`None` with --no-history); `app/` opens it (creates, migrates)
    /// before anything of the run is.
    pub(crate) fn location(&self) -> Result<Option<HistoryLocation>> {
        if self.no_history {
            return Ok(None);
        }
        Ok(Some(self.db.location()?))
    }
}

/// Parses `--history`; its error is our one line alone, never clap's "invalid value '…'", which
/// would echo a URL's password to the terminal and the CI log.
#[derive(Clone)]
struct LocationParser;

impl clap::builder::TypedValueParser for LocationParser {
    type Value = HistoryLocation;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        _arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<HistoryLocation, clap::Error> {
        let raw =
            |msg: String| clap::Error::raw(clap::error::ErrorKind::ValueValidation, format!("{msg}\n")).with_cmd(cmd);
        let s = value.to_str().ok_or_else(|| raw("--history: not UTF-8: pass a UTF-8 path or URL".into()))?;
        s.parse().map_err(|e: BadLocation| raw(e.0))
    }
}
