//! The `--telemetry` choices by name: clap, study files and evidence spell a backend alike.
use std::fmt;
use std::str::FromStr;

/// A `--telemetry` choice. Its names live in [`SourceKind::name`] alone: clap parses by them, so a
/// wrong name is a usage error before anything starts, and study files keep the same names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SourceKind {
    Auto,
    AmdSmi,
    RocmSmi,
    AmdgpuSysfs,
    Nvml,
    Cpu,
    None,
}

impl SourceKind {
    const ALL: [SourceKind; 7] = [
        SourceKind::Auto,
        SourceKind::AmdSmi,
        SourceKind::RocmSmi,
        SourceKind::AmdgpuSysfs,
        SourceKind::Nvml,
        SourceKind::Cpu,
        SourceKind::None,
    ];

    pub(crate) fn name(self) -> &'static str {
        match self {
            SourceKind::Auto => "auto",
            SourceKind::AmdSmi => "amd-smi",
            SourceKind::RocmSmi => "rocm-smi",
            SourceKind::AmdgpuSysfs => "amdgpu-sysfs",
            SourceKind::Nvml => "nvml",
            SourceKind::Cpu => "cpu",
            SourceKind::None => "none",
        }
    }

    fn help(self) -> Option<&'static str> {
        match self {
            SourceKind::Auto => Some(
                "NVML, else AMD SMI, else ROCm SMI, else amdgpu sysfs, else a process's CPU (with a pid), else none",
            ),
            SourceKind::AmdSmi => Some("AMD SMI (libamd_smi), ROCm's supported library; also `amdsmi`"),
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
            SourceKind::AmdgpuSysfs | SourceKind::RocmSmi | SourceKind::AmdSmi => 1000,
            SourceKind::Cpu | SourceKind::None | SourceKind::Auto => 100,
        }
    }

    /// A second spelling accepted on the command line and in study files: `amdsmi`, as AMD's
    /// library and Python package write it.
    fn alias(self) -> Option<&'static str> {
        (self == SourceKind::AmdSmi).then_some("amdsmi")
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
        let mut v = clap::builder::PossibleValue::new(self.name());
        if let Some(alias) = self.alias() {
            v = v.alias(alias);
        }
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
            .find(|k| k.name() == s || k.alias() == Some(s))
            .ok_or_else(|| format!("unknown telemetry backend {s:?}; choose one of {}", SourceKind::choices()))
    }
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
        assert_eq!(SourceKind::choices(), "auto, amd-smi, rocm-smi, amdgpu-sysfs, nvml, cpu, none");
        assert_eq!("amdsmi".parse::<SourceKind>(), Ok(SourceKind::AmdSmi));
        assert!("bogus".parse::<SourceKind>().unwrap_err().contains("choose one of auto, amd-smi, rocm-smi"));
    }
}
