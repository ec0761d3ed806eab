//! `abprof build` on a real git repository with a tiny CMake project made here: the artifact
//! comes from the commit plus the patch only, and the source tree is left exactly as it was.
mod common;
use common::*;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

const CMAKE: &str = "cmake_minimum_required(VERSION 3.14)\nproject(tiny LANGUAGES C)\noption(TINY_FLAG \"a flag the artifact must record\" OFF)\nadd_executable(llama-server main.c)\n";
const MAIN: &str = "#include <stdio.h>\nint main(void) { puts(\"tiny llama-server: base\"); return 0; }\n";

/// A repository with one commit, a patch against it, and uncommitted work on top.
struct Repo {
    _dir: tempfile::TempDir,
    path: PathBuf,
    commit: String,
    patch: PathBuf,
}

fn repo() -> Repo {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("llama.cpp");
    std::fs::create_dir(&path).unwrap();
    git(&path, &["init", "-q"]);
    std::fs::write(path.join("CMakeLists.txt"), CMAKE).unwrap();
    std::fs::write(path.join("main.c"), MAIN).unwrap();
    git(&path, &["add", "."]);
    git(&path, &["commit", "-q", "-m", "base"]);
    let commit = git(&path, &["rev-parse", "HEAD"]).trim().to_string();
    // The candidate patch, made the way a kernel engineer makes one, then undone.
    std::fs::write(path.join("main.c"), MAIN.replace("base", "patched")).unwrap();
    let patch = dir.path().join("cand.patch");
    std::fs::write(&patch, git(&path, &["diff"])).unwrap();
    git(&path, &["checkout", "-q", "--", "main.c"]);
    // Uncommitted research that must neither be built nor disturbed.
    std::fs::write(path.join("main.c"), MAIN.replace("base", "dirty research")).unwrap();
    std::fs::write(path.join("notes.txt"), "untracked\n").unwrap();
    git(&path, &["add", "notes.txt"]);
    std::fs::write(path.join("scratch.txt"), "untracked too\n").unwrap();
    Repo { _dir: dir, path, commit, patch }
}

/// Everything about the source tree a build must not change.
fn state(repo: &Path) -> Vec<String> {
    vec![
        git(repo, &["status", "--porcelain=v1", "--untracked-files=all"]),
        git(repo, &["rev-parse", "HEAD"]),
        git(repo, &["worktree", "list", "--porcelain"]),
        git(repo, &["stash", "list"]),
        git(repo, &["branch", "--list"]),
        git(repo, &["diff"]),
        git(repo, &["diff", "--cached"]),
    ]
}

fn sha256(p: &Path) -> String {
    use sha2::{Digest, Sha256};
    hex::encode(Sha256::digest(std::fs::read(p).unwrap()))
}

fn build(r: &Repo, out: &Path, name: &str, patch: Option<&Path>) -> std::process::Output {
    let mut c = abprof();
    c.args(["build", "--repo"])
        .arg(&r.path)
        .args(["--commit", &r.commit, "--name", name, "--jobs", "2", "--out"])
        .arg(out);
    if let Some(p) = patch {
        c.arg("--patch").arg(p);
    }
    c.args(["--", "-DTINY_FLAG=ON"]).output().unwrap()
}

#[test]
fn builds_an_immutable_artifact_and_leaves_the_source_tree_alone() {
    let r = repo();
    let before = state(&r.path);
    let out_dir = tempfile::tempdir().unwrap();
    let out = build(&r, out_dir.path(), "cand", Some(&r.patch));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(state(&r.path), before, "the source tree changed");
    assert_eq!(std::fs::read_to_string(r.path.join("main.c")).unwrap(), MAIN.replace("base", "dirty research"));

    let art = out_dir.path().join("cand");
    let bin = art.join("bin/llama-server");
    // Built from the commit plus the patch: not the base, not the uncommitted research.
    let run = Command::new(&bin).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&run.stdout), "tiny llama-server: patched\n");

    let version = std::fs::read_to_string(art.join("VERSION.txt")).unwrap();
    assert!(version.contains(&format!("base_commit: {}", r.commit)), "{version}");
    assert!(version.contains(&format!("patch_sha256: {}", sha256(&r.patch))), "{version}");
    assert!(version.contains(&format!("binary_sha256: {}", sha256(&bin))), "{version}");
    assert!(version.contains("cache: TINY_FLAG=ON"), "{version}");
    assert!(version.contains("cache: CMAKE_BUILD_TYPE=Release"), "{version}");
    assert!(version.contains("cache: CMAKE_GENERATOR=Ninja"), "{version}");
    let compiler = version.lines().find(|l| l.starts_with("compiler C: ")).unwrap_or_else(|| panic!("{version}"));
    assert!(!compiler.contains("version unknown"), "{compiler}");
    let info = read_json(&art.join("build-info.json"));
    assert_eq!(info["base_commit"], r.commit.as_str());
    assert_eq!(std::fs::read(art.join("source.patch")).unwrap(), std::fs::read(&r.patch).unwrap());
    for f in [
        "VERSION.txt",
        "build-info.json",
        "CMakeCache.txt",
        "configure.log",
        "build.log",
        "source.patch",
        "bin/llama-server",
    ] {
        let mode = std::fs::metadata(art.join(f)).unwrap().permissions().mode();
        assert_eq!(mode & 0o222, 0, "{f} is writable ({mode:o})");
    }
    assert_ne!(std::fs::metadata(&bin).unwrap().permissions().mode() & 0o111, 0);
    // No staging folder or worktree is left behind.
    let left: Vec<_> = std::fs::read_dir(out_dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(left, vec![std::ffi::OsString::from("cand")]);

    // A variant spec can name the folder.
    let v = abprof::variant::Variant::parse(&format!("cand={}", art.display())).unwrap();
    assert_eq!(v.binary, bin);
    assert_eq!(v.artifact.as_deref(), Some(art.as_path()));

    // Artifacts are immutable: the same name again is refused, and the first is untouched.
    let again = build(&r, out_dir.path(), "cand", None);
    assert_eq!(again.status.code(), Some(1));
    let err = String::from_utf8_lossy(&again.stderr);
    assert!(err.lines().any(|l| l.starts_with("abprof: error:") && l.contains("already exists")), "{err}");
    assert_eq!(std::fs::read_to_string(art.join("VERSION.txt")).unwrap(), version);
    assert_eq!(state(&r.path), before);
}

#[test]
fn bad_inputs_give_one_clear_line_and_clean_up() {
    let r = repo();
    let before = state(&r.path);
    let out_dir = tempfile::tempdir().unwrap();
    let one_error = |out: std::process::Output, needle: &str| {
        assert_eq!(out.status.code(), Some(1));
        let errors: Vec<_> = stderr_lines(&out).into_iter().filter(|l| l.starts_with("abprof: error:")).collect();
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert!(errors[0].contains(needle), "{:?} lacks {needle:?}", errors[0]);
    };
    // A patch made for other code.
    let wrong = out_dir.path().join("wrong.patch");
    std::fs::write(&wrong, std::fs::read_to_string(&r.patch).unwrap().replace("base", "nothing like this")).unwrap();
    one_error(build(&r, out_dir.path(), "wrong", Some(&wrong)), "does not apply");
    // A commit that does not exist.
    let mut c = abprof();
    c.args(["build", "--repo"]).arg(&r.path).args(["--commit", "0123456789abcdef", "--out"]).arg(out_dir.path());
    one_error(c.output().unwrap(), "is not in");
    // Not a repository at all.
    let mut c = abprof();
    c.args(["build", "--repo"]).arg(out_dir.path()).args(["--commit", "HEAD", "--out"]).arg(out_dir.path());
    one_error(c.output().unwrap(), "not a git repository");
    // A configure failure names its log.
    let mut c = abprof();
    c.args(["build", "--repo"])
        .arg(&r.path)
        .args(["--commit", &r.commit, "--name", "nogen", "--out"])
        .arg(out_dir.path());
    c.args(["--", "-GNo Such Generator"]);
    one_error(c.output().unwrap(), "configure.log");
    // Every failure removed its worktree and left the source tree as it was.
    assert_eq!(state(&r.path), before);
    assert!(!out_dir.path().join("wrong").exists() && !out_dir.path().join("nogen").exists());
}
