//! The power state a study runs under (docs/methodology.md §9.7): the device's power limits, the
//! host's power profile, the GPU driver and runtime versions, the clocks policy, and what decides
//! an APU's number (the ACPI platform profile, the GPU's power profile mode, the STAPM limit, the
//! carve-out and GTT sizes, TTM's page limit, the kernel command line, the linux-firmware
//! version), each "not present" where the host has none. Read when the study starts (host.json)
//! and after every sample (the power-state rule); two studies whose states differ are not
//! compared by `history --regressions`.
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
    /// ACPI `platform_profile` (/sys/firmware/acpi/platform_profile): the firmware's power
    /// profile, which moves an APU's prefill by tens of percent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) platform_profile: Option<String>,
    /// Per card: the active `pp_power_profile_mode`, the carve-out (`mem_info_vram_total`) and
    /// GTT (`mem_info_gtt_total`) sizes, each "not present" where the card has none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) cards: Vec<String>,
    /// The TTM module's `pages_limit`: how much system memory the GPU may map (an APU's model).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) ttm_pages_limit: Option<String>,
    /// /proc/cmdline: amdgpu.*, ttm.*, amd_iommu and the kernel that booted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) kernel_cmdline: Option<String>,
    /// The installed linux-firmware package (the GPU's firmware blobs), by the package manager.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) linux_firmware: Option<String>,
    /// Per amdgpu card, the firmware the driver loaded: `vbios_version` and each
    /// `fw_version/*_fw_version` (SMU's `smc`, `mes`, PSP's `sos`, …), as the driver reports them.
    /// The package above is what is installed; these are what runs.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) loaded_firmware: Vec<String>,
}

/// `amdgpu card1 firmware vbios=113-… smc=0x0b5d0400 mes=0x… sos=0x…`: the VBIOS and every
/// `fw_version/NAME_fw_version` the driver exposes for `device`, sorted by name; None where it
/// exposes none.
fn loaded_firmware(card: &str, device: &Path) -> Option<String> {
    let mut parts: Vec<String> = Vec::new();
    if let Some(v) = read_trimmed(&device.join("vbios_version")).filter(|v| !v.is_empty()) {
        parts.push(format!("vbios={v}"));
    }
    let mut blobs: Vec<(String, String)> = std::fs::read_dir(device.join("fw_version"))
        .map(|d| {
            d.flatten()
                .filter_map(|e| {
                    let name = e.file_name().to_string_lossy().strip_suffix("_fw_version")?.to_string();
                    let v = read_trimmed(&e.path())?;
                    // 0x00000000: a block this ASIC does not have.
                    (!v.trim_start_matches("0x").chars().all(|c| c == '0')).then_some((name, v))
                })
                .collect()
        })
        .unwrap_or_default();
    blobs.sort();
    parts.extend(blobs.into_iter().map(|(n, v)| format!("{n}={v}")));
    (!parts.is_empty()).then(|| format!("amdgpu {card} firmware {}", parts.join(" ")))
}

/// What a host without a value says in its place.
pub(crate) const NOT_PRESENT: &str = "not present";

/// Where [`PowerState::read`] looks: the sysfs root, the ROCm folder, and how it runs a command
/// (a test gives canned outputs).
pub(crate) struct PowerStateRoots<'a> {
    pub(crate) sysfs: &'a Path,
    /// What stands for `/proc` (the kernel command line).
    pub(crate) proc: &'a Path,
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

/// A file's trimmed text, or [`NOT_PRESENT`].
fn present_or_not(p: &Path) -> String {
    read_trimmed(p).unwrap_or_else(|| NOT_PRESENT.into())
}

/// The active profile of a `pp_power_profile_mode` table: the row marked `*`, by its name
/// (`1 3D_FULL_SCREEN*:` or `5 COMPUTE *`).
pub(crate) fn active_power_profile(table: &str) -> Option<String> {
    let row = table.lines().find(|l| l.contains('*'))?;
    let words: Vec<&str> = row.split_whitespace().collect();
    let at = words.iter().position(|w| w.contains('*'))?;
    let own = words[at].trim_matches(|c| c == '*' || c == ':');
    let name = if own.is_empty() { words.get(at.checked_sub(1)?)?.trim_end_matches(':') } else { own };
    (!name.is_empty()).then(|| name.to_string())
}

/// Bytes as MiB, for the carve-out and GTT sizes.
fn mib(text: &str) -> String {
    text.trim().parse::<u64>().map_or_else(|_| text.trim().to_string(), |b| format!("{} MiB", b >> 20))
}

/// The package that carries the GPU firmware, by each distribution's package manager: Debian's
/// firmware-amd-graphics, Ubuntu's linux-firmware, Fedora's and Arch's linux-firmware.
const FIRMWARE_PROBES: [(&str, &[&str]); 4] = [
    ("dpkg-query", &["-W", "-f=${Version}", "firmware-amd-graphics"]),
    ("dpkg-query", &["-W", "-f=${Version}", "linux-firmware"]),
    ("rpm", &["-q", "--qf", "%{VERSION}-%{RELEASE}", "linux-firmware"]),
    ("pacman", &["-Q", "linux-firmware"]),
];

fn linux_firmware(run: &dyn Fn(&str, &[&str]) -> Option<String>) -> String {
    FIRMWARE_PROBES
        .iter()
        .find_map(|(program, args)| {
            let out = run(program, args)?;
            let version = out.split_whitespace().last()?.to_string();
            Some(format!("{version} ({} {})", program, args.last().unwrap_or(&"")))
        })
        .unwrap_or_else(|| NOT_PRESENT.into())
}

impl PowerState {
    /// The GPU runtime in a few words (the CUDA version the driver supports and the driver's,
    /// ROCm's and HIP's): what a trace manifest records it was taken under. `None` when the host
    /// showed neither.
    pub(crate) fn runtime(&self) -> Option<String> {
        let mut parts = Vec::new();
        if let Some(c) = &self.cuda_driver {
            parts.push(format!("CUDA {c}"));
        }
        if let Some(d) = &self.gpu_driver {
            parts.push(format!("NVIDIA driver {d}"));
        }
        if let Some(r) = &self.rocm {
            parts.push(format!("ROCm {r}"));
        }
        if let Some(h) = &self.hip {
            parts.push(format!("HIP {h}"));
        }
        (!parts.is_empty()).then(|| parts.join(", "))
    }

    /// The host's power state as `roots` show it; every field it cannot read stays empty.
    pub(crate) fn read(roots: &PowerStateRoots<'_>) -> PowerState {
        let mut st = PowerState::default();
        st.read_amdgpu(roots.sysfs);
        st.read_host(roots.sysfs, roots.proc);
        st.linux_firmware = Some(linux_firmware(roots.run));
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
        PowerState::read(&PowerStateRoots {
            sysfs: Path::new("/sys"),
            proc: Path::new("/proc"),
            rocm: &rocm,
            run: &run_probe,
        })
    }

    /// What a sample may run under other than the study's first: the power limits (the STAPM
    /// limit among them), the power profiles, the clocks policy, the memory split, TTM's limit and
    /// the kernel command line (docs/methodology.md §7.17, §9.7). Driver, runtime and firmware
    /// versions cannot change under a running study without stopping its GPU work first.
    pub(crate) fn conditions(&self) -> PowerState {
        PowerState {
            power_limits: self.power_limits.clone(),
            power_profile: self.power_profile.clone(),
            clocks_policy: self.clocks_policy.clone(),
            platform_profile: self.platform_profile.clone(),
            cards: self.cards.clone(),
            ttm_pages_limit: self.ttm_pages_limit.clone(),
            kernel_cmdline: self.kernel_cmdline.clone(),
            ..PowerState::default()
        }
    }

    /// This host's [`PowerState::conditions`], read after every sample: one `nvidia-smi` query
    /// and `powerprofilesctl`, not the versions' second `nvidia-smi` and files, so the dead time
    /// between samples stays short.
    pub(crate) fn conditions_of_host() -> PowerState {
        let mut st = PowerState::default();
        st.read_amdgpu(Path::new("/sys"));
        st.read_host(Path::new("/sys"), Path::new("/proc"));
        st.read_nvidia_limits(&run_probe);
        st.power_profile =
            run_probe("powerprofilesctl", &["get"]).map(|s| s.trim().to_string()).filter(|s| !s.is_empty());
        st.conditions()
    }

    /// The host's own: ACPI's platform profile, TTM's page limit, the kernel command line.
    fn read_host(&mut self, sysfs: &Path, proc: &Path) {
        self.platform_profile = Some(present_or_not(&sysfs.join("firmware/acpi/platform_profile")));
        self.ttm_pages_limit = Some(present_or_not(&sysfs.join("module/ttm/parameters/pages_limit")));
        self.kernel_cmdline = Some(present_or_not(&proc.join("cmdline")));
    }

    fn read_amdgpu(&mut self, sysfs: &Path) {
        for (card, device) in crate::telemetry::amdgpu_sysfs::discover_cards(sysfs) {
            let profile = std::fs::read_to_string(device.join("pp_power_profile_mode")).ok();
            let profile = profile.as_deref().and_then(active_power_profile).unwrap_or_else(|| NOT_PRESENT.into());
            let size = |name: &str| read_trimmed(&device.join(name)).map_or_else(|| NOT_PRESENT.into(), |t| mib(&t));
            self.cards.push(format!(
                "amdgpu {card} pp_power_profile_mode={profile} mem_info_vram_total={} mem_info_gtt_total={}",
                size("mem_info_vram_total"),
                size("mem_info_gtt_total")
            ));
            if let Some(hwmon) = std::fs::read_dir(device.join("hwmon")).ok().and_then(|d| d.flatten().next()) {
                if let Some(uw) = read_trimmed(&hwmon.path().join("power1_cap")).and_then(|s| s.parse::<f64>().ok()) {
                    self.power_limits.push(PowerLimit { source: format!("amdgpu {card} power1_cap"), watts: uw / 1e6 });
                }
            }
            if let Some(fw) = loaded_firmware(&card, &device) {
                self.loaded_firmware.push(fw);
            }
            if let Some(level) = read_trimmed(&device.join("power_dpm_force_performance_level")) {
                self.clocks_policy.push(format!("amdgpu {card} power_dpm_force_performance_level={level}"));
            }
            let metrics = std::fs::read(device.join("gpu_metrics")).ok();
            let metrics = metrics.and_then(|b| crate::telemetry::gpu_metrics::GpuMetrics::decode(&b).ok());
            // The APU's STAPM limit, in mW as the kernel's header says (kgd_pp_interface.h: "[mW]",
            // a u16, so at most 65.5 W); the current limit is what STAPM enforces now (it falls as
            // the skin heats). smu_v14_0_0 (Strix Point, Strix Halo) never fills either field: both
            // real tables of tests/fixtures/gpu_metrics/ hold 0xFFFF, which reads as absent.
            let stapm = match metrics {
                Some(crate::telemetry::gpu_metrics::GpuMetrics::V3(m)) => [
                    ("stapm_power_limit", m.stapm_power_limit),
                    ("current_stapm_power_limit", m.current_stapm_power_limit),
                ],
                _ => [("stapm_power_limit", None), ("current_stapm_power_limit", None)],
            };
            for (name, cw) in stapm {
                if let Some(cw) = cw {
                    self.power_limits.push(PowerLimit {
                        source: format!("amdgpu {card} gpu_metrics {name}"),
                        watts: cw as f64 / 1000.0,
                    });
                }
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

    /// Whether anything that sets a GPU's power was read: a limit, a profile, a driver or runtime,
    /// a clocks policy, an amdgpu card or ACPI's platform profile. The kernel command line, TTM's
    /// limit and the firmware package alone describe any Linux host, a CPU test bed included, so
    /// they are kept in host.json but do not make a power state (docs/methodology.md §9.7).
    pub(crate) fn has_gpu_power_state(&self) -> bool {
        let present = |v: &Option<String>| v.as_deref().is_some_and(|v| v != NOT_PRESENT);
        !self.power_limits.is_empty()
            || !self.clocks_policy.is_empty()
            || !self.cards.is_empty()
            || [&self.power_profile, &self.gpu_driver, &self.cuda_driver, &self.rocm, &self.hip, &self.platform_profile]
                .into_iter()
                .any(present)
    }

    /// One line for people and for the history's comparability key: every field read, in a fixed
    /// order.
    pub(crate) fn line(&self) -> String {
        let mut parts: Vec<String> =
            self.power_limits.iter().map(|l| format!("{} {:.1} W", l.source, l.watts)).collect();
        let field = |name: &str, v: &Option<String>| v.as_ref().map(|v| format!("{name} {v}"));
        parts.extend(
            [
                field("profile", &self.power_profile),
                field("driver", &self.gpu_driver),
                field("CUDA", &self.cuda_driver),
                field("ROCm", &self.rocm),
                field("HIP", &self.hip),
            ]
            .into_iter()
            .flatten(),
        );
        parts.extend(self.clocks_policy.iter().cloned());
        parts.extend(field("platform_profile", &self.platform_profile));
        parts.extend(self.cards.iter().cloned());
        parts.extend(self.loaded_firmware.iter().cloned());
        parts.extend(
            [
                field("ttm pages_limit", &self.ttm_pages_limit),
                field("linux-firmware", &self.linux_firmware),
                field("cmdline", &self.kernel_cmdline),
            ]
            .into_iter()
            .flatten(),
        );
        if !self.has_gpu_power_state() {
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

    #[test]
    fn the_runtime_names_what_the_host_showed_and_nothing_else() {
        assert_eq!(PowerState::default().runtime(), None);
        let nvidia = PowerState {
            cuda_driver: Some("13.0".into()),
            gpu_driver: Some("580.159.04".into()),
            ..PowerState::default()
        };
        assert_eq!(nvidia.runtime().as_deref(), Some("CUDA 13.0, NVIDIA driver 580.159.04"));
        let rocm = PowerState { rocm: Some("7.2.0-43".into()), hip: Some("7.2.25342".into()), ..PowerState::default() };
        assert_eq!(rocm.runtime().as_deref(), Some("ROCm 7.2.0-43, HIP 7.2.25342"));
        // A sample records only the conditions: the runtime is the study's (host.json).
        assert_eq!(nvidia.conditions().runtime(), None);
    }

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

    /// A Strix Halo-like host, crafted: ACPI's profile, the GPU's power profile mode, a 512 MiB
    /// carve-out with 96 GiB of GTT, TTM's limit, the command line and the firmware package.
    fn strix_halo(root: &Path, profile: &str) {
        let apu = fixtures().join("sysfs/apu-v3_0");
        let copy = std::process::Command::new("cp").arg("-r").arg(apu.join("class")).arg(root).status().unwrap();
        assert!(copy.success());
        let write = |rel: &str, text: &str| {
            let p = root.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        };
        write("firmware/acpi/platform_profile", &format!("{profile}\n"));
        write(
            "class/drm/card1/device/pp_power_profile_mode",
            "PROFILE_INDEX(NAME) CLOCK_TYPE(NAME) FPS MinActiveFreqType MinActiveFreq BoosterFreqType BoosterFreq\n 0 BOOTUP_DEFAULT :\n 1 3D_FULL_SCREEN :\n 5 COMPUTE*:\n 6 CUSTOM :\n",
        );
        write("class/drm/card1/device/mem_info_vram_total", "536870912\n");
        write("class/drm/card1/device/mem_info_gtt_total", "103079215104\n");
        write("module/ttm/parameters/pages_limit", "27648000\n");
        write(
            "proc/cmdline",
            "BOOT_IMAGE=/vmlinuz-6.18.2 root=UUID=x ro amd_iommu=off amdgpu.gttsize=131072 ttm.pages_limit=27648000\n",
        );
    }

    #[test]
    fn a_strix_halo_hosts_state_is_recorded_and_a_changed_profile_is_a_changed_condition() {
        let dir = tempfile::tempdir().unwrap();
        strix_halo(dir.path(), "balanced");
        let firmware = |program: &str, args: &[&str]| {
            (program == "dpkg-query" && args.last() == Some(&"firmware-amd-graphics")).then(|| "20250509-1".to_string())
        };
        let read = |root: &Path| {
            PowerState::read(&PowerStateRoots {
                sysfs: root,
                proc: &root.join("proc"),
                rocm: Path::new("/nonexistent"),
                run: &firmware,
            })
        };
        let st = read(dir.path());
        assert_eq!(st.platform_profile.as_deref(), Some("balanced"));
        assert_eq!(
            st.cards,
            ["amdgpu card1 pp_power_profile_mode=COMPUTE mem_info_vram_total=512 MiB mem_info_gtt_total=98304 MiB"]
        );
        assert_eq!(st.ttm_pages_limit.as_deref(), Some("27648000"));
        assert!(st.kernel_cmdline.as_deref().unwrap().contains("ttm.pages_limit=27648000"));
        assert_eq!(st.linux_firmware.as_deref(), Some("20250509-1 (dpkg-query firmware-amd-graphics)"));
        assert!(st.power_limits.iter().any(|l| l.source.ends_with("current_stapm_power_limit") && l.watts == 12.0));
        let line = st.line();
        assert!(line.contains("platform_profile balanced") && line.contains("pp_power_profile_mode=COMPUTE"), "{line}");

        // The power-state rule compares conditions: a new ACPI profile is a different condition,
        // the firmware (not re-read after a sample) is not one.
        strix_halo(dir.path(), "performance");
        let after = read(dir.path());
        assert_ne!(after.conditions(), st.conditions());
        assert_eq!(after.conditions().linux_firmware, None);
        let mut same = after.clone();
        same.platform_profile = st.platform_profile.clone();
        assert_eq!(same.conditions(), st.conditions());
    }

    #[test]
    fn the_active_power_profile_is_the_marked_row_in_either_layout() {
        assert_eq!(
            active_power_profile(" 0 BOOTUP_DEFAULT :\n 1 3D_FULL_SCREEN*:\n").as_deref(),
            Some("3D_FULL_SCREEN")
        );
        assert_eq!(active_power_profile("  0 BOOTUP_DEFAULT\n  5 COMPUTE *\n").as_deref(), Some("COMPUTE"));
        assert_eq!(active_power_profile(" 0 BOOTUP_DEFAULT :\n"), None);
    }

    /// The loaded firmware as amdgpu exposes it (the Strix Point snapshot's smc_fw_version,
    /// tests/fixtures/gpu_metrics/README.md): the VBIOS and each block's version, blocks the ASIC
    /// lacks (all zero) left out, kept in host.json's state but not among a sample's conditions.
    #[test]
    fn the_loaded_firmware_is_read_per_card() {
        let d = tempfile::tempdir().unwrap();
        let dev = d.path().join("class/drm/card1/device");
        std::fs::create_dir_all(dev.join("fw_version")).unwrap();
        std::fs::write(dev.join("gpu_busy_percent"), "3\n").unwrap();
        std::fs::write(dev.join("vbios_version"), "113-STRXLGEN-001\n").unwrap();
        for (name, v) in [("smc", "0x0b5d0400"), ("mes", "0x00000080"), ("sos", "0x00340012"), ("vce", "0x00000000")] {
            std::fs::write(dev.join(format!("fw_version/{name}_fw_version")), format!("{v}\n")).unwrap();
        }
        let fw = loaded_firmware("card1", &dev).unwrap();
        assert_eq!(fw, "amdgpu card1 firmware vbios=113-STRXLGEN-001 mes=0x00000080 smc=0x0b5d0400 sos=0x00340012");
        let none = tempfile::tempdir().unwrap();
        assert_eq!(loaded_firmware("card0", none.path()), None);
        let st = PowerState { loaded_firmware: vec![fw.clone()], ..PowerState::default() };
        assert!(st.conditions().loaded_firmware.is_empty(), "a version, not a condition");
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
        let st = PowerState::read(&PowerStateRoots {
            sysfs: &dgpu,
            proc: Path::new("/nonexistent"),
            rocm: rocm.path(),
            run: &none,
        });
        assert_eq!(st.power_limits, [PowerLimit { source: "amdgpu card0 power1_cap".into(), watts: 300.0 }]);
        assert_eq!(st.clocks_policy, ["amdgpu card0 power_dpm_force_performance_level=auto"]);
        assert_eq!((st.rocm.as_deref(), st.hip.as_deref()), (Some("6.4.1-120"), Some("6.4.43483")));
        assert_eq!(st.power_profile, None);

        let apu = fixtures().join("sysfs/apu-v3_0");
        let st = PowerState::read(&PowerStateRoots {
            sysfs: &apu,
            proc: Path::new("/nonexistent"),
            rocm: Path::new("/nonexistent"),
            run: &none,
        });
        assert_eq!(
            st.power_limits,
            [
                PowerLimit { source: "amdgpu card1 gpu_metrics stapm_power_limit".into(), watts: 12.0 },
                PowerLimit { source: "amdgpu card1 gpu_metrics current_stapm_power_limit".into(), watts: 12.0 }
            ]
        );

        let st = PowerState::read(&PowerStateRoots {
            sysfs: Path::new("/nonexistent"),
            proc: Path::new("/nonexistent"),
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
            "nvidia-smi gpu0 power.limit 700.0 W · nvidia-smi gpu0 enforced.power.limit 700.0 W · profile performance · driver 580.95.05 · CUDA 13.0 · platform_profile not present · ttm pages_limit not present · linux-firmware not present · cmdline not present"
        );
        let bare = PowerState::read(&PowerStateRoots {
            sysfs: Path::new("/nonexistent"),
            proc: Path::new("/nonexistent"),
            rocm: Path::new("/nonexistent"),
            run: &none,
        });
        // A host with none of them says so for each, rather than leaving them out.
        let not_present = Some(NOT_PRESENT.to_string());
        assert_eq!(
            bare,
            PowerState {
                platform_profile: not_present.clone(),
                ttm_pages_limit: not_present.clone(),
                kernel_cmdline: not_present.clone(),
                linux_firmware: not_present,
                ..PowerState::default()
            }
        );
        assert!(PowerState::default().line().starts_with("not measured on this host"));
        // A CPU host: a kernel command line and a firmware package, no GPU power state (the
        // CPU test bed's summary says "not measured", tests/ab.rs).
        let cpu_host = PowerState {
            kernel_cmdline: Some("console=ttyS0 quiet".into()),
            linux_firmware: Some("20240909-2 (dpkg-query linux-firmware)".into()),
            ..bare.clone()
        };
        assert!(cpu_host.line().starts_with("not measured on this host"), "{}", cpu_host.line());
        let apu = PowerState { platform_profile: Some("balanced".into()), ..cpu_host };
        assert!(apu.line().contains("platform_profile balanced"), "{}", apu.line());
    }
}
