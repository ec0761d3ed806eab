//! Where the history lives, parsed once from `--history` or `ABPROF_HISTORY` (docs/methodology.md
//! §15 "backends"): a path is a SQLite file, a `postgres://` or `postgresql://` URL a PostgreSQL
//! database; any other `scheme://` is refused, never taken for a path. A URL never carries the
//! password (argv is visible to every user of the host): it comes from `PGPASSWORD` or a
//! `.pgpass`-format file.
use sha2::Digest;
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use thiserror::Error;

use super::error::HistoryError;

/// A `--history` / `ABPROF_HISTORY` value that names no usable history: a usage error (exit 2).
#[derive(Debug, Error)]
#[error("{0}")]
pub(crate) struct BadLocation(pub(crate) String);

/// A PostgreSQL history: the URL as given (it holds no password), its parsed settings and how
/// its connections are secured.
#[derive(Debug, Clone)]
pub(crate) struct PgTarget {
    pub(crate) url: String,
    pub(crate) config: postgres::Config,
    pub(crate) tls: super::tls::TlsPolicy,
}

/// Where a command records or reads.
#[derive(Debug, Clone)]
pub(crate) enum HistoryLocation {
    Sqlite(PathBuf),
    Postgres(Box<PgTarget>),
}

impl fmt::Display for HistoryLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HistoryLocation::Sqlite(p) => write!(f, "{}", p.display()),
            HistoryLocation::Postgres(t) => f.write_str(&t.url),
        }
    }
}

/// The scheme of `s` when it starts like a URL (`letters://`).
fn scheme(s: &str) -> Option<&str> {
    let (head, _) = s.split_once("://")?;
    let mut chars = head.chars();
    (chars.next()?.is_ascii_alphabetic() && chars.all(|c| c.is_ascii_alphanumeric() || "+.-".contains(c)))
        .then_some(head)
}

impl FromStr for HistoryLocation {
    type Err = BadLocation;

    fn from_str(s: &str) -> Result<Self, BadLocation> {
        if s.is_empty() {
            return Err(BadLocation("an empty path: pass a database file, e.g. --history ~/abprof-history.db".into()));
        }
        match scheme(s) {
            Some(sc) if sc.eq_ignore_ascii_case("postgres") || sc.eq_ignore_ascii_case("postgresql") => {
                Ok(HistoryLocation::Postgres(Box::new(postgres_target(s)?)))
            }
            Some(sc) => Err(BadLocation(format!(
                "--history {s}: unknown scheme {sc}://: pass a SQLite file path or a postgres://USER@HOST:PORT/DB URL"
            ))),
            None => {
                let p = PathBuf::from(s);
                if p.is_dir() {
                    return Err(BadLocation(format!(
                        "{s} is a folder: pass the database file itself, e.g. --history {s}/history.db"
                    )));
                }
                Ok(HistoryLocation::Sqlite(p))
            }
        }
    }
}

/// The URL's settings with its user filled in as libpq would (`PGUSER`, else the login name).
fn postgres_target(url: &str) -> Result<PgTarget, BadLocation> {
    let (client_url, tls) = super::tls::split_policy(url).map_err(|e| BadLocation(e.0))?;
    let mut config = postgres::Config::from_str(&client_url).map_err(|e| {
        BadLocation(format!("--history {url}: not a PostgreSQL URL ({e}): write postgres://USER@HOST:PORT/DB"))
    })?;
    if config.get_password().is_some() {
        return Err(BadLocation(
            "--history: the URL carries a password, which every user of this host can read in the process list: remove it from the URL and set PGPASSWORD or a ~/.pgpass line (PGPASSFILE names another file)"
                .into(),
        ));
    }
    config.ssl_mode(tls.mode.wire());
    if config.get_hosts().is_empty() {
        config.host("localhost");
    }
    if config.get_user().is_none() {
        let user =
            ["PGUSER", "USER", "LOGNAME"].into_iter().find_map(|v| std::env::var(v).ok().filter(|u| !u.is_empty()));
        config.user(user.as_deref().unwrap_or("postgres"));
    }
    Ok(PgTarget { url: url.to_string(), config, tls })
}

impl PgTarget {
    fn host_port(&self) -> (String, u16) {
        let host = match self.config.get_hosts().first() {
            Some(postgres::config::Host::Tcp(h)) => h.clone(),
            // libpq matches a socket connection's .pgpass line as localhost.
            _ => "localhost".into(),
        };
        (host, self.config.get_ports().first().copied().unwrap_or(5432))
    }

    /// The target of `url` with `password` set (the tests' server).
    #[cfg(test)]
    pub(crate) fn with_password(url: &str, password: &str) -> PgTarget {
        let mut t = postgres_target(url).expect("a PostgreSQL URL");
        t.config.password(password);
        t
    }

    /// The database itself, `postgres://USER@HOST:PORT/DB`: what names its outbox.
    pub(crate) fn database_key(&self) -> String {
        let (host, port) = self.host_port();
        let user = self.config.get_user().unwrap_or("");
        format!("postgres://{user}@{host}:{port}/{}", self.config.get_dbname().unwrap_or(user))
    }

    /// The settings to connect with: the password from `PGPASSWORD`, else the first matching
    /// line of the `.pgpass` file (`PGPASSFILE`, else `~/.pgpass`).
    pub(crate) fn connect_config(&self) -> postgres::Config {
        let mut c = self.config.clone();
        let password = std::env::var("PGPASSWORD").ok().filter(|p| !p.is_empty()).or_else(|| {
            let file = std::env::var_os("PGPASSFILE")
                .map(PathBuf::from)
                .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".pgpass")))?;
            let text = std::fs::read_to_string(file).ok()?;
            let (host, port) = self.host_port();
            let db = c.get_dbname().or(c.get_user()).unwrap_or("");
            pgpass_lookup(&text, &host, port, db, c.get_user().unwrap_or(""))
        });
        if let Some(p) = password {
            c.password(p);
        }
        c
    }
}

/// The password of the first `.pgpass` line matching `hostname:port:database:username` (`*`
/// matches anything; `\:` and `\\` are a literal colon and backslash), as libpq reads it.
pub(crate) fn pgpass_lookup(text: &str, host: &str, port: u16, db: &str, user: &str) -> Option<String> {
    let port = port.to_string();
    text.lines().filter(|l| !l.trim_start().starts_with('#') && !l.trim().is_empty()).find_map(|line| {
        let fields = split_pgpass(line);
        if fields.len() != 5 {
            return None;
        }
        let want = [host, port.as_str(), db, user];
        fields[..4].iter().zip(want).all(|(f, w)| f == "*" || f == w).then(|| fields[4].clone())
    })
}

fn split_pgpass(line: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.last_mut().expect("one field").extend(chars.next()),
            ':' if out.len() < 5 => out.push(String::new()),
            c => out.last_mut().expect("one field").push(c),
        }
    }
    out
}

/// Where the history lives unless `--history` says otherwise: `$XDG_DATA_HOME/abprof/history.db`,
/// else `~/.local/share/abprof/history.db`.
pub(crate) fn default_path() -> Option<PathBuf> {
    let data = std::env::var_os("XDG_DATA_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| {
            std::env::var_os("HOME").filter(|h| !h.is_empty()).map(|h| PathBuf::from(h).join(".local/share"))
        })?;
    Some(data.join("abprof").join("history.db"))
}

/// The outbox of `target` (docs/methodology.md §15 "outbox"): one SQLite file per database,
/// `pending/USER@HOST_PORT_DB-HASH.db` beside the default history, so a push sends to a database
/// only the studies that were meant for it. The name is the database's (user, host, port,
/// database), never its TLS settings or options: the same database reached another way has the
/// same outbox.
pub(crate) fn pending_path(target: &PgTarget) -> Result<PathBuf, HistoryError> {
    let key = target.database_key();
    let readable: String = key
        .trim_start_matches("postgres://")
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || "@.-".contains(c) { c } else { '_' })
        .collect();
    let hash = hex::encode(&sha2::Sha256::digest(key.as_bytes())[..4]);
    outbox_dir().map(|d| d.join(format!("{readable}-{hash}.db")))
}

/// The outbox an abprof before per-database outboxes kept for every database: `pending.db`.
pub(crate) fn unnamed_pending_path() -> Option<PathBuf> {
    default_path().map(|p| p.with_file_name("pending.db"))
}

/// The folder of the per-database outboxes.
pub(crate) fn outbox_dir() -> Result<PathBuf, HistoryError> {
    default_path().and_then(|p| Some(p.parent()?.join("pending"))).ok_or_else(|| HistoryError::Open {
        path: "pending".into(),
        detail: "no place for the outbox: set XDG_DATA_HOME or HOME".into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<HistoryLocation, String> {
        s.parse::<HistoryLocation>().map_err(|e| e.to_string())
    }

    #[test]
    fn a_path_is_sqlite_a_postgres_url_is_postgres_and_another_scheme_is_refused() {
        assert!(matches!(parse("h.db"), Ok(HistoryLocation::Sqlite(p)) if p == Path::new("h.db")));
        assert!(matches!(parse("./a:b/h.db"), Ok(HistoryLocation::Sqlite(_))));
        for url in ["postgres://ci@db.example:5433/abprof", "postgresql://ci@db.example/abprof?sslmode=disable"] {
            let Ok(HistoryLocation::Postgres(t)) = parse(url) else { panic!("{url}") };
            assert_eq!(t.url, url);
            assert_eq!(t.config.get_user(), Some("ci"));
        }
        let e = parse("mysql://x@y/z").unwrap_err();
        assert!(e.contains("unknown scheme mysql://") && e.contains("postgres://"), "{e}");
        let e = parse("postgres://ci:hunter2@db/abprof").unwrap_err();
        assert!(e.contains("carries a password") && e.contains("PGPASSWORD") && !e.contains("hunter2"), "{e}");
        let Ok(HistoryLocation::Postgres(t)) = parse("postgres://ci@db/abprof?sslmode=require") else { panic!() };
        assert_eq!(t.tls.mode, super::super::tls::SslMode::Require);
        assert_eq!(t.config.get_ssl_mode(), postgres::config::SslMode::Require);
    }

    #[test]
    fn each_database_has_its_own_outbox_whatever_its_tls_settings() {
        let path = |url: &str| {
            let Ok(HistoryLocation::Postgres(t)) = parse(url) else { panic!("{url}") };
            pending_path(&t).unwrap()
        };
        let a = path("postgres://ci@db.example:5433/team");
        assert_eq!(a, path("postgres://ci@db.example:5433/team?sslmode=disable&application_name=x"));
        assert_ne!(a, path("postgres://ci@db.example:5433/other"));
        assert_ne!(a, path("postgres://ci@db.example/team"), "another port, another database");
        let name = a.file_name().unwrap().to_str().unwrap();
        assert!(name.starts_with("ci@db.example_5433_team-") && name.ends_with(".db"), "{name}");
        assert_eq!(a.parent().unwrap().file_name().unwrap(), "pending");
    }

    #[test]
    fn a_pgpass_line_matches_by_field_with_wildcards_and_escapes() {
        let text = "# comment\nother:5432:*:ci:no\ndb.example:5433:abprof:ci:s\\:ecret\n*:*:*:*:fallback\n";
        assert_eq!(pgpass_lookup(text, "db.example", 5433, "abprof", "ci").as_deref(), Some("s:ecret"));
        assert_eq!(pgpass_lookup(text, "db.example", 5432, "abprof", "ci").as_deref(), Some("fallback"));
        assert_eq!(pgpass_lookup("h:1:d:u:p", "h", 2, "d", "u"), None);
    }
}
