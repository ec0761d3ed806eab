//! The artifact folder: assembled under a hidden staging name, made read-only, then renamed
//! into place in one step, so an artifact either exists complete or not at all, and an existing
//! one is never overwritten.
use super::error::ArtifactError;
use sha2::{Digest, Sha256};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

static NAME: LazyLock<regex::Regex> = LazyLock::new(|| regex::Regex::new(r"^[A-Za-z0-9._-]+$").unwrap());

pub(crate) fn check_name(name: &str) -> Result<(), ArtifactError> {
    if NAME.is_match(name) && !name.starts_with('.') {
        Ok(())
    } else {
        Err(ArtifactError::BadName(name.into()))
    }
}

pub(crate) fn sha256_file(path: &Path) -> std::io::Result<String> {
    let mut f = std::fs::File::open(path)?;
    let mut h = Sha256::new();
    std::io::copy(&mut f, &mut h)?;
    Ok(hex::encode(h.finalize()))
}

/// The folder being assembled; a failed build leaves it (with its logs) for inspection, and the
/// next attempt starts it afresh.
pub(crate) struct Staging {
    pub(crate) dir: PathBuf,
    pub(crate) dest: PathBuf,
}

fn write_err(path: &Path) -> impl FnOnce(std::io::Error) -> ArtifactError + '_ {
    move |e| ArtifactError::Write { path: path.to_path_buf(), source: e }
}

impl Staging {
    pub(crate) fn create(out: &Path, name: &str) -> Result<Staging, ArtifactError> {
        let dest = out.join(name);
        if dest.exists() {
            return Err(ArtifactError::Exists(dest));
        }
        let dir = out.join(format!(".{name}.partial"));
        if dir.exists() {
            std::fs::remove_dir_all(&dir).map_err(write_err(&dir))?;
        }
        std::fs::create_dir_all(dir.join("bin")).map_err(write_err(&dir))?;
        Ok(Staging { dir, dest })
    }

    pub(crate) fn write(&self, rel: &str, bytes: &[u8]) -> Result<PathBuf, ArtifactError> {
        let p = self.dir.join(rel);
        std::fs::write(&p, bytes).map_err(write_err(&p))?;
        Ok(p)
    }

    pub(crate) fn copy_in(&self, from: &Path, rel: &str) -> Result<PathBuf, ArtifactError> {
        let p = self.dir.join(rel);
        std::fs::copy(from, &p).map_err(write_err(&p))?;
        Ok(p)
    }

    /// Read-only files (executables keep their execute bits), then the rename into place.
    /// Folders stay writable so an artifact can still be deleted deliberately.
    pub(crate) fn seal(self) -> Result<PathBuf, ArtifactError> {
        let mut stack = vec![self.dir.clone()];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).map_err(write_err(&d))?.flatten() {
                let p = e.path();
                if p.is_dir() {
                    stack.push(p);
                    continue;
                }
                let mode = std::fs::metadata(&p).map_err(write_err(&p))?.permissions().mode();
                let sealed = if mode & 0o111 != 0 { 0o555 } else { 0o444 };
                std::fs::set_permissions(&p, std::fs::Permissions::from_mode(sealed)).map_err(write_err(&p))?;
            }
        }
        if self.dest.exists() {
            return Err(ArtifactError::Exists(self.dest));
        }
        std::fs::rename(&self.dir, &self.dest).map_err(write_err(&self.dest))?;
        Ok(self.dest)
    }
}

/// The record of a finished artifact, checked against its binary: an artifact is reused only if
/// its binary is still the one that was built.
pub(crate) fn load(dir: &Path) -> Result<super::BuildInfo, ArtifactError> {
    let mismatch = |why: String| ArtifactError::Mismatch { dir: dir.to_path_buf(), why };
    let text = std::fs::read_to_string(dir.join("build-info.json"))
        .map_err(|e| mismatch(format!("its build-info.json cannot be read ({e})")))?;
    let info: super::BuildInfo =
        serde_json::from_str(&text).map_err(|e| mismatch(format!("its build-info.json does not parse ({e})")))?;
    let bin = dir.join(&info.binary);
    let sha = sha256_file(&bin).map_err(|e| mismatch(format!("its binary {} cannot be read ({e})", bin.display())))?;
    if sha != info.binary_sha256 {
        return Err(mismatch(format!(
            "its binary's sha256 is {sha}, not the {} it was built with",
            info.binary_sha256
        )));
    }
    Ok(info)
}
