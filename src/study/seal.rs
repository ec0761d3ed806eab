//! A sample's seal (docs/methodology.md §7.21): when abprof has written a sample's files it
//! records each one's sha256 in the sample's folder as `SHA256SUMS` (the format `sha256sum -c`
//! reads), so that `summarize`, `report` and `history import` can tell the folder they read from
//! the one abprof wrote. A file listed there that changed or went missing rejects the sample
//! (`evidence-changed`); a sample without a seal (abprof before it, or one stopped between its
//! record and its seal) is read as before.
use crate::artifact::sha256_file;
use std::path::{Path, PathBuf};

// The seal's file name in a sample's folder.
use super::layout::SEAL_FILE as SEAL;

/// Every file under `dir` (its sub-folders included, the seal excluded), relative, sorted.
fn files_under(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut todo = vec![PathBuf::new()];
    while let Some(rel) = todo.pop() {
        for e in std::fs::read_dir(dir.join(&rel))? {
            let e = e?;
            let name = rel.join(e.file_name());
            let kind = e.file_type()?;
            if kind.is_dir() {
                todo.push(name);
            } else if kind.is_file() && name != Path::new(SEAL) {
                out.push(name);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Records the sha256 of every file in the sample folder `dir`, atomically.
pub(crate) fn seal(dir: &Path) -> std::io::Result<()> {
    let mut text = String::new();
    for rel in files_under(dir)? {
        let sha = sha256_file(&dir.join(&rel))?;
        text.push_str(&format!("{sha}  {}\n", rel.display()));
    }
    crate::atomic_file::write_atomic(&dir.join(SEAL), text.as_bytes())
}

/// What a sample folder's seal says about its files now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SealCheck {
    /// No seal: written before abprof sealed samples, or stopped before its seal.
    Unsealed,
    Intact,
    /// What changed, one phrase per file ("server.log is missing", "sample.json changed").
    Changed(Vec<String>),
}

/// Compares the sample folder `dir` with its seal.
pub(crate) fn check(dir: &Path) -> SealCheck {
    let Ok(text) = std::fs::read_to_string(dir.join(SEAL)) else {
        return if dir.join(SEAL).exists() {
            SealCheck::Changed(vec![format!("{SEAL} cannot be read")])
        } else {
            SealCheck::Unsealed
        };
    };
    let mut changed = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let Some((sha, name)) = line.split_once("  ") else {
            changed.push(format!("{SEAL} has a line that is not 'SHA256  FILE': {line:?}"));
            continue;
        };
        let path = dir.join(name);
        match sha256_file(&path) {
            Ok(now) if now == sha => {}
            Ok(_) => changed.push(format!("{name} changed")),
            Err(_) if !path.exists() => changed.push(format!("{name} is missing")),
            Err(e) => changed.push(format!("{name} cannot be read ({e})")),
        }
    }
    if changed.is_empty() {
        SealCheck::Intact
    } else {
        SealCheck::Changed(changed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_folder_is_intact_until_a_file_changes_or_goes() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path();
        assert_eq!(check(dir), SealCheck::Unsealed);
        std::fs::write(dir.join("sample.json"), r#"{"decode_tps": 30.0}"#).unwrap();
        std::fs::write(dir.join("server.log"), "eval time = 100 ms\n").unwrap();
        std::fs::create_dir(dir.join("trace")).unwrap();
        std::fs::write(dir.join("trace/kernels.csv"), "k,1\n").unwrap();
        seal(dir).unwrap();
        let text = std::fs::read_to_string(dir.join(SEAL)).unwrap();
        assert_eq!(text.lines().count(), 3, "{text}");
        assert!(text.contains("  trace/kernels.csv\n") && !text.contains(SEAL), "{text}");
        assert_eq!(check(dir), SealCheck::Intact);
        std::fs::write(dir.join("sample.json"), r#"{"decode_tps": 300.0}"#).unwrap();
        std::fs::remove_file(dir.join("server.log")).unwrap();
        assert_eq!(check(dir), SealCheck::Changed(vec!["sample.json changed".into(), "server.log is missing".into()]));
    }
}
