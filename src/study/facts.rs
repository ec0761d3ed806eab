//! What a study records about where and with what it ran: host facts, and per variant the exact
//! binary (real path, sha256, `--version`), model (path, sha256) and argv. A resumed study checks
//! that the binaries and models are still the same bytes.
use crate::child::{run_timed, TimedExit};
use crate::variant::Variant;
use nix::sys::signal::Signal;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::fs::MetadataExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub(crate) struct HostFacts {
    pub(crate) hostname: String,
    pub(crate) kernel: String,
    pub(crate) cpu: String,
    pub(crate) cores: usize,
    pub(crate) memory_kib: Option<u64>,
    pub(crate) abprof: String,
    pub(crate) started_at: String,
    #[serde(default)]
    pub(crate) telemetry: Option<String>,
    /// Power limits, power profile, driver and runtime versions, clocks policy when the study
    /// started (docs/methodology.md §9.7); absent in studies of releases before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) power: Option<crate::telemetry::power_state::PowerState>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub(crate) struct FileFacts {
    pub(crate) path: PathBuf,
    pub(crate) real_path: PathBuf,
    pub(crate) size: u64,
    pub(crate) sha256: String,
    /// The stat the hash belongs to: a later stat that differs means the bytes may have changed
    /// (absent in studies of releases before the binary watch).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) stamp: Option<crate::measure::FileStamp>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub(crate) struct VariantFacts {
    pub(crate) label: String,
    pub(crate) spec: String,
    pub(crate) binary: FileFacts,
    /// What `binary --version` printed.
    pub(crate) version: String,
    /// The artifact's VERSION.txt, when the spec named an `abprof build` folder.
    pub(crate) artifact_version: Option<String>,
    pub(crate) model: FileFacts,
    /// Server arguments as launched (abprof appends --host, --port and --log-file).
    pub(crate) server_args: Vec<String>,
    pub(crate) env: Vec<(String, String)>,
    pub(crate) expect: Option<String>,
    /// The `kv=` type (absent in studies of releases before the results history).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) kv: Option<String>,
    /// The variant's own server arguments (`extra=`), after the study's common ones.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) extra: Vec<String>,
    /// The llama.cpp commit the binary was built from, from its artifact's `build-info.json`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) commit: Option<String>,
}

impl VariantFacts {
    /// The commit the binary was built from: its artifact's record, else what its `--version`
    /// printed (`… commit 0c1e57098`), else unknown.
    pub(crate) fn commit(&self) -> Option<String> {
        static IN_VERSION: std::sync::LazyLock<regex::Regex> =
            std::sync::LazyLock::new(|| regex::Regex::new(r"\bcommit ([0-9a-f]{7,40})\b").unwrap());
        self.commit.clone().or_else(|| IN_VERSION.captures(&self.version).map(|c| c[1].to_string()))
    }
}

/// The base commit an `abprof build` artifact folder records in its `build-info.json`.
fn artifact_commit(artifact: &Path) -> Option<String> {
    let text = std::fs::read_to_string(artifact.join("build-info.json")).ok()?;
    serde_json::from_str::<crate::artifact::BuildInfo>(&text).ok().map(|i| i.base_commit)
}

fn cache_dir() -> PathBuf {
    crate::cache_dir::cache_dir().join("sha256")
}

/// sha256 of a file, remembered per (real path, size, mtime) so a 15 GiB model is hashed once.
pub(crate) fn file_sha256(path: &Path) -> std::io::Result<FileFacts> {
    let real = std::fs::canonicalize(path)?;
    let meta = std::fs::metadata(&real)?;
    let key = hex::encode(Sha256::digest(format!(
        "{}\0{}\0{}",
        real.display(),
        meta.size(),
        meta.mtime_nsec() as i128 + meta.mtime() as i128 * 1_000_000_000
    )));
    let cached = cache_dir().join(&key);
    let sha256 = match std::fs::read_to_string(&cached) {
        Ok(s) if s.trim().len() == 64 => s.trim().to_string(),
        _ => {
            let s = crate::artifact::sha256_file(&real)?;
            if std::fs::create_dir_all(cache_dir()).is_ok() {
                let _ = std::fs::write(&cached, &s);
            }
            s
        }
    };
    let stamp = Some(crate::measure::FileStamp::of(&meta));
    Ok(FileFacts { path: path.into(), real_path: real, size: meta.size(), sha256, stamp })
}

/// How long `binary --version` may take: llama-server answers in well under a second.
pub(crate) const VERSION_PROBE_TIMEOUT: Duration = Duration::from_secs(5);

/// What the facts record when the probe had to be ended.
pub(crate) const VERSION_PROBE_TIMED_OUT: &str = "version probe timed out";

/// `binary --version`, stdout and stderr together. A binary that does not answer within
/// `timeout` (one that ignores SIGTERM, say) has its process group sent SIGTERM, then SIGKILL,
/// and is recorded as [`VERSION_PROBE_TIMED_OUT`]: a fact, never a hang.
pub(crate) fn binary_version(binary: &Path, timeout: Duration) -> String {
    match version_probe(binary, &[], timeout) {
        Ok(None) => VERSION_PROBE_TIMED_OUT.into(),
        Ok(Some(text)) => text,
        Err(e) => format!("could not run --version: {e}"),
    }
}

/// What `binary --version` printed (stdout and stderr together, trimmed), with `env` set; `None`
/// when it did not finish within `timeout` and was ended. Every `--version` abprof runs (a
/// variant's server, the Pi agent) goes through here.
pub(crate) fn version_probe(binary: &Path, env: &[(&str, &str)], timeout: Duration) -> std::io::Result<Option<String>> {
    probe(binary, "--version", env, timeout)
}

/// What `binary arg` printed (stdout and stderr together, trimmed), with `env` set; `None` when
/// it did not finish within `timeout` and was ended (`--version` here, `--help` in doctor).
pub(crate) fn probe(
    binary: &Path,
    arg: &str,
    env: &[(&str, &str)],
    timeout: Duration,
) -> std::io::Result<Option<String>> {
    // A file, not a pipe: a pipe held open by something the binary left behind would block
    // the read after the kill.
    let mut out = tempfile::tempfile()?;
    let mut cmd = Command::new(binary);
    cmd.arg(arg).envs(env.iter().copied()).stdin(Stdio::null()).stdout(out.try_clone()?).stderr(out.try_clone()?);
    // What a build has and sees, whatever device a variant selects: under a device it does not
    // see llama-server refuses even `--list-devices`, and the selection is what is checked
    // against the listing (src/study/preflight.rs).
    cmd.env_remove(crate::server::listed_devices::ENV);
    // abprof's own Ctrl-C before the study's signal listener exists ends abprof at once; the
    // probe, in a process group of its own, must not outlive it.
    // SAFETY: prctl is async-signal-safe and touches only the child's own state.
    unsafe {
        cmd.pre_exec(|| nix::sys::prctl::set_pdeathsig(Signal::SIGKILL).map_err(std::io::Error::from));
    }
    if run_timed(&mut cmd, timeout, &AtomicBool::new(false))?.exit == TimedExit::TimedOut {
        return Ok(None);
    }
    let mut text = String::new();
    out.seek(SeekFrom::Start(0))?;
    out.read_to_string(&mut text)?;
    Ok(Some(text.trim().to_string()))
}

fn first_line_of(path: &str, prefix: &str) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()?
        .lines()
        .find(|l| l.starts_with(prefix))
        .map(|l| l.split_once(':').map_or(l, |(_, v)| v).trim().to_string())
}

pub(crate) fn host_facts(telemetry: Option<String>) -> HostFacts {
    let uname = nix::sys::utsname::uname().ok();
    HostFacts {
        hostname: nix::unistd::gethostname().map(|h| h.to_string_lossy().to_string()).unwrap_or_default(),
        kernel: uname
            .map(|u| {
                format!(
                    "{} {} {}",
                    u.sysname().to_string_lossy(),
                    u.release().to_string_lossy(),
                    u.machine().to_string_lossy()
                )
            })
            .unwrap_or_default(),
        cpu: first_line_of("/proc/cpuinfo", "model name").unwrap_or_default(),
        cores: std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
        memory_kib: first_line_of("/proc/meminfo", "MemTotal")
            .and_then(|v| v.trim_end_matches(" kB").trim().parse().ok()),
        abprof: concat!(env!("CARGO_PKG_VERSION"), " (", env!("ABPROF_GIT_COMMIT"), ")").into(),
        started_at: chrono::Local::now().to_rfc3339(),
        telemetry,
        power: Some(crate::telemetry::power_state::PowerState::of_host()),
    }
}

/// The variant's `--version`, with a one-line warning when the probe had to be ended.
pub(crate) fn probe_version(v: &Variant) -> String {
    let version = binary_version(&v.binary, VERSION_PROBE_TIMEOUT);
    if version == VERSION_PROBE_TIMED_OUT {
        eprintln!(
            "abprof: warning: variant {}: `{} --version` did not finish within {} s and was killed; recorded as \"{VERSION_PROBE_TIMED_OUT}\" (is it a llama-server?)",
            v.label,
            v.binary.display(),
            VERSION_PROBE_TIMEOUT.as_secs()
        );
    }
    version
}

pub(crate) fn variant_facts(v: &Variant, default_model: &Path, common: &[String]) -> std::io::Result<VariantFacts> {
    variant_facts_with(v, default_model, common, probe_version(v))
}

/// [`variant_facts`] with the binary's `--version` already asked (a study asks each binary once,
/// before its folder exists: src/study/preflight.rs).
pub(crate) fn variant_facts_with(
    v: &Variant,
    default_model: &Path,
    common: &[String],
    version: String,
) -> std::io::Result<VariantFacts> {
    let artifact_version = v.artifact.as_ref().and_then(|a| std::fs::read_to_string(a.join("VERSION.txt")).ok());
    Ok(VariantFacts {
        label: v.label.clone(),
        spec: v.spec.clone(),
        binary: file_sha256(&v.binary)?,
        version,
        artifact_version,
        model: file_sha256(v.model_or(default_model))?,
        server_args: v.server_args(default_model, common),
        env: v.env.clone(),
        expect: v.expect.clone(),
        kv: v.kv.clone(),
        extra: v.extra.clone(),
        commit: v.artifact.as_deref().and_then(artifact_commit),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha256_is_right_and_cached_per_mtime() {
        let d = tempfile::tempdir().unwrap();
        std::env::set_var("ABPROF_CACHE", d.path().join("cache"));
        let f = d.path().join("x");
        std::fs::write(&f, "abc").unwrap();
        let a = file_sha256(&f).unwrap();
        assert_eq!(a.sha256, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        assert_eq!(file_sha256(&f).unwrap(), a);
        assert_eq!(std::fs::read_dir(d.path().join("cache/sha256")).unwrap().count(), 1);
    }

    #[test]
    fn the_commit_comes_from_the_artifact_else_from_the_version() {
        let file = FileFacts { path: "b".into(), real_path: "b".into(), size: 1, sha256: "0".repeat(64), stamp: None };
        let mut f = VariantFacts {
            label: "A".into(),
            spec: "A=b".into(),
            binary: file.clone(),
            version: "version: 0.5.0-dev (build 0, commit 0c1e57098)\nbuilt with GNU 12.2.0".into(),
            artifact_version: None,
            model: file,
            server_args: vec![],
            env: vec![],
            expect: None,
            kv: None,
            extra: vec![],
            commit: None,
        };
        assert_eq!(f.commit().as_deref(), Some("0c1e57098"));
        f.commit = Some("0c1e57098abc".into());
        assert_eq!(f.commit().as_deref(), Some("0c1e57098abc"));
        f.commit = None;
        f.version = "version: 1 (unknown)".into();
        assert_eq!(f.commit(), None);
    }

    #[test]
    fn host_facts_are_filled() {
        let h = host_facts(None);
        assert!(h.cores >= 1 && !h.kernel.is_empty() && h.abprof.contains('('));
    }

    #[test]
    fn a_version_probe_that_ignores_sigterm_is_killed_and_recorded() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let script = |name: &str, body: &str| {
            let p = d.path().join(name);
            std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
            p
        };
        let ok = script("ok", "echo version: 1 ; echo built with cc >&2");
        assert_eq!(binary_version(&ok, Duration::from_secs(5)), "version: 1\nbuilt with cc");
        let pids = d.path().join("pids");
        let stuck = script("stuck", &format!("trap '' TERM\necho $$ > {}\nwhile :; do sleep 1; done", pids.display()));
        let t0 = std::time::Instant::now();
        assert_eq!(binary_version(&stuck, Duration::from_millis(300)), VERSION_PROBE_TIMED_OUT);
        assert!(t0.elapsed() < Duration::from_secs(4), "{:?}", t0.elapsed());
        let pid: i32 = std::fs::read_to_string(&pids).unwrap().trim().parse().unwrap();
        // SIGKILLed members are gone at once; the orphaned `sleep` is reaped by init a moment later.
        let gone = (0..40).any(|_| {
            std::thread::sleep(Duration::from_millis(50));
            nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pid), None).is_err()
        });
        assert!(gone, "its group is gone");
    }
}
