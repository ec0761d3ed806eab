//! AMD SMI and ROCm SMI never share a process (docs/methodology.md §9.2): with librocm_smi64
//! loaded beside it, AMD SMI sees no device. The first of the two that abprof opens is the only one
//! it ever opens; asking for the other afterwards is a named error, never a second load.
use std::sync::Mutex;

use super::TelemetryError;

/// The two SMI libraries of AMD.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SmiLibrary {
    AmdSmi,
    RocmSmi,
}

impl SmiLibrary {
    pub(crate) fn name(self) -> &'static str {
        match self {
            SmiLibrary::AmdSmi => "AMD SMI (libamd_smi)",
            SmiLibrary::RocmSmi => "ROCm SMI (librocm_smi64)",
        }
    }

    /// The `--telemetry` value that reads through it.
    fn flag(self) -> &'static str {
        match self {
            SmiLibrary::AmdSmi => "amd-smi",
            SmiLibrary::RocmSmi => "rocm-smi",
        }
    }
}

/// Which SMI library this process loaded, if any. Held across the load itself, so two threads
/// cannot load one each.
static LOADED: Mutex<Option<SmiLibrary>> = Mutex::new(None);

/// Loads `which` with `load` unless the other SMI library is already loaded in this process; a
/// library that fails to load claims nothing, so the other may still be tried.
pub(crate) fn load_exclusive<L>(
    which: SmiLibrary,
    load: impl FnOnce() -> Result<L, TelemetryError>,
) -> Result<L, TelemetryError> {
    let mut loaded = LOADED.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(other) = *loaded {
        if other != which {
            return Err(TelemetryError::OtherSmiLoaded {
                wanted: which.name(),
                loaded: other.name(),
                flag: other.flag(),
            });
        }
    }
    let lib = load()?;
    *loaded = Some(which);
    Ok(lib)
}
