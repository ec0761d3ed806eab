//! Reading a server log from disk.
use std::io::Read;
use std::path::Path;

/// The most of a log that is read: far above one sample's log (a soak of hundreds of requests
/// writes a few MB), far below what a wrong path could pour in (`/dev/zero`, a disk image).
pub(crate) const MAX_LOG_BYTES: u64 = 256 << 20;

/// A server log as text. Invalid UTF-8 (a multi-byte character cut by a crash, a stray binary
/// byte) becomes U+FFFD: one bad byte must not hide the timing block of an otherwise whole log.
/// A file longer than [`MAX_LOG_BYTES`] is refused, read no further (`InvalidData`).
pub(crate) fn read_lossy(path: &Path) -> std::io::Result<String> {
    let mut bytes = Vec::new();
    std::fs::File::open(path)?.take(MAX_LOG_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_LOG_BYTES {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "it holds more than {} MiB, far more than a llama-server log: pass the server's log",
                MAX_LOG_BYTES >> 20
            ),
        ));
    }
    Ok(match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_source_without_end_is_refused_after_the_bound() {
        let err = read_lossy(Path::new("/dev/zero")).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::InvalidData);
        assert!(err.to_string().contains("more than 256 MiB"), "{err}");
    }
}
