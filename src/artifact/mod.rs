//! `abprof build`: an immutable llama-server artifact from a commit (plus, optionally, one
//! patch) of a source tree that may hold uncommitted research — without touching that tree
//! (docs/methodology.md §6 "candidate builds"). A detached worktree of the commit, only the
//! given patch applied, CMake + Ninja for the `llama-server` target alone, then a read-only
//! folder: `bin/llama-server`, `VERSION.txt`, `build-info.json`, `CMakeCache.txt`, the logs and
//! the patch. A variant spec can name the folder (`variant::resolve_binary`).
mod cmake;
mod error;
mod git;
mod info;
mod store;

pub(crate) use error::ArtifactError;
pub(crate) use info::{BuildInfo, PatchInfo, BINARY_PATH};
pub(crate) use store::sha256_file;

use git::{resolve_commit, DetachedWorktree};
use std::path::{Path, PathBuf};
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

    let scratch = tempfile::Builder::new().prefix("abprof-build-").tempdir().map_err(write_err(&spec.out))?;
    let src = scratch.path().join("src");
    progress(&format!("worktree of {} at {}", &commit[..12], src.display()));
    let worktree = DetachedWorktree::add(&repo, &src, &commit)?;
    if let Some((path, bytes)) = &patch {
        let copy = staging.write("source.patch", bytes)?;
        progress(&format!("applying {}", path.display()));
        worktree.apply(&copy, path, &commit)?;
    }
    let build_dir = scratch.path().join("build");
    let configure_args = cmake::configure_args(&src, &build_dir, &spec.cmake_args);
    progress("configuring");
    cmake::configure(&configure_args, &staging.dir.join("configure.log"))?;
    progress(&format!("building {} (-j {})", cmake::TARGET, spec.jobs));
    cmake::build(&build_dir, spec.jobs, &staging.dir.join("build.log"))?;
    let built = cmake::find_binary(&build_dir).ok_or_else(|| ArtifactError::NoBinary(build_dir.clone()))?;
    let binary = staging.copy_in(&built, BINARY_PATH)?;
    let cache_text = std::fs::read_to_string(build_dir.join("CMakeCache.txt")).unwrap_or_default();
    staging.write("CMakeCache.txt", cache_text.as_bytes())?;
    let cache = cmake::read_cache(&cache_text);
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
