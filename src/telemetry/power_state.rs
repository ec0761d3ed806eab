//! The power state a study runs under (docs/methodology.md §9.7): the device's power limits, the
//! host's power profile, the GPU driver and runtime versions, the clocks policy. Read once when
//! the study starts (host.json); two studies whose states differ are not compared by `history
//! --regressions`.
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

/// One power limit, named by where it was read.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub(crate) struct PowerLimit {
    /// e.g. `nvidia-smi gpu0 enforced.power.limit`, `amdgpu card0 power1_cap`,
    /// `amdgpu card1 gpu_metrics stapm_power_limit`.
    pub(crate) source: String,
    pub(crate) watts: f64,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub(crate) struct PowerState {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) power_limits: Vec<PowerLimit>,
    /// What `powerprofilesctl get` printed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) power_profile: Option<String>,
    /// The NVIDIA driver (nvidia-smi's `driver_version`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) gpu_driver: Option<String>,
    /// The CUDA version the driver supports (nvidia-smi's header).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) cuda_driver: Option<String>,
    /// ROCm's `.info/version`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) rocm: Option<String>,
    /// HIP's `bin/.hipVersion` (major.minor.patch).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) hip: Option<String>,
    /// amdgpu's `power_dpm_force_performance_level` per card.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) clocks_policy: Vec<String>,
}

/// Where [`PowerState::read`] looks: the sysfs root, the ROCm folder, and how it runs a command
/// (a test gives canned outputs).
pub(crate) struct PowerStateRoots<'a> {
    pub(crate) sysfs: &'a Path,
    pub(crate) rocm: &'a Path,
    pub(crate) run: &'a dyn Fn(&str, &[&str]) -> Option<String>,
}

/// How long one probe (`nvidia-smi`, `powerprofilesctl`) may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(5);

/// Runs `program args` when it is on PATH, its stdout when it succeeds within [`PROBE_TIMEOUT`].
pub(crate) fn run_probe(program: &str, args: &[&str]) -> Option<String> {
    let mut out = tempfile::tempfile().ok()?;
    let mut cmd = Command::new(program);
    cmd.args(args).stdin(Stdio::null()).stdout(out.try_clone().ok()?).stderr(Stdio::null());
    let run = crate::child::run_timed(&mut cmd, PROBE_TIMEOUT, &std::sync::atomic::AtomicBool::new(false)).ok()?;
    if run.exit != crate::child::TimedExit::Exited(0) {
        return None;
    }
    use std::io::{Read, Seek, SeekFrom};
    out.seek(SeekFrom::Start(0)).ok()?;
    let mut text = String::new();
    out.read_to_string(&mut text).ok()?;
    Some(text)
}

fn read_trimmed(p: &Path) -> Option<String> {
    std::fs::read_to_string(p).ok().map(|s| s.trim().to_string()).filter(|s| !s.is_empty())
}

impl PowerState {
    /// The host's power state as `roots` show it; every field it cannot read stays empty.
    pub(crate) fn read(roots: &PowerStateRoots<'_>) -> PowerState {
        let mut st = PowerState::default();
        st.read_amdgpu(roots.sysfs);
        st.read_nvidia(roots.run);
        st.power_profile =
            (roots.run)("powerprofilesctl", &["get"]).map(|s| s.trim().to_string()).filter(|s| !s.is_empty());
        st.rocm = read_trimmed(&roots.rocm.join(".info/version"));
        st.hip = read_trimmed(&roots.rocm.join("bin/.hipVersion")).and_then(|t| hip_version(&t));
        st
    }

    /// This host's power state (the real sysfs, `/opt/rocm`, the probes on PATH).
    pub(crate) fn of_host() -> PowerState {
        let rocm = std::env::var_os("ROCM_PATH").map_or_else(|| "/opt/rocm".into(), std::path::PathBuf::from);
        PowerState::read(&PowerStateRoots { sysfs: Path::new("/sys"), rocm: &rocm, run: &run_probe })
    }

    /// What a sample may run under other than the study's first: the power limits, the power
    /// profile and the clocks policy (docs/methodology.md §7.17). Driver and runtime versions
    /// cannot change under a running study without stopping its GPU work first.
    pub(crate) fn conditions(&self) -> PowerState {
        PowerState {
            power_limits: self.power_limits.clone(),
            power_profile: self.power_profile.clone(),
            clocks_policy: self.clocks_policy.clone(),
            ..PowerState::default()
        }
    }

    /// This host's [`PowerState::conditions`], read after every sample: one `nvidia-smi` query
    /// and `powerprofilesctl`, not the versions' second `nvidia-smi` and files, so the dead time
    /// between samples stays short.
    pub(crate) fn conditions_of_host() -> PowerState {
        let mut st = PowerState::default();
        st.read_amdgpu(Path::new("/sys"));
        st.read_nvidia_limits(&run_probe);
        st.power_profile =
            run_probe("powerprofilesctl", &["get"]).map(|s| s.trim().to_string()).filter(|s| !s.is_empty());
        st.conditions()
    }

    fn read_amdgpu(&mut self, sysfs: &Path) {
        for (card, device) in crate::telemetry::amdgpu_sysfs::discover_cards(sysfs) {
            if let Some(hwmon) = std::fs::read_dir(device.join("hwmon")).ok().and_then(|d| d.flatten().next()) {
                if let Some(uw) = read_trimmed(&hwmon.path().join("power1_cap")).and_then(|s| s.parse::<f64>().ok()) {
                    self.power_limits.push(PowerLimit { source: format!("amdgpu {card} power1_cap"), watts: uw / 1e6 });
                }
            }
            if let Some(level) = read_trimmed(&device.join("power_dpm_force_performance_level")) {
                self.clocks_policy.push(format!("amdgpu {card} power_dpm_force_performance_level={level}"));
            }
            let metrics = std::fs::read(device.join("gpu_metrics")).ok();
            let metrics = metrics.and_then(|b| crate::telemetry::gpu_metrics::GpuMetrics::decode(&b).ok());
            // The APU's STAPM limit, in units of 10 mW (scripts/make_gpu_metrics_fixtures.py
            // writes 120 W as 120_00).
            let stapm = match metrics {
                Some(crate::telemetry::gpu_metrics::GpuMetrics::V3(m)) => m.stapm_power_limit,
                _ => None,
            };
            if let Some(cw) = stapm {
                self.power_limits.push(PowerLimit {
                    source: format!("amdgpu {card} gpu_metrics stapm_power_limit"),
                    watts: cw as f64 / 100.0,
                });
            }
        }
    }

    fn read_nvidia(&mut self, run: &dyn Fn(&str, &[&str]) -> Option<String>) {
        self.read_nvidia_limits(run);
        if self.gpu_driver.is_some() {
            let header = run("nvidia-smi", &[]).unwrap_or_default();
            self.cuda_driver = header
                .split("CUDA Version:")
                .nth(1)
                .and_then(|rest| rest.split_whitespace().next())
                .map(|v| v.trim_end_matches('|').to_string());
        }
    }

    fn read_nvidia_limits(&mut self, run: &dyn Fn(&str, &[&str]) -> Option<String>) {
        let q = run(
            "nvidia-smi",
            &["--query-gpu=index,power.limit,enforced.power.limit,driver_version", "--format=csv,noheader,nounits"],
        );
        for line in q.as_deref().unwrap_or("").lines() {
            let f: Vec<&str> = line.split(',').map(str::trim).collect();
            let [index, limit, enforced, driver] = f[..] else { continue };
            for (name, v) in [("power.limit", limit), ("enforced.power.limit", enforced)] {
                if let Ok(watts) = v.parse::<f64>() {
                    self.power_limits.push(PowerLimit { source: format!("nvidia-smi gpu{index} {name}"), watts });
                }
            }
            self.gpu_driver.get_or_insert_with(|| driver.to_string());
        }
    }

    /// One line for people and for the history's comparability key: every field read, in a fixed
    /// order.
    pub(crate) fn line(&self) -> String {
        let mut parts: Vec<String> =
            self.power_limits.iter().map(|l| format!("{} {:.1} W", l.source, l.watts)).collect();
        let mut field = |name: &str, v: &Option<String>| {
            if let Some(v) = v {
                parts.push(format!("{name} {v}"));
            }
        };
        field("profile", &self.power_profile);
        field("driver", &self.gpu_driver);
        field("CUDA", &self.cuda_driver);
        field("ROCm", &self.rocm);
        field("HIP", &self.hip);
        parts.extend(self.clocks_policy.iter().cloned());
        if parts.is_empty() {
            "not measured on this host: no power limit, power profile, GPU driver or runtime readable".into()
        } else {
            parts.join(" · ")
        }
    }
}

/// `HIP_VERSION_MAJOR=6` … lines as `6.4.1`.
fn hip_version(text: &str) -> Option<String> {
    let get = |k: &str| {
        text.lines().find_map(|l| l.strip_prefix(k).and_then(|r| r.strip_prefix('=')).map(|v| v.trim().to_string()))
    };
    Some(format!("{}.{}.{}", get("HIP_VERSION_MAJOR")?, get("HIP_VERSION_MINOR")?, get("HIP_VERSION_PATCH")?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixtures() -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
    }

    /// What nvidia-smi printed on the H200 of BENCHMARKS.md (scripts/telemetry_h200.sh's query,
    /// driver 580) and its header's CUDA version.
    fn h200(program: &str, args: &[&str]) -> Option<String> {
        match (program, args.first()) {
            ("nvidia-smi", Some(_)) => Some("0, 700.00, 700.00, 580.95.05\n".into()),
            ("nvidia-smi", None) => Some(
                "| NVIDIA-SMI 580.95.05              Driver Version: 580.95.05      CUDA Version: 13.0     |\n".into(),
            ),
            ("powerprofilesctl", _) => Some("performance\n".into()),
            _ => None,
        }
    }

    #[test]
    fn reads_the_amdgpu_cap_the_apu_stapm_limit_and_the_nvidia_limits() {
        let none = |_: &str, _: &[&str]| None;
        let rocm = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(rocm.path().join(".info")).unwrap();
        std::fs::create_dir_all(rocm.path().join("bin")).unwrap();
        std::fs::write(rocm.path().join(".info/version"), "6.4.1-120\n").unwrap();
        std::fs::write(
            rocm.path().join("bin/.hipVersion"),
            "# Auto-generated\nHIP_VERSION_MAJOR=6\nHIP_VERSION_MINOR=4\nHIP_VERSION_PATCH=43483\n",
        )
        .unwrap();
        let dgpu = fixtures().join("sysfs/dgpu-v1_3");
        let st = PowerState::read(&PowerStateRoots { sysfs: &dgpu, rocm: rocm.path(), run: &none });
        assert_eq!(st.power_limits, [PowerLimit { source: "amdgpu card0 power1_cap".into(), watts: 300.0 }]);
        assert_eq!(st.clocks_policy, ["amdgpu card0 power_dpm_force_performance_level=auto"]);
        assert_eq!((st.rocm.as_deref(), st.hip.as_deref()), (Some("6.4.1-120"), Some("6.4.43483")));
        assert_eq!(st.power_profile, None);

        let apu = fixtures().join("sysfs/apu-v3_0");
        let st = PowerState::read(&PowerStateRoots { sysfs: &apu, rocm: Path::new("/nonexistent"), run: &none });
        assert_eq!(
            st.power_limits,
            [PowerLimit { source: "amdgpu card1 gpu_metrics stapm_power_limit".into(), watts: 120.0 }]
        );

        let st = PowerState::read(&PowerStateRoots {
            sysfs: Path::new("/nonexistent"),
            rocm: Path::new("/nonexistent"),
            run: &h200,
        });
        assert_eq!(st.power_limits.len(), 2);
        assert_eq!(
            st.power_limits[1],
            PowerLimit { source: "nvidia-smi gpu0 enforced.power.limit".into(), watts: 700.0 }
        );
        assert_eq!((st.gpu_driver.as_deref(), st.cuda_driver.as_deref()), (Some("580.95.05"), Some("13.0")));
        assert_eq!(st.power_profile.as_deref(), Some("performance"));
        assert_eq!(
            st.line(),
            "nvidia-smi gpu0 power.limit 700.0 W · nvidia-smi gpu0 enforced.power.limit 700.0 W · profile performance · driver 580.95.05 · CUDA 13.0"
        );
        let bare = PowerState::read(&PowerStateRoots {
            sysfs: Path::new("/nonexistent"),
            rocm: Path::new("/nonexistent"),
            run: &none,
        });
        assert_eq!(bare, PowerState::default());
        assert!(bare.line().starts_with("not measured on this host"), "{}", bare.line());
    }
}
