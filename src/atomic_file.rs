//! Evidence files written so a reader (a resumed study, `summarize`, a second terminal) never
//! sees half of one: a temporary file beside the target, then a rename.
use std::path::Path;

use serde::Serialize;

/// Writes `bytes` to `path` through `.<name>.tmp` in the same folder. A write that fails (a full
/// disk) takes its half-written temporary with it.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let name = path.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.tmp"));
    std::fs::write(&tmp, bytes).and_then(|()| std::fs::rename(&tmp, path)).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

/// `value` as pretty JSON with a final newline, written atomically.
pub(crate) fn write_json<T: Serialize>(path: &Path, value: &T) -> std::io::Result<()> {
    write_atomic(path, (crate::schema::to_json_pretty(value) + "\n").as_bytes())
}

#[cfg(test)]
mod tests {
    #[test]
    fn replaces_the_file_and_leaves_no_temporary() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("x.json");
        super::write_json(&p, &serde_json::json!({"a": 1})).unwrap();
        super::write_json(&p, &serde_json::json!({"a": 2})).unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "{\n  \"schema_version\": 3,\n  \"a\": 2\n}\n");
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 1);
    }
}
