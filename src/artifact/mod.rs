//! `abprof build`: an immutable llama-server artifact from a commit (plus, optionally, one
//! patch) of a source tree that may hold uncommitted research — without touching that tree
//! (docs/methodology.md §6 "candidate builds"). A detached worktree of the commit, only the
//! given patch applied, CMake + Ninja for the `llama-server` target alone, then a read-only
//! folder: `bin/llama-server`, `VERSION.txt`, `build-info.json`, `CMakeCache.txt`, the logs and
//! the patch. A variant spec can name the folder (`variant::resolve_binary`).
pub(crate) mod ccache;
mod cmake;
mod error;
pub(crate) mod git;
mod info;
pub(crate) mod leash;
mod scratch;
mod store;

pub(crate) use error::ArtifactError;
pub(crate) use info::{BuildInfo, PatchInfo, BINARY_PATH};
pub(crate) use store::sha256_file;

use git::{resolve_commit, DetachedWorktree};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;
use store::{check_name, Staging};

/// What to build.
#[derive(Debug, Clone)]
pub(crate) struct BuildSpec {
    pub(crate) repo: PathBuf,
    pub(crate) commit: String,
    pub(crate) patch: Option<PathBuf>,
    /// Default: `llama-server-<sha12>[-p<patch sha8>]`.
    pub(crate) name: Option<String>,
    /// Folder the artifact folder is created in.
    pub(crate) out: PathBuf,
    pub(crate) cmake_args: Vec<String>,
    pub(crate) jobs: usize,
    /// Set by a caller that listens for signals: the build then stops when it is set.
    pub(crate) cancel: Option<Arc<AtomicBool>>,
}

/// A finished artifact.
#[derive(Debug, Clone)]
pub(crate) struct Artifact {
    pub(crate) dir: PathBuf,
    pub(crate) info: BuildInfo,
}

fn write_err(path: &Path) -> impl FnOnce(std::io::Error) -> ArtifactError + '_ {
    move |e| ArtifactError::Write { path: path.to_path_buf(), source: e }
}

/// Builds the artifact; `progress` hears about each step.
pub(crate) fn build_artifact(spec: &BuildSpec, progress: &mut dyn FnMut(&str)) -> Result<Artifact, ArtifactError> {
    let t0 = Instant::now();
    let repo = std::path::absolute(&spec.repo).map_err(write_err(&spec.repo))?;
    let commit = resolve_commit(&repo, &spec.commit)?;
    // Read once: a patch from a pipe (`--patch <(git diff)`) cannot be read twice.
    let patch = match &spec.patch {
        Some(p) => Some((
            p.clone(),
            std::fs::read(p).map_err(|e| ArtifactError::PatchUnreadable { path: p.clone(), source: e })?,
        )),
        None => None,
    };
    let patch_info = patch.as_ref().map(|(p, bytes)| PatchInfo {
        source: p.clone(),
        sha256: hex::encode(<sha2::Sha256 as sha2::Digest>::digest(bytes)),
        bytes: bytes.len(),
    });
    let name = spec.name.clone().unwrap_or_else(|| {
        let mut n = format!("llama-server-{}", &commit[..12]);
        if let Some(p) = &patch_info {
            n.push_str(&format!("-p{}", &p.sha256[..8]));
        }
        n
    });
    check_name(&name)?;
    std::fs::create_dir_all(&spec.out).map_err(write_err(&spec.out))?;
    let staging = Staging::create(&spec.out, &name)?;

    let temp = std::env::temp_dir();
    let scratch = scratch::Scratch::take(&temp).map_err(write_err(&temp))?;
    let src = scratch.path().join("src");
    progress(&format!("worktree of {} at {}", &commit[..12], src.display()));
    let worktree = DetachedWorktree::add(&repo, &src, &commit)?;
    // Dropped before the worktree on every path out: a build abprof finishes cleans up itself.
    let leash = leash::BuildLeash::hold(&repo, &src, Some(scratch.lock()))
        .map_err(|e| ArtifactError::Tool { program: "sh".into(), source: e })?;
    if let Some((path, bytes)) = &patch {
        let copy = staging.write("source.patch", bytes)?;
        progress(&format!("applying {}", path.display()));
        worktree.apply(&copy, path, &commit)?;
    }
    let build_dir = scratch.path().join("build");
    let launcher = ccache::launcher(&spec.cmake_args);
    let mut args = launcher.as_deref().map(ccache::configure_args).unwrap_or_default();
    args.extend(spec.cmake_args.iter().cloned());
    let env = launcher.as_ref().map(|_| ccache::env(scratch.path())).unwrap_or_default();
    let runner = cmake::Runner { env: &env, cancel: spec.cancel.as_deref(), leash: Some(&leash) };
    let configure_args = cmake::configure_args(&src, &build_dir, &args);
    progress("configuring");
    cmake::configure(&configure_args, &staging.dir.join("configure.log"), runner)?;
    progress(&format!("building {} (-j {})", cmake::TARGET, spec.jobs));
    cmake::build(&build_dir, spec.jobs, &staging.dir.join("build.log"), runner)?;
    let built = cmake::find_binary(&build_dir).ok_or_else(|| ArtifactError::NoBinary(build_dir.clone()))?;
    let binary = staging.copy_in(&built, BINARY_PATH)?;
    let cache_text = std::fs::read_to_string(build_dir.join("CMakeCache.txt")).unwrap_or_default();
    staging.write("CMakeCache.txt", cache_text.as_bytes())?;
    let cache = cmake::read_cache(&cache_text);
    drop(leash);
    drop(worktree);

    let info = BuildInfo {
        name,
        repo,
        base_commit: commit,
        patch: patch_info,
        configure_args,
        cache_options: cmake::recorded_options(&cache, &spec.cmake_args),
        compilers: cmake::compiler_versions(&cache),
        cmake_version: cmake::cmake_version(),
        binary: BINARY_PATH.into(),
        binary_sha256: sha256_file(&binary).map_err(write_err(&binary))?,
        built_at: chrono::Local::now().to_rfc3339(),
        build_seconds: t0.elapsed().as_secs_f64(),
        abprof_version: env!("CARGO_PKG_VERSION").into(),
    };
    staging.write("VERSION.txt", info.version_txt().as_bytes())?;
    staging.write("build-info.json", (crate::schema::to_json_pretty(&info) + "\n").as_bytes())?;
    let dir = staging.seal()?;
    Ok(Artifact { dir, info })
}

/// An artifact name that says what made it: `llama-server-<sha12>[-p<patch sha8>]-c<args sha8>`,
/// the last the hash of the CMake arguments (none hash too), so one commit built two ways is two
/// artifacts and the same request finds the one built before.
pub(crate) fn keyed_name(commit: &str, patch_sha256: Option<&str>, cmake_args: &[String]) -> String {
    use sha2::Digest;
    let mut h = sha2::Sha256::new();
    for a in cmake_args {
        h.update(a.as_bytes());
        h.update([0]);
    }
    let args = hex::encode(h.finalize());
    let mut n = format!("llama-server-{}", &commit[..12.min(commit.len())]);
    if let Some(p) = patch_sha256 {
        n.push_str(&format!("-p{}", &p[..8.min(p.len())]));
    }
    n.push_str(&format!("-c{}", &args[..8]));
    n
}

/// The artifact of `spec.commit` + `spec.patch` + `spec.cmake_args` in `spec.out`: the one built
/// before under its [`keyed_name`] when there is one, else a new build. Returns it and whether it
/// was reused. The patch is read twice (to name, then to build): pass a file, not a pipe.
pub(crate) fn reuse_or_build(
    spec: &BuildSpec,
    progress: &mut dyn FnMut(&str),
) -> Result<(Artifact, bool), ArtifactError> {
    let repo = std::path::absolute(&spec.repo).map_err(write_err(&spec.repo))?;
    let commit = resolve_commit(&repo, &spec.commit)?;
    let patch_sha = match &spec.patch {
        Some(p) => Some(sha256_file(p).map_err(|e| ArtifactError::PatchUnreadable { path: p.clone(), source: e })?),
        None => None,
    };
    let name = keyed_name(&commit, patch_sha.as_deref(), &spec.cmake_args);
    let dir = spec.out.join(&name);
    if dir.exists() {
        let info = store::load(&dir)?;
        let same_patch = info.patch.as_ref().map(|p| p.sha256.as_str()) == patch_sha.as_deref();
        if info.base_commit != commit || !same_patch {
            return Err(ArtifactError::Mismatch {
                dir,
                why: format!("it was built from {} with patch {:?}", info.base_commit, info.patch.map(|p| p.sha256)),
            });
        }
        return Ok((Artifact { dir, info }, true));
    }
    let spec = BuildSpec { name: Some(name), commit, ..spec.clone() };
    build_artifact(&spec, progress).map(|a| (a, false))
}
