//! Reading a server log from disk.
use std::path::Path;

/// A server log as text. Invalid UTF-8 (a multi-byte character cut by a crash, a stray binary
/// byte) becomes U+FFFD: one bad byte must not hide the timing block of an otherwise whole log.
pub(crate) fn read_lossy(path: &Path) -> std::io::Result<String> {
    let bytes = std::fs::read(path)?;
    Ok(match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    })
}
