//! Configure and build only the `llama-server` target with CMake + Ninja, and read back what
//! the build was made with (cache options, compilers) for the artifact's VERSION.txt.
use super::error::ArtifactError;
use crate::child::TimedExit;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

pub(crate) const TARGET: &str = "llama-server";

/// The configure argv: Ninja and Release unless the user chose otherwise, then the user's args.
pub(crate) fn configure_args(src: &Path, build: &Path, user: &[String]) -> Vec<String> {
    let mut a = vec!["-S".to_string(), src.display().to_string(), "-B".into(), build.display().to_string()];
    if !user.iter().any(|x| x.starts_with("-G")) {
        a.extend(["-G".into(), "Ninja".into()]);
    }
    if !user.iter().any(|x| x.starts_with("-DCMAKE_BUILD_TYPE")) {
        a.push("-DCMAKE_BUILD_TYPE=Release".into());
    }
    a.extend(user.iter().cloned());
    a
}

fn last_line(log: &Path) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    // CMake and compilers put the cause on an error line; fall back to the last line.
    let lines: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    lines
        .iter()
        .find(|l| l.contains("error") || l.contains("Error"))
        .or(lines.last())
        .map(|l| l.to_string())
        .unwrap_or_default()
}

/// How the build's commands run: extra environment (ccache's base folder), and the flag that
/// ends them when abprof is told to stop.
#[derive(Clone, Copy)]
pub(crate) struct Runner<'a> {
    pub(crate) env: &'a [(String, String)],
    pub(crate) cancel: Option<&'a AtomicBool>,
    /// Told each step's process group, so the step dies with abprof however abprof dies.
    pub(crate) leash: Option<&'a super::leash::BuildLeash>,
}

/// A build may take an hour on a slow host; the bound only keeps a wedged compiler from hanging
/// a bisect forever.
const BUILD_STEP_TIMEOUT: Duration = Duration::from_secs(6 * 3600);

fn run_logged(step: &'static str, args: &[String], log: &Path, run: Runner<'_>) -> Result<(), ArtifactError> {
    let out = File::create(log).map_err(|e| ArtifactError::Write { path: log.into(), source: e })?;
    let err = out.try_clone().map_err(|e| ArtifactError::Write { path: log.into(), source: e })?;
    let mut cmd = Command::new("cmake");
    cmd.args(args).envs(run.env.iter().map(|(k, v)| (k, v))).stdin(Stdio::null()).stdout(out).stderr(err);
    let tool = |e| ArtifactError::Tool { program: "cmake".into(), source: e };
    let failed = match run.cancel {
        // A caller that listens for signals gets a build it can stop: the build runs in its own
        // process group, ended as a whole (ninja and every compiler) once the flag is set.
        Some(cancel) => {
            let on_spawn = |pgid: Option<u32>| {
                if let Some(l) = run.leash {
                    l.group(pgid);
                }
            };
            match crate::child::run_timed_telling(&mut cmd, BUILD_STEP_TIMEOUT, cancel, &on_spawn).map_err(tool)?.exit {
                TimedExit::Exited(0) => None,
                TimedExit::Interrupted => return Err(ArtifactError::Interrupted),
                other => Some(other.describe()),
            }
        }
        // Otherwise the build stays in abprof's process group, so a Ctrl-C at the terminal
        // reaches it too.
        None => {
            let status = cmd.status().map_err(tool)?;
            (!status.success()).then(|| status.to_string())
        }
    };
    match failed {
        None => Ok(()),
        Some(status) => Err(ArtifactError::Cmake { step, status, last_line: last_line(log), log: log.into() }),
    }
}

pub(crate) fn configure(args: &[String], log: &Path, run: Runner<'_>) -> Result<(), ArtifactError> {
    run_logged("configure", args, log, run)
}

pub(crate) fn build(build_dir: &Path, jobs: usize, log: &Path, run: Runner<'_>) -> Result<(), ArtifactError> {
    let args = vec![
        "--build".to_string(),
        build_dir.display().to_string(),
        "--target".into(),
        TARGET.into(),
        "-j".into(),
        jobs.to_string(),
    ];
    run_logged("build", &args, log, run)
}

/// The built executable: llama.cpp puts it in `bin/`, a plain project in the build root.
pub(crate) fn find_binary(build_dir: &Path) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let is_exe = |p: &Path| std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0);
    for rel in ["bin/llama-server", "llama-server"] {
        let p = build_dir.join(rel);
        if is_exe(&p) {
            return Some(p);
        }
    }
    let mut stack = vec![build_dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() && !p.ends_with("CMakeFiles") {
                stack.push(p);
            } else if p.file_name().is_some_and(|n| n == TARGET) && is_exe(&p) {
                return Some(p);
            }
        }
    }
    None
}

/// `KEY:TYPE=VALUE` entries of a CMakeCache.txt.
pub(crate) fn read_cache(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("//") && !l.trim().is_empty())
        .filter_map(|l| {
            let (key, value) = l.split_once('=')?;
            Some((key.split(':').next()?.to_string(), value.to_string()))
        })
        .collect()
}

/// The cache entries worth recording: the build type, every compiler, and each variable the
/// user set with -D.
pub(crate) fn recorded_options(cache: &[(String, String)], user: &[String]) -> Vec<(String, String)> {
    let mut keys: Vec<String> = vec!["CMAKE_BUILD_TYPE".into(), "CMAKE_GENERATOR".into()];
    keys.extend(
        cache.iter().filter(|(k, _)| k.ends_with("_COMPILER") && k.starts_with("CMAKE_")).map(|(k, _)| k.clone()),
    );
    for a in user {
        if let Some(def) = a.strip_prefix("-D") {
            let key = def.split(['=', ':']).next().unwrap_or("");
            if !key.is_empty() && !keys.iter().any(|k| k == key) {
                keys.push(key.to_string());
            }
        }
    }
    keys.into_iter().filter_map(|k| cache.iter().find(|(c, _)| *c == k).map(|(_, v)| (k.clone(), v.clone()))).collect()
}

/// `LANG: PATH — first line of PATH --version` for every compiler the cache names.
pub(crate) fn compiler_versions(cache: &[(String, String)]) -> Vec<String> {
    cache
        .iter()
        .filter(|(k, v)| k.starts_with("CMAKE_") && k.ends_with("_COMPILER") && !v.is_empty())
        .map(|(k, path)| {
            let lang = k.trim_start_matches("CMAKE_").trim_end_matches("_COMPILER");
            let version = Command::new(path)
                .arg("--version")
                .output()
                .ok()
                .and_then(|o| String::from_utf8_lossy(&o.stdout).lines().next().map(str::to_string))
                .unwrap_or_else(|| "version unknown".into());
            format!("{lang}: {path} — {version}")
        })
        .collect()
}

pub(crate) fn cmake_version() -> Option<String> {
    let out = Command::new("cmake").arg("--version").output().ok()?;
    String::from_utf8_lossy(&out.stdout).lines().next().map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ninja_and_release_unless_overridden() {
        let a = configure_args(Path::new("/s"), Path::new("/b"), &["-DGGML_HIP=ON".into()]);
        assert!(a.windows(2).any(|w| w == ["-G", "Ninja"]));
        assert!(a.contains(&"-DCMAKE_BUILD_TYPE=Release".to_string()));
        let a = configure_args(
            Path::new("/s"),
            Path::new("/b"),
            &["-DCMAKE_BUILD_TYPE=Debug".into(), "-GUnix Makefiles".into()],
        );
        assert!(!a.contains(&"Ninja".to_string()) && !a.contains(&"-DCMAKE_BUILD_TYPE=Release".to_string()));
    }

    #[test]
    fn cache_options_of_the_user_and_the_compilers() {
        let cache = read_cache("# c\n//doc\nCMAKE_BUILD_TYPE:STRING=Release\nCMAKE_C_COMPILER:FILEPATH=/usr/bin/cc\nGGML_HIP:BOOL=ON\nOTHER:BOOL=OFF\n");
        let opts = recorded_options(&cache, &["-DGGML_HIP:BOOL=ON".into(), "-DMISSING=1".into()]);
        assert_eq!(
            opts,
            vec![
                ("CMAKE_BUILD_TYPE".to_string(), "Release".to_string()),
                ("CMAKE_C_COMPILER".into(), "/usr/bin/cc".into()),
                ("GGML_HIP".into(), "ON".into())
            ]
        );
    }
}
