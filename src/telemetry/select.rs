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

/// Opens the requested backend. `auto` tries NVML, then AMD SMI, then ROCm SMI, then amdgpu sysfs,
/// then the CPU of `pid` (or nothing), and says which it took and why the others were passed over
/// (docs/methodology.md §9.2). Once one SMI library loaded, the other is passed over unopened.
/// With a pid, GPU backends also report that process's CPU use.
pub fn open(o: &OpenOptions) -> Result<Opened, TelemetryError> {
    let (source, why) = if o.kind == SourceKind::Auto {
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
            match open_one(kind, o) {
                Ok(s) => {
                    chosen = Some((s, kind));
                    break;
                }
                Err(e) => passed.push(format!("{kind}: {e}")),
            }
        }
        let (source, kind) = match chosen {
            Some(found) => found,
            None if o.pid.is_some() => (open_one(SourceKind::Cpu, o)?, SourceKind::Cpu),
            None => (open_one(SourceKind::None, o)?, SourceKind::None),
        };
        let mut why = format!("auto chose {kind}");
        if !passed.is_empty() {
            why += &format!(" after passing over {}", passed.join("; "));
        }
        (source, why)
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
