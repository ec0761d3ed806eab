//! Which backend to open: the `--telemetry` choice, and `auto`'s search order with the reason
//! for each backend it passed over.
use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use super::amdgpu_sysfs::AmdgpuSysfs;
use super::nvml::NvmlLibrary;
use super::proc_cpu::{ProcessCpu, WithProcessCpu};
use super::rocm_smi::RocmSmiLibrary;
use super::{Reading, TelemetryError, TelemetrySource};

/// A `--telemetry` choice. Its names live in [`SourceKind::name`] alone: clap parses by them, so a
/// wrong name is a usage error before anything starts, and study files keep the same names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SourceKind {
    Auto,
    RocmSmi,
    AmdgpuSysfs,
    Nvml,
    Cpu,
    None,
}

impl SourceKind {
    const ALL: [SourceKind; 6] = [
        SourceKind::Auto,
        SourceKind::RocmSmi,
        SourceKind::AmdgpuSysfs,
        SourceKind::Nvml,
        SourceKind::Cpu,
        SourceKind::None,
    ];

    pub(crate) fn name(self) -> &'static str {
        match self {
            SourceKind::Auto => "auto",
            SourceKind::RocmSmi => "rocm-smi",
            SourceKind::AmdgpuSysfs => "amdgpu-sysfs",
            SourceKind::Nvml => "nvml",
            SourceKind::Cpu => "cpu",
            SourceKind::None => "none",
        }
    }

    fn help(self) -> Option<&'static str> {
        match self {
            SourceKind::Auto => {
                Some("NVML, else amdgpu sysfs, else ROCm SMI, else a process's CPU (with a pid), else none")
            }
            SourceKind::Cpu => Some("only a process's CPU use (needs its pid)"),
            _ => None,
        }
    }

    /// The fastest rate a study's sampler may read this source at (docs/methodology.md §9.2): a
    /// read faster than the source refreshes only repeats a value, and costs the host CPU the
    /// server shares (docs/methodology.md §7.15: a 1 kHz CPU-only sampler slowed decode sixfold).
    /// NVML: power refreshes every 100 ms; ten reads per refresh date each new value within
    /// 10 ms, the resolution of the phase split, and the driver's own 20 ms power samples are
    /// drained beside the reads. amdgpu sysfs and ROCm SMI: the SMU's gpu_metrics table
    /// refreshes about every millisecond. CPU only (and none, which samples the server's CPU):
    /// the server's CPU is read over 10 ms windows, one reading per window.
    pub(crate) fn max_study_hz(self) -> u32 {
        match self {
            SourceKind::Nvml => 100,
            SourceKind::AmdgpuSysfs | SourceKind::RocmSmi => 1000,
            SourceKind::Cpu | SourceKind::None | SourceKind::Auto => 100,
        }
    }

    pub(crate) fn choices() -> String {
        SourceKind::ALL.map(SourceKind::name).join(", ")
    }
}

/// A study file spells a source by its flag name.
impl serde::Serialize for SourceKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> serde::Deserialize<'de> for SourceKind {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        name.parse().map_err(serde::de::Error::custom)
    }
}

impl clap::ValueEnum for SourceKind {
    fn value_variants<'a>() -> &'a [Self] {
        &SourceKind::ALL
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        let v = clap::builder::PossibleValue::new(self.name());
        Some(match self.help() {
            Some(h) => v.help(h),
            None => v,
        })
    }
}

impl From<SourceKind> for String {
    fn from(kind: SourceKind) -> String {
        kind.name().to_string()
    }
}

impl fmt::Display for SourceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for SourceKind {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        SourceKind::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| format!("unknown telemetry backend {s:?}; choose one of {}", SourceKind::choices()))
    }
}

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
        SourceKind::Cpu => Box::new(ProcessCpu::open(o.pid.ok_or(TelemetryError::CpuNeedsPid)?)?),
        SourceKind::None | SourceKind::Auto => Box::new(NoTelemetry),
    })
}

/// Opens the requested backend. `auto` tries NVML, then amdgpu sysfs, then ROCm SMI, then the
/// CPU of `pid` (or nothing), and says which it took and why the others were passed over.
/// With a pid, GPU backends also report that process's CPU use.
pub fn open(o: &OpenOptions) -> Result<Opened, TelemetryError> {
    let (source, why) = if o.kind == SourceKind::Auto {
        let mut passed = Vec::new();
        let mut chosen = None;
        for kind in [SourceKind::Nvml, SourceKind::AmdgpuSysfs, SourceKind::RocmSmi] {
            // Without a DRM class folder there is no amdgpu device; rsmi_init would only print
            // its own "Failed to open drm root directory" to stderr before failing.
            if kind == SourceKind::RocmSmi && !o.sysfs_root.join("class/drm").is_dir() {
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

#[cfg(test)]
mod tests {
    use super::*;
    use clap::ValueEnum;

    #[test]
    fn command_line_names_are_the_study_file_names() {
        for kind in SourceKind::value_variants() {
            assert_eq!(kind.to_possible_value().unwrap().get_name(), kind.name());
            assert_eq!(kind.name().parse::<SourceKind>(), Ok(*kind));
            assert_eq!(String::from(*kind), kind.name());
        }
        assert_eq!(SourceKind::choices(), "auto, rocm-smi, amdgpu-sysfs, nvml, cpu, none");
        assert!("bogus".parse::<SourceKind>().unwrap_err().contains("choose one of auto, rocm-smi"));
    }
}
