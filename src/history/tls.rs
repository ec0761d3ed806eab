//! TLS to a PostgreSQL history (docs/methodology.md §15 "TLS"), with libpq's `sslmode` words
//! and meanings, so a URL a team already gives `psql` means the same here: `disable` plain;
//! `prefer` (the default) TLS when the server offers it, else plain, certificate unchecked;
//! `require` TLS, certificate unchecked unless a root certificate is at hand (then as
//! `verify-ca`); `verify-ca` the chain to a trusted root; `verify-full` the chain and the host
//! name. The roots are `sslrootcert=PATH` (PEM), `sslrootcert=system` (the host's CA store),
//! else `PGSSLROOTCERT`, else `~/.postgresql/root.crt` where it exists; `PGSSLMODE` stands in
//! for a URL without `sslmode`. Client certificates are not supported (refused in one line).
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio_postgres_rustls::MakeRustlsConnect;

/// TLS settings of a URL that cannot be used: one line naming the cause and the fix (the
/// location's parser gives it as its own, src/history/location.rs).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct BadTls(pub(crate) String);

/// libpq's `sslmode`, the five this abprof honours.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SslMode {
    Disable,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

impl SslMode {
    fn parse(s: &str) -> Option<SslMode> {
        Some(match s {
            "disable" => SslMode::Disable,
            "prefer" => SslMode::Prefer,
            "require" => SslMode::Require,
            "verify-ca" => SslMode::VerifyCa,
            "verify-full" => SslMode::VerifyFull,
            _ => return None,
        })
    }

    fn word(self) -> &'static str {
        match self {
            SslMode::Disable => "disable",
            SslMode::Prefer => "prefer",
            SslMode::Require => "require",
            SslMode::VerifyCa => "verify-ca",
            SslMode::VerifyFull => "verify-full",
        }
    }

    /// What the connection asks of the server (the client's config has three words).
    pub(crate) fn wire(self) -> postgres::config::SslMode {
        match self {
            SslMode::Disable => postgres::config::SslMode::Disable,
            SslMode::Prefer => postgres::config::SslMode::Prefer,
            _ => postgres::config::SslMode::Require,
        }
    }
}

/// Which certificates a verifying connection trusts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Roots {
    /// A PEM file of one or more CA certificates.
    File(PathBuf),
    /// The host's CA store.
    System,
}

/// How a history connection is secured, decided once from the URL and the environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TlsPolicy {
    pub(crate) mode: SslMode,
    pub(crate) roots: Option<Roots>,
}

impl fmt::Display for TlsPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mode = self.checks();
        write!(f, "sslmode={}", mode.word())?;
        // The roots only where the check reads them.
        match (&self.roots, mode) {
            (Some(Roots::File(p)), SslMode::VerifyCa | SslMode::VerifyFull) => write!(f, " (roots {})", p.display()),
            (Some(Roots::System), SslMode::VerifyCa | SslMode::VerifyFull) => f.write_str(" (the host's CA store)"),
            _ => Ok(()),
        }
    }
}

/// The URL's TLS parameters taken out (the client's own parser knows none but `sslmode`, and
/// that one with three words): the URL left for it, and the policy.
pub(crate) fn split_policy(url: &str) -> Result<(String, TlsPolicy), BadTls> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    split_policy_with(url, env("PGSSLMODE"), env("PGSSLROOTCERT"), home.as_deref())
}

/// [`split_policy`] with the environment given (the tests').
pub(crate) fn split_policy_with(
    url: &str,
    env_mode: Option<String>,
    env_roots: Option<String>,
    home: Option<&Path>,
) -> Result<(String, TlsPolicy), BadTls> {
    let (base, query) = url.split_once('?').unwrap_or((url, ""));
    let (mut mode, mut roots) = (None, None);
    let mut kept = Vec::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        match k {
            "sslmode" => mode = Some(percent_decode(v)),
            "sslrootcert" => roots = Some(percent_decode(v)),
            "sslcert" | "sslkey" | "sslpassword" | "sslcrl" | "sslcrldir" | "sslcertmode" => {
                return Err(BadTls(format!(
                    "--history: {k} is not supported (this abprof has no client certificates): authenticate with a password from PGPASSWORD or a ~/.pgpass line, over sslmode=verify-full"
                )))
            }
            _ => kept.push(pair),
        }
    }
    let mode_word = mode.or(env_mode).unwrap_or_else(|| "prefer".into());
    let mode = SslMode::parse(&mode_word).ok_or_else(|| {
        BadTls(format!("--history: sslmode={mode_word} is not one of disable, prefer, require, verify-ca, verify-full"))
    })?;
    let roots = match roots.or(env_roots) {
        Some(r) if r == "system" => Some(Roots::System),
        Some(r) => Some(Roots::File(root_file(&r)?)),
        None => home.map(|h| h.join(".postgresql/root.crt")).filter(|p| p.is_file()).map(Roots::File),
    };
    if matches!(mode, SslMode::VerifyCa | SslMode::VerifyFull) && roots.is_none() {
        return Err(BadTls(format!(
            "--history: sslmode={} needs the server's CA: add sslrootcert=PATH (a PEM file) or sslrootcert=system (the host's CA store) to the URL, or set PGSSLROOTCERT",
            mode.word()
        )));
    }
    let url = if kept.is_empty() { base.to_string() } else { format!("{base}?{}", kept.join("&")) };
    Ok((url, TlsPolicy { mode, roots }))
}

/// A root-certificate file, checked to hold at least one certificate before anything is done.
fn root_file(path: &str) -> Result<PathBuf, BadTls> {
    let p = PathBuf::from(path);
    let bad = |why: String| {
        BadTls(format!(
            "--history: sslrootcert={path}: {why}: give a PEM file of the CA that signed the server's certificate"
        ))
    };
    let bytes = std::fs::read(&p).map_err(|e| bad(e.to_string()))?;
    match CertificateDer::pem_slice_iter(&bytes).collect::<Result<Vec<_>, _>>() {
        Ok(certs) if !certs.is_empty() => Ok(p),
        Ok(_) => Err(bad("no certificate in it".into())),
        Err(e) => Err(bad(format!("not PEM ({e})"))),
    }
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        match (b[i], b.get(i + 1).copied().and_then(hex), b.get(i + 2).copied().and_then(hex)) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (c, _, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

impl TlsPolicy {
    /// What the connection checks: `require` with roots at hand checks the chain (libpq's rule).
    pub(crate) fn checks(&self) -> SslMode {
        match (self.mode, &self.roots) {
            (SslMode::Require, Some(_)) => SslMode::VerifyCa,
            (m, _) => m,
        }
    }

    /// The TLS connector, `None` for `disable`. Errors name the roots that could not be read.
    pub(crate) fn connector(&self) -> Result<Option<MakeRustlsConnect>, String> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mode = self.checks();
        let chain = match mode {
            SslMode::Disable => return Ok(None),
            SslMode::Prefer | SslMode::Require => None,
            SslMode::VerifyCa | SslMode::VerifyFull => Some(
                WebPkiServerVerifier::builder_with_provider(Arc::new(self.root_store()?), provider.clone())
                    .build()
                    .map_err(|e| e.to_string())?,
            ),
        };
        let verifier: Arc<dyn ServerCertVerifier> = match chain {
            Some(full) if mode == SslMode::VerifyFull => full,
            chain => Arc::new(CertCheck { chain, provider: provider.clone() }),
        };
        let config = ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| e.to_string())?
            .dangerous()
            .with_custom_certificate_verifier(verifier)
            .with_no_client_auth();
        Ok(Some(MakeRustlsConnect::new(config)))
    }

    fn root_store(&self) -> Result<RootCertStore, String> {
        let mut store = RootCertStore::empty();
        match &self.roots {
            Some(Roots::File(p)) => {
                let certs = CertificateDer::pem_file_iter(p)
                    .and_then(|it| it.collect::<Result<Vec<_>, _>>())
                    .map_err(|e| format!("sslrootcert {}: {e}", p.display()))?;
                store.add_parsable_certificates(certs);
            }
            Some(Roots::System) => {
                store.add_parsable_certificates(rustls_native_certs::load_native_certs().certs);
            }
            None => {}
        }
        if store.is_empty() {
            return Err("no usable root certificate".into());
        }
        Ok(store)
    }
}

/// The certificate check of every mode short of `verify-full`: `prefer`/`require` without roots
/// check no certificate (libpq's meaning of these words), `verify-ca` the chain to a trusted root
/// whatever name the certificate is for (the WebPKI verifier checks the chain before the name, so
/// a wrong name alone means the chain held). The handshake's own signature is always verified.
#[derive(Debug)]
struct CertCheck {
    /// `None`: the certificate is not checked.
    chain: Option<Arc<WebPkiServerVerifier>>,
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for CertCheck {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let Some(chain) = &self.chain else { return Ok(ServerCertVerified::assertion()) };
        match chain.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now) {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(message, cert, dss, &self.provider.signature_verification_algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(message, cert, dss, &self.provider.signature_verification_algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider.signature_verification_algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(
        url: &str,
        mode: Option<&str>,
        roots: Option<&str>,
        home: Option<&Path>,
    ) -> Result<(String, TlsPolicy), String> {
        split_policy_with(url, mode.map(String::from), roots.map(String::from), home).map_err(|e| e.to_string())
    }

    #[test]
    fn the_url_and_the_environment_give_libpqs_sslmode_and_roots() {
        let none = tempfile::tempdir().unwrap();
        let (url, p) = policy("postgres://ci@db/abprof", None, None, Some(none.path())).unwrap();
        assert_eq!((url.as_str(), p.mode, p.roots.clone()), ("postgres://ci@db/abprof", SslMode::Prefer, None));
        let (url, p) = policy("postgres://ci@db/abprof?sslmode=require&application_name=x", None, None, None).unwrap();
        assert_eq!(url, "postgres://ci@db/abprof?application_name=x", "sslmode is taken out");
        assert_eq!((p.mode, p.checks()), (SslMode::Require, SslMode::Require));
        let (_, p) = policy("postgres://ci@db/abprof", Some("disable"), None, None).unwrap();
        assert_eq!(p.mode, SslMode::Disable, "PGSSLMODE stands in");
        let (_, p) =
            policy("postgres://ci@db/abprof?sslmode=verify-full", Some("disable"), Some("system"), None).unwrap();
        assert_eq!((p.mode, p.roots), (SslMode::VerifyFull, Some(Roots::System)), "the URL wins over PGSSLMODE");
        let e = policy("postgres://ci@db/abprof?sslmode=verify-ca", None, None, Some(none.path())).unwrap_err();
        assert!(e.contains("sslmode=verify-ca needs the server's CA") && e.contains("sslrootcert=PATH"), "{e}");
        let e = policy("postgres://ci@db/abprof?sslmode=always", None, None, None).unwrap_err();
        assert!(e.contains("sslmode=always is not one of"), "{e}");
        let e = policy("postgres://ci@db/abprof?sslcert=/c.pem", None, None, None).unwrap_err();
        assert!(e.contains("sslcert is not supported"), "{e}");
        let e = policy("postgres://ci@db/abprof?sslrootcert=/no/such.pem", None, None, None).unwrap_err();
        assert!(e.contains("sslrootcert=/no/such.pem") && e.contains("PEM file"), "{e}");
    }

    #[test]
    fn require_with_a_root_at_hand_checks_the_chain_as_libpq_does() {
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir(home.path().join(".postgresql")).unwrap();
        std::fs::write(home.path().join(".postgresql/root.crt"), "not pem").unwrap();
        // The default file is taken as it is, read only when a connection verifies.
        let (_, p) = policy("postgres://ci@db/abprof?sslmode=require", None, None, Some(home.path())).unwrap();
        assert_eq!(p.checks(), SslMode::VerifyCa);
        assert!(p.connector().is_err(), "an unreadable root file fails the connection, never unchecked");
        let e = policy("postgres://ci@db/abprof?sslrootcert=%2Fetc%2Fhostname", None, None, None).unwrap_err();
        assert!(e.contains("sslrootcert=/etc/hostname: no certificate in it"), "{e}");
    }
}
