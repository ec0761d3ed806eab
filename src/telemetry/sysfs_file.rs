//! A sysfs (or procfs) attribute kept open and re-read with `pread` at offset 0: the kernel
//! regenerates the content on each read from offset 0, so one open file serves every sample and
//! the sampler's loop makes one syscall per value and no allocation.
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use super::TelemetryError;

pub(crate) struct SysfsFile {
    file: File,
    path: PathBuf,
}

impl SysfsFile {
    /// Opens `path` and reads it once, so an attribute that exists but cannot be read (some
    /// return EINVAL or ENODATA on parts that lack the sensor) is rejected up front.
    pub(crate) fn open_readable(path: &Path) -> Result<SysfsFile, TelemetryError> {
        let file = File::open(path).map_err(|source| TelemetryError::Io { path: path.to_owned(), source })?;
        let f = SysfsFile { file, path: path.to_owned() };
        let mut probe = [0u8; 4096];
        f.read_into(&mut probe)?;
        Ok(f)
    }

    /// `open_readable`, or `None` when the file is absent or unreadable: most attributes exist
    /// only on some ASICs, and a missing one just leaves its field empty.
    pub(crate) fn open_optional(path: &Path) -> Option<SysfsFile> {
        Self::open_readable(path).ok()
    }

    /// Reads the whole attribute into `buf`; returns the bytes read. A read that returns less
    /// than asked is taken as the end: sysfs and procfs hand over a whole attribute in one read,
    /// and stopping there saves the second, empty read on every sample.
    pub(crate) fn read_into(&self, buf: &mut [u8]) -> Result<usize, TelemetryError> {
        let mut n = 0;
        while n < buf.len() {
            match self.file.read_at(&mut buf[n..], n as u64) {
                Ok(0) => break,
                Ok(k) if n + k < buf.len() => return Ok(n + k),
                Ok(k) => n += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(source) => return Err(TelemetryError::Io { path: self.path.clone(), source }),
            }
        }
        Ok(n)
    }

    /// The attribute as one integer (leading/trailing whitespace ignored).
    pub(crate) fn read_i64(&self) -> Result<i64, TelemetryError> {
        let mut buf = [0u8; 64];
        let n = self.read_into(&mut buf)?;
        parse_i64(&buf[..n]).ok_or_else(|| self.parse_error("an integer", &buf[..n]))
    }

    pub(crate) fn parse_error(&self, what: &'static str, bytes: &[u8]) -> TelemetryError {
        TelemetryError::Parse { path: self.path.clone(), what, text: String::from_utf8_lossy(bytes).into_owned() }
    }
}

/// Parses an ASCII integer surrounded by optional whitespace, without allocating.
pub(crate) fn parse_i64(bytes: &[u8]) -> Option<i64> {
    let s = std::str::from_utf8(bytes).ok()?.trim();
    s.parse().ok()
}

/// The current level of a `pp_dpm_*` table: the line marked `*`, e.g. `1: 2505Mhz *` → 2505.
pub(crate) fn parse_dpm_current_mhz(bytes: &[u8]) -> Option<f64> {
    let text = std::str::from_utf8(bytes).ok()?;
    let line = text.lines().find(|l| l.trim_end().ends_with('*'))?;
    let after_colon = line.split_once(':')?.1.trim_start();
    let digits_end = after_colon.find(|c: char| !c.is_ascii_digit())?;
    let value: f64 = after_colon[..digits_end].parse().ok()?;
    // Compared in place: this runs on every sample where hwmon has no clock input.
    let unit = after_colon[digits_end..].trim_start().as_bytes();
    let is = |u: &[u8]| unit.len() >= 3 && unit[..3].eq_ignore_ascii_case(u);
    if is(b"mhz") {
        Some(value)
    } else if is(b"ghz") {
        Some(value * 1000.0)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_integers_and_dpm_tables() {
        assert_eq!(parse_i64(b" 42\n"), Some(42));
        assert_eq!(parse_i64(b"-7"), Some(-7));
        assert_eq!(parse_i64(b"x"), None);
        assert_eq!(parse_dpm_current_mhz(b"0: 500Mhz \n1: 2505Mhz *\n2: 2700Mhz \n"), Some(2505.0));
        assert_eq!(parse_dpm_current_mhz(b"0: 96Mhz *\n"), Some(96.0));
        assert_eq!(parse_dpm_current_mhz(b"0: 500Mhz\n1: 800Mhz\n"), None);
        assert_eq!(parse_dpm_current_mhz(b"S: 19Mhz *\n"), Some(19.0));
    }
}
