//! Which backend to open: the `--telemetry` choice, and `auto`'s search order with the reason
//! for each backend it passed over.
use std::path::PathBuf;
use std::time::Duration;

use super::amd_smi::AmdSmiLibrary;
use super::amdgpu_sysfs::AmdgpuSysfs;
use super::nvml::NvmlLibrary;
use super::proc_cpu::{ProcessCpu, WithProcessCpu};
use super::rocm_smi::RocmSmiLibrary;
use super::{Reading, SourceKind, TelemetryError, TelemetrySource};

#[derive(Debug, Clone)]
pub struct OpenOptions {
    pub kind: SourceKind,
    /// Device index within the backend (NVML index, ROCm SMI index, n-th amdgpu card).
    pub device: u32,
    /// What stands for `/sys` (fixture trees in tests and benchmarks).
    pub sysfs_root: PathBuf,
    /// A process whose CPU use is added to every reading (the server, for the idle gate).
    pub pid: Option<i32>,
    /// NVML energy-counter read interval; `None` never reads it.
    pub nvml_energy_every: Option<Duration>,
}

impl Default for OpenOptions {
    fn default() -> Self {
        OpenOptions {
            kind: SourceKind::Auto,
            device: 0,
            sysfs_root: PathBuf::from("/sys"),
            pid: None,
            nvml_energy_every: Some(super::nvml::DEFAULT_ENERGY_EVERY),
        }
    }
}

/// An opened source and, for `auto`, why it was chosen.
pub struct Opened {
    pub source: Box<dyn TelemetrySource>,
    pub why: String,
}

/// The `none` backend: every reading is empty.
pub struct NoTelemetry;

impl TelemetrySource for NoTelemetry {
    fn kind(&self) -> SourceKind {
        SourceKind::None
    }
    fn describe(&self) -> String {
        "no telemetry".into()
    }
    fn read(&mut self) -> Result<Reading, TelemetryError> {
        Ok(Reading::default())
    }
}

fn open_one(kind: SourceKind, o: &OpenOptions) -> Result<Box<dyn TelemetrySource>, TelemetryError> {
    Ok(match kind {
        SourceKind::Nvml => Box::new(NvmlLibrary::load()?.init(o.device, o.nvml_energy_every)?),
        SourceKind::AmdgpuSysfs => Box::new(AmdgpuSysfs::open(&o.sysfs_root, o.device)?),
        SourceKind::RocmSmi => Box::new(RocmSmiLibrary::load()?.init(o.device)?),
        SourceKind::AmdSmi => Box::new(AmdSmiLibrary::load()?.init(o.device)?),
        SourceKind::Cpu => Box::new(ProcessCpu::open(o.pid.ok_or(TelemetryError::CpuNeedsPid)?)?),
        SourceKind::None | SourceKind::Auto => Box::new(NoTelemetry),
    })
}

/// `auto`'s search: the first GPU backend that opens (an SMI library only where its first reading
/// carries a power or a temperature), else the CPU of `pid`, else nothing; with why each backend
/// before it was passed over. `open` opens one backend.
fn choose(
    o: &OpenOptions,
    mut open: impl FnMut(SourceKind) -> Result<Box<dyn TelemetrySource>, TelemetryError>,
) -> Result<(Box<dyn TelemetrySource>, String), TelemetryError> {
    let mut passed = Vec::new();
    let mut chosen = None;
    for kind in [SourceKind::Nvml, SourceKind::AmdSmi, SourceKind::RocmSmi, SourceKind::AmdgpuSysfs] {
        // Without a DRM class folder there is no amdgpu device; the SMI libraries would only
        // print their own "Failed to open drm root directory" to stderr before failing.
        let smi = matches!(kind, SourceKind::AmdSmi | SourceKind::RocmSmi);
        if smi && !o.sysfs_root.join("class/drm").is_dir() {
            passed.push(format!("{kind}: no {} (no GPU driver loaded)", o.sysfs_root.join("class/drm").display()));
            continue;
        }
        match open(kind) {
            Ok(mut s) => match smi.then(|| empty_first_reading(s.as_mut())).flatten() {
                Some(why) => passed.push(format!("{kind}: {why}")),
                None => {
                    chosen = Some((s, kind));
                    break;
                }
            },
            Err(e) => passed.push(format!("{kind}: {e}")),
        }
    }
    let (source, kind) = match chosen {
        Some(found) => found,
        None if o.pid.is_some() => (open(SourceKind::Cpu)?, SourceKind::Cpu),
        None => (open_one(SourceKind::None, o)?, SourceKind::None),
    };
    let mut why = format!("auto chose {kind}");
    if !passed.is_empty() {
        why += &format!(" after passing over {}", passed.join("; "));
    }
    Ok((source, why))
}

/// Why a freshly opened SMI source is no use, where its first reading carries no power and no
/// temperature: AMD SMI before 26.x reported every value of a gfx1151 APU as N/A (docs/methodology.md
/// §9.2), which would stand for a measured GPU in every sample.
fn empty_first_reading(source: &mut dyn TelemetrySource) -> Option<String> {
    use super::Field;
    const WANTED: [Field; 6] =
        [Field::PowerW, Field::PowerAvgW, Field::GfxPowerW, Field::EnergyJ, Field::TempGpuC, Field::TempHotspotC];
    match source.read() {
        Ok(r) if WANTED.iter().any(|f| r.get(*f).is_some()) => None,
        Ok(_) => Some(format!(
            "{} opened, but its first reading carried no power and no temperature (every value N/A)",
            source.describe()
        )),
        Err(e) => Some(format!("{} opened, but its first reading failed: {e}", source.describe())),
    }
}

/// Opens the requested backend. `auto` tries NVML, then AMD SMI, then ROCm SMI, then amdgpu sysfs,
/// then the CPU of `pid` (or nothing), and says which it took and why the others were passed over
/// (docs/methodology.md §9.2). Once one SMI library loaded, the other is passed over unopened.
/// With a pid, GPU backends also report that process's CPU use.
pub fn open(o: &OpenOptions) -> Result<Opened, TelemetryError> {
    let (source, why) = if o.kind == SourceKind::Auto {
        choose(o, |kind| open_one(kind, o))?
    } else {
        (open_one(o.kind, o)?, format!("{} as requested", o.kind))
    };
    let source: Box<dyn TelemetrySource> = match o.pid {
        Some(pid) if !matches!(source.kind(), SourceKind::Cpu) => {
            Box::new(WithProcessCpu { inner: source, cpu: ProcessCpu::open(pid)? })
        }
        _ => source,
    };
    Ok(Opened { source, why })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An SMI source as a library that knows the device but reads nothing from it answers.
    struct EmptySmi;

    impl TelemetrySource for EmptySmi {
        fn kind(&self) -> SourceKind {
            SourceKind::AmdSmi
        }
        fn describe(&self) -> String {
            "AMD SMI 25.2.0 device 0: AMD Radeon 8060S".into()
        }
        fn read(&mut self) -> Result<Reading, TelemetryError> {
            Ok(Reading { gtt_used_bytes: Some(1.0), ..Reading::default() })
        }
    }

    /// `auto` passes over an AMD SMI whose first reading is all N/A, says why, and takes the next
    /// source that reads (the APU sysfs tree of the fixtures here).
    #[test]
    fn auto_passes_over_an_smi_source_whose_first_reading_is_empty() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sysfs/apu-v3_0");
        let o = OpenOptions { sysfs_root: root.clone(), ..OpenOptions::default() };
        let (source, why) = choose(&o, |kind| match kind {
            SourceKind::AmdSmi => Ok(Box::new(EmptySmi)),
            SourceKind::AmdgpuSysfs => open_one(kind, &o),
            _ => Err(TelemetryError::NoNvidiaDevice { detail: "no library here".into() }),
        })
        .unwrap();
        assert_eq!(source.kind(), SourceKind::AmdgpuSysfs, "{why}");
        assert!(why.contains("amd-smi: AMD SMI 25.2.0 device 0: AMD Radeon 8060S opened, but its first reading carried no power and no temperature"), "{why}");
        // A source whose first reading has a temperature is taken.
        struct Warm;
        impl TelemetrySource for Warm {
            fn kind(&self) -> SourceKind {
                SourceKind::AmdSmi
            }
            fn describe(&self) -> String {
                "AMD SMI 27.1.0".into()
            }
            fn read(&mut self) -> Result<Reading, TelemetryError> {
                Ok(Reading { temp_gpu_c: Some(41.0), ..Reading::default() })
            }
        }
        let (source, _) = choose(&o, |kind| match kind {
            SourceKind::AmdSmi => Ok(Box::new(Warm)),
            _ => Err(TelemetryError::NoNvidiaDevice { detail: "no library here".into() }),
        })
        .unwrap();
        assert_eq!(source.kind(), SourceKind::AmdSmi);
    }
}
