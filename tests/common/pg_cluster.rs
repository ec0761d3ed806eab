//! A real PostgreSQL server for the history's tests (docs/methodology.md §15 "backends"): a
//! fresh cluster made by Debian's `initdb` in a temporary folder, listening on a free local port
//! and on a unix socket inside that folder, stopped (and removed) on drop. Run as root, the
//! server refuses to start, so it runs as `nobody` (setpriv). Also compiled into the library's
//! unit tests (src/history/postgres.rs includes this file).
#![allow(dead_code)]
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The superuser's password: the tests reach the server over TCP with scram-sha-256.
pub const PG_PASSWORD: &str = "abprof-test-secret";
pub const PG_USER: &str = "abprof";
const NOBODY: u32 = 65534;

/// The newest Debian PostgreSQL's binaries (`ABPROF_PG_BIN` names another folder).
fn bin_dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("ABPROF_PG_BIN") {
        return Some(PathBuf::from(d));
    }
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .flatten()
        .filter_map(|e| Some((e.file_name().to_str()?.parse().ok()?, e.path().join("bin"))))
        .filter(|(_, b): &(u32, PathBuf)| b.join("initdb").is_file() && b.join("postgres").is_file())
        .collect();
    found.sort();
    found.pop().map(|(_, b)| b)
}

pub struct PgCluster {
    pub dir: tempfile::TempDir,
    pub port: u16,
    bin: PathBuf,
    server: Option<Child>,
    /// TCP sessions over TLS only ([`PgCluster::start_tls`]).
    tls: bool,
}

/// Root (the owner of /proc/self is the effective user): the server must run as another user.
fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

fn give_to_server_user(p: &Path) {
    if is_root() {
        std::os::unix::fs::chown(p, Some(NOBODY), Some(NOBODY)).unwrap();
    }
}

fn as_server_user(bin: &Path, tool: &str) -> Command {
    if is_root() {
        let mut c = Command::new("setpriv");
        c.args([format!("--reuid={NOBODY}"), format!("--regid={NOBODY}"), "--clear-groups".into()]);
        c.arg(bin.join(tool));
        c
    } else {
        Command::new(bin.join(tool))
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

impl PgCluster {
    /// A new cluster, started; `None` (with a line saying why) only when PostgreSQL is not
    /// installed and `ABPROF_REQUIRE_POSTGRES` is unset (scripts/test sets it).
    pub fn start() -> Option<PgCluster> {
        let mut c = PgCluster::init()?;
        c.resume();
        Some(c)
    }

    /// A new cluster on a free port, not started yet: a database that cannot be reached.
    pub fn init() -> Option<PgCluster> {
        let Some(bin) = bin_dir() else {
            assert!(
                std::env::var_os("ABPROF_REQUIRE_POSTGRES").is_none(),
                "ABPROF_REQUIRE_POSTGRES is set but no PostgreSQL is installed: run scripts/system-deps (Debian's postgresql)"
            );
            eprintln!(
                "skipped: no PostgreSQL under /usr/lib/postgresql (install Debian's postgresql, or set ABPROF_PG_BIN)"
            );
            return None;
        };
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sock")).unwrap();
        std::fs::write(dir.path().join("pw"), PG_PASSWORD).unwrap();
        for p in [dir.path().to_path_buf(), dir.path().join("sock"), dir.path().join("pw")] {
            give_to_server_user(&p);
        }
        let out = as_server_user(&bin, "initdb")
            .arg("-D")
            .arg(dir.path().join("data"))
            .args(["-U", PG_USER, "-E", "UTF8", "--no-sync", "--auth-local=trust", "--auth-host=scram-sha-256"])
            .arg(format!("--pwfile={}", dir.path().join("pw").display()))
            .output()
            .unwrap();
        assert!(out.status.success(), "initdb failed: {}", String::from_utf8_lossy(&out.stderr));
        Some(PgCluster { dir, port: free_port(), bin, server: None, tls: false })
    }

    /// A started cluster that takes TCP sessions over TLS only (`hostssl`; a plain one is
    /// rejected), its certificate for the name `localhost` alone, signed by [`PgCluster::ca`].
    pub fn start_tls() -> Option<PgCluster> {
        let mut c = PgCluster::init()?;
        let tls = c.dir.path().join("tls");
        std::fs::create_dir(&tls).unwrap();
        let openssl = |args: &[&str]| {
            let out = Command::new("openssl").args(args).current_dir(&tls).output().unwrap();
            assert!(out.status.success(), "openssl {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        };
        let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2"];
        let ca_ext =
            ["-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"];
        for (name, cn) in [("ca", "abprof-test-ca"), ("other-ca", "another-ca")] {
            let (key, pem, subj) = (format!("{name}.key"), format!("{name}.pem"), format!("/CN={cn}"));
            let mut args = vec!["req", "-x509"];
            args.extend(ec);
            args.extend(["-keyout", &key, "-out", &pem, "-subj", &subj]);
            args.extend(ca_ext);
            openssl(&args);
        }
        let mut args = vec!["req"];
        args.extend(ec);
        args.extend(["-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=localhost"]);
        openssl(&args);
        std::fs::write(
            tls.join("server.ext"),
            "subjectAltName=DNS:localhost\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n",
        )
        .unwrap();
        openssl(&[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-days",
            "2",
            "-out",
            "server.pem",
            "-extfile",
            "server.ext",
        ]);
        // The server refuses a key that others can read.
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(tls.join("server.key"), std::fs::Permissions::from_mode(0o600)).unwrap();
        for p in [tls.clone(), tls.join("server.key"), tls.join("server.pem")] {
            give_to_server_user(&p);
        }
        std::fs::write(
            c.dir.path().join("data/pg_hba.conf"),
            "local all all trust\nhostssl all all 127.0.0.1/32 scram-sha-256\nhostnossl all all 127.0.0.1/32 reject\n",
        )
        .unwrap();
        c.tls = true;
        c.resume();
        Some(c)
    }

    /// The CA that signed a TLS cluster's certificate (PEM).
    pub fn ca(&self) -> PathBuf {
        self.dir.path().join("tls/ca.pem")
    }

    /// A CA that signed nothing of this cluster's (PEM).
    pub fn other_ca(&self) -> PathBuf {
        self.dir.path().join("tls/other-ca.pem")
    }

    /// Starts the server (again) on its port and waits until it accepts connections.
    pub fn resume(&mut self) {
        assert!(self.server.is_none(), "already running");
        let log = std::fs::File::create(self.dir.path().join("server.log")).unwrap();
        give_to_server_user(&self.dir.path().join("server.log"));
        let child = as_server_user(&self.bin, "postgres")
            .arg("-D")
            .arg(self.dir.path().join("data"))
            .arg("-k")
            .arg(self.dir.path().join("sock"))
            .args(["-p", &self.port.to_string(), "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off"])
            .args(["-c", "max_connections=40"])
            .args(self.tls_settings())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap();
        self.server = Some(child);
        let t0 = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(t0.elapsed() < Duration::from_secs(60), "PostgreSQL did not start: {}", self.log());
            if let Some(st) = self.server.as_mut().unwrap().try_wait().unwrap() {
                panic!("PostgreSQL exited ({st}): {}", self.log());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        // Accepting TCP is not yet accepting sessions: wait for a query to answer.
        while !self.psql("postgres", "SELECT 1").status.success() {
            assert!(t0.elapsed() < Duration::from_secs(60), "PostgreSQL never answered: {}", self.log());
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn tls_settings(&self) -> Vec<String> {
        if !self.tls {
            return Vec::new();
        }
        let tls = self.dir.path().join("tls");
        let file = |k: &str, f: &str| ["-c".to_string(), format!("{k}={}", tls.join(f).display())];
        let mut args = vec!["-c".to_string(), "ssl=on".to_string()];
        args.extend(file("ssl_cert_file", "server.pem"));
        args.extend(file("ssl_key_file", "server.key"));
        args
    }

    /// Stops the server (fast shutdown) and waits for it.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.server.take() {
            let pid = nix::unistd::Pid::from_raw(child.id() as i32);
            let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT);
            let _ = child.wait();
        }
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("server.log")).unwrap_or_default()
    }

    /// The URL of database `db` (no password: the tests give it in PGPASSWORD).
    pub fn url(&self, db: &str) -> String {
        format!("postgres://{PG_USER}@127.0.0.1:{}/{db}", self.port)
    }

    /// Runs SQL with the server's own psql over its unix socket (trust): `-At` output.
    pub fn psql(&self, db: &str, sql: &str) -> std::process::Output {
        Command::new(self.bin.join("psql"))
            .args(["-X", "-At", "-v", "ON_ERROR_STOP=1", "-h"])
            .arg(self.dir.path().join("sock"))
            .args(["-p", &self.port.to_string(), "-U", PG_USER, "-d", db, "-c", sql])
            .output()
            .unwrap()
    }

    /// `psql`'s output of `sql`, which must succeed.
    pub fn query(&self, db: &str, sql: &str) -> String {
        let out = self.psql(db, sql);
        assert!(out.status.success(), "{sql}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    }

    /// A new empty database; its URL.
    pub fn database(&self, name: &str) -> String {
        self.query("postgres", &format!("CREATE DATABASE {name}"));
        self.url(name)
    }
}

impl Drop for PgCluster {
    fn drop(&mut self) {
        self.stop();
    }
}
