//! Decoder for amdgpu's binary `gpu_metrics` sysfs file, by its header's (format, content)
//! revision. Layouts: `drivers/gpu/drm/amd/include/kgd_pp_interface.h` @ torvalds/linux
//! 00dedab07b52ca16107e82ce5ca7caaaedf6a417; byte offsets by C natural alignment, little-endian,
//! checked against scripts/make_gpu_metrics_fixtures.py, which derives them independently.
//!
//! Decoded: v1_1–v1_3 (dGPUs up to Navi 3x), v2_1–v2_4 (APUs), v3_0 (Strix Point/Halo).
//! Not decoded, and said so: v1_0 and v2_0 (unaligned, obsolete), v1_4+ (MI300-class, a different
//! field order; use the rocm-smi backend there), anything newer. The driver pre-fills the table
//! with 0xFF, so an all-ones field means "not supported by this ASIC" and decodes as `None`.
use serde::Serialize;

use super::Reading;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GpuMetricsError {
    #[error("gpu_metrics is {got} bytes, shorter than its 4-byte header")]
    NoHeader { got: usize },

    #[error("gpu_metrics v{format}_{content} (structure_size {size}) is not a layout abprof decodes: {why}")]
    UnknownRevision { format: u8, content: u8, size: u16, why: &'static str },

    #[error("gpu_metrics header says v{format}_{content}, which is {expected} bytes, but its structure_size is {declared}; not decoded (the body does not match the revision)")]
    SizeMismatch { format: u8, content: u8, expected: usize, declared: u16 },

    #[error("gpu_metrics v{format}_{content} needs {needed} bytes but only {got} were read (truncated)")]
    Truncated { format: u8, content: u8, needed: usize, got: usize },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub(crate) struct Header {
    pub(crate) structure_size: u16,
    pub(crate) format_revision: u8,
    pub(crate) content_revision: u8,
}

/// One decoded table; field names are the kernel's.
// Decoded on the stack once per read; boxing the large variant would allocate on every sample.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum GpuMetrics {
    V1(MetricsV1),
    V2(MetricsV2),
    V3(MetricsV3),
}

/// gpu_metrics_v1_1 … v1_3 (each a prefix of the next). Units: °C, %, W, MHz; energy in 2⁻¹⁶ J.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MetricsV1 {
    #[serde(flatten)]
    pub(crate) header: Header,
    pub(crate) temperature_edge: Option<u16>,
    pub(crate) temperature_hotspot: Option<u16>,
    pub(crate) temperature_mem: Option<u16>,
    pub(crate) temperature_vrgfx: Option<u16>,
    pub(crate) temperature_vrsoc: Option<u16>,
    pub(crate) temperature_vrmem: Option<u16>,
    pub(crate) average_gfx_activity: Option<u16>,
    pub(crate) average_umc_activity: Option<u16>,
    pub(crate) average_mm_activity: Option<u16>,
    pub(crate) average_socket_power: Option<u16>,
    pub(crate) energy_accumulator: Option<u64>,
    pub(crate) system_clock_counter: Option<u64>,
    pub(crate) average_gfxclk_frequency: Option<u16>,
    pub(crate) average_socclk_frequency: Option<u16>,
    pub(crate) average_uclk_frequency: Option<u16>,
    pub(crate) current_gfxclk: Option<u16>,
    pub(crate) current_socclk: Option<u16>,
    pub(crate) current_uclk: Option<u16>,
    pub(crate) throttle_status: Option<u32>,
    pub(crate) current_fan_speed: Option<u16>,
    pub(crate) pcie_link_width: Option<u16>,
    pub(crate) pcie_link_speed: Option<u16>,
    pub(crate) gfx_activity_acc: Option<u32>,
    pub(crate) mem_activity_acc: Option<u32>,
    pub(crate) temperature_hbm: [Option<u16>; 4],
    /// v1_2+.
    pub(crate) firmware_timestamp: Option<u64>,
    /// v1_3.
    pub(crate) voltage_soc: Option<u16>,
    pub(crate) voltage_gfx: Option<u16>,
    pub(crate) voltage_mem: Option<u16>,
    pub(crate) indep_throttle_status: Option<u64>,
}

/// gpu_metrics_v2_1 … v2_4 (APUs; each a prefix of the next). v2_4 documents temperature in
/// centi-°C, activity in centi-% and power in mW; v2_1–v2_3 state no units.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MetricsV2 {
    #[serde(flatten)]
    pub(crate) header: Header,
    pub(crate) temperature_gfx: Option<u16>,
    pub(crate) temperature_soc: Option<u16>,
    pub(crate) temperature_core: [Option<u16>; 8],
    pub(crate) temperature_l3: [Option<u16>; 2],
    pub(crate) average_gfx_activity: Option<u16>,
    pub(crate) average_mm_activity: Option<u16>,
    pub(crate) system_clock_counter: Option<u64>,
    pub(crate) average_socket_power: Option<u16>,
    pub(crate) average_cpu_power: Option<u16>,
    pub(crate) average_soc_power: Option<u16>,
    pub(crate) average_gfx_power: Option<u16>,
    pub(crate) average_core_power: [Option<u16>; 8],
    pub(crate) average_gfxclk_frequency: Option<u16>,
    pub(crate) average_socclk_frequency: Option<u16>,
    pub(crate) average_uclk_frequency: Option<u16>,
    pub(crate) average_fclk_frequency: Option<u16>,
    pub(crate) average_vclk_frequency: Option<u16>,
    pub(crate) average_dclk_frequency: Option<u16>,
    pub(crate) current_gfxclk: Option<u16>,
    pub(crate) current_socclk: Option<u16>,
    pub(crate) current_uclk: Option<u16>,
    pub(crate) current_fclk: Option<u16>,
    pub(crate) current_vclk: Option<u16>,
    pub(crate) current_dclk: Option<u16>,
    pub(crate) current_coreclk: [Option<u16>; 8],
    pub(crate) current_l3clk: [Option<u16>; 2],
    pub(crate) throttle_status: Option<u32>,
    pub(crate) fan_pwm: Option<u16>,
    /// v2_2+.
    pub(crate) indep_throttle_status: Option<u64>,
    /// v2_3+.
    pub(crate) average_temperature_gfx: Option<u16>,
    pub(crate) average_temperature_soc: Option<u16>,
    /// v2_4.
    pub(crate) average_cpu_voltage: Option<u16>,
    pub(crate) average_soc_voltage: Option<u16>,
    pub(crate) average_gfx_voltage: Option<u16>,
    pub(crate) average_cpu_current: Option<u16>,
    pub(crate) average_soc_current: Option<u16>,
    pub(crate) average_gfx_current: Option<u16>,
}

/// gpu_metrics_v3_0 (SMU 14.0.x APUs). Power in mW and clocks in MHz per the kernel comments;
/// temperature and activity: see `Interpretation`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MetricsV3 {
    #[serde(flatten)]
    pub(crate) header: Header,
    pub(crate) temperature_gfx: Option<u16>,
    pub(crate) temperature_soc: Option<u16>,
    pub(crate) temperature_core: [Option<u16>; 16],
    pub(crate) temperature_skin: Option<u16>,
    pub(crate) average_gfx_activity: Option<u16>,
    pub(crate) average_vcn_activity: Option<u16>,
    pub(crate) average_ipu_activity: [Option<u16>; 8],
    pub(crate) average_core_c0_activity: [Option<u16>; 16],
    pub(crate) average_dram_reads: Option<u16>,
    pub(crate) average_dram_writes: Option<u16>,
    pub(crate) average_ipu_reads: Option<u16>,
    pub(crate) average_ipu_writes: Option<u16>,
    pub(crate) system_clock_counter: Option<u64>,
    pub(crate) average_socket_power: Option<u32>,
    pub(crate) average_ipu_power: Option<u16>,
    pub(crate) average_apu_power: Option<u32>,
    pub(crate) average_gfx_power: Option<u32>,
    pub(crate) average_dgpu_power: Option<u32>,
    pub(crate) average_all_core_power: Option<u32>,
    pub(crate) average_core_power: [Option<u16>; 16],
    pub(crate) average_sys_power: Option<u16>,
    pub(crate) stapm_power_limit: Option<u16>,
    pub(crate) current_stapm_power_limit: Option<u16>,
    pub(crate) average_gfxclk_frequency: Option<u16>,
    pub(crate) average_socclk_frequency: Option<u16>,
    pub(crate) average_vpeclk_frequency: Option<u16>,
    pub(crate) average_ipuclk_frequency: Option<u16>,
    pub(crate) average_fclk_frequency: Option<u16>,
    pub(crate) average_vclk_frequency: Option<u16>,
    pub(crate) average_uclk_frequency: Option<u16>,
    pub(crate) average_mpipu_frequency: Option<u16>,
    pub(crate) current_coreclk: [Option<u16>; 16],
    pub(crate) current_core_maxfreq: Option<u16>,
    pub(crate) current_gfx_maxfreq: Option<u16>,
    pub(crate) throttle_residency_prochot: Option<u32>,
    pub(crate) throttle_residency_spl: Option<u32>,
    pub(crate) throttle_residency_fppt: Option<u32>,
    pub(crate) throttle_residency_sppt: Option<u32>,
    pub(crate) throttle_residency_thm_core: Option<u32>,
    pub(crate) throttle_residency_thm_gfx: Option<u32>,
    pub(crate) throttle_residency_thm_soc: Option<u32>,
    pub(crate) time_filter_alphavalue: Option<u32>,
}

/// Size in bytes of each layout decoded here (C sizeof, tail padding included).
fn layout_size(format: u8, content: u8) -> Result<usize, &'static str> {
    match (format, content) {
        (1, 0) => Err("v1_0 is unaligned and obsolete"),
        (1, 1) => Ok(96),
        (1, 2) => Ok(104),
        (1, 3) => Ok(120),
        (1, _) => Err("v1_4 and later (MI300-class) use a different field order; use --telemetry rocm-smi"),
        (2, 0) => Err("v2_0 is unaligned and obsolete"),
        (2, 1) => Ok(120),
        (2, 2) => Ok(128),
        (2, 3) => Ok(152),
        (2, 4) => Ok(168),
        (3, 0) => Ok(264),
        _ => Err("no layout known for this revision"),
    }
}

/// Little-endian field reader over a blob already checked to be long enough.
struct Le<'a>(&'a [u8]);

impl Le<'_> {
    fn u16(&self, off: usize) -> Option<u16> {
        let v = u16::from_le_bytes([self.0[off], self.0[off + 1]]);
        (v != u16::MAX).then_some(v)
    }
    fn u32(&self, off: usize) -> Option<u32> {
        let v = u32::from_le_bytes(self.0[off..off + 4].try_into().unwrap());
        (v != u32::MAX).then_some(v)
    }
    fn u64(&self, off: usize) -> Option<u64> {
        let v = u64::from_le_bytes(self.0[off..off + 8].try_into().unwrap());
        (v != u64::MAX).then_some(v)
    }
    fn u16s<const N: usize>(&self, off: usize) -> [Option<u16>; N] {
        std::array::from_fn(|i| self.u16(off + 2 * i))
    }
}

impl GpuMetrics {
    /// Decodes one `gpu_metrics` read. Every length is checked before any field is touched.
    pub fn decode(bytes: &[u8]) -> Result<GpuMetrics, GpuMetricsError> {
        if bytes.len() < 4 {
            return Err(GpuMetricsError::NoHeader { got: bytes.len() });
        }
        let header = Header {
            structure_size: u16::from_le_bytes([bytes[0], bytes[1]]),
            format_revision: bytes[2],
            content_revision: bytes[3],
        };
        let (format, content) = (header.format_revision, header.content_revision);
        let expected = layout_size(format, content).map_err(|why| GpuMetricsError::UnknownRevision {
            format,
            content,
            size: header.structure_size,
            why,
        })?;
        if header.structure_size as usize != expected {
            return Err(GpuMetricsError::SizeMismatch { format, content, expected, declared: header.structure_size });
        }
        if bytes.len() < expected {
            return Err(GpuMetricsError::Truncated { format, content, needed: expected, got: bytes.len() });
        }
        let b = Le(bytes);
        Ok(match format {
            1 => GpuMetrics::V1(decode_v1(header, &b)),
            2 => GpuMetrics::V2(decode_v2(header, &b)),
            _ => GpuMetrics::V3(decode_v3(header, &b)),
        })
    }

    pub(crate) fn header(&self) -> Header {
        match self {
            GpuMetrics::V1(m) => m.header,
            GpuMetrics::V2(m) => m.header,
            GpuMetrics::V3(m) => m.header,
        }
    }

    /// "v3_0" etc.
    pub(crate) fn revision(&self) -> String {
        let h = self.header();
        format!("v{}_{}", h.format_revision, h.content_revision)
    }

    /// The table's own scale for temperature and activity, before any evidence from hwmon.
    pub fn default_interpretation(&self) -> Interpretation {
        match self {
            GpuMetrics::V1(_) => Interpretation { temperature: Scale::Plain, activity: Scale::Plain },
            // v2_4 documents centi-units; the SMU 14 metrics table behind v3_0 documents
            // GfxTemperature in centi-°C and activity in centi-%, and the kernel derives
            // gpu_busy_percent as GfxActivity/100. For v2_1–v2_3 centi is the common APU case.
            _ => Interpretation { temperature: Scale::Centi, activity: Scale::Centi },
        }
    }

    /// v3_0's `time_filter_alphavalue`: the time constant of the firmware's averages, in µs (as
    /// AMD SMI 10.1's `amdsmi_apu_metrics_t` documents it); `None` for other revisions.
    pub(crate) fn filter_us(&self) -> Option<u32> {
        match self {
            GpuMetrics::V3(m) => m.time_filter_alphavalue,
            _ => None,
        }
    }

    /// The raw GPU temperature word (edge on v1, gfx on v2/v3), unscaled.
    pub(crate) fn raw_gpu_temperature(&self) -> Option<u16> {
        match self {
            GpuMetrics::V1(m) => m.temperature_edge,
            GpuMetrics::V2(m) => m.temperature_gfx,
            GpuMetrics::V3(m) => m.temperature_gfx,
        }
    }

    /// Converts to abprof units. Socket power goes to `power_avg_w` (it is time-filtered);
    /// v2/v3 GPU-only power to `gfx_power_w`.
    pub fn to_reading(&self, how: Interpretation) -> Reading {
        let f = |v: Option<u16>| v.map(f64::from);
        let t = |v: Option<u16>| v.map(|x| how.temperature.apply(x));
        let a = |v: Option<u16>| v.map(|x| how.activity.apply(x));
        let mut r = Reading::default();
        match self {
            GpuMetrics::V1(m) => {
                r.temp_gpu_c = f(m.temperature_edge);
                r.temp_hotspot_c = f(m.temperature_hotspot);
                r.temp_mem_c = f(m.temperature_mem);
                r.busy_pct = f(m.average_gfx_activity);
                r.mem_busy_pct = f(m.average_umc_activity);
                r.power_avg_w = f(m.average_socket_power);
                r.energy_j = m.energy_accumulator.map(|e| e as f64 / 65536.0);
                r.gfx_clock_mhz = f(m.current_gfxclk);
                r.mem_clock_mhz = f(m.current_uclk);
                r.gpu_stamp_ns = m.system_clock_counter.map(|c| c as f64);
                r.metrics_gfx_activity_raw = f(m.average_gfx_activity);
                r.metrics_temp_raw = f(m.temperature_edge);
            }
            GpuMetrics::V2(m) => {
                r.temp_gpu_c = t(m.temperature_gfx);
                r.busy_pct = a(m.average_gfx_activity);
                r.power_avg_w = m.average_socket_power.map(|p| p as f64 / 1000.0);
                r.gfx_power_w = m.average_gfx_power.map(|p| p as f64 / 1000.0);
                r.gfx_clock_mhz = f(m.current_gfxclk);
                r.mem_clock_mhz = f(m.current_uclk);
                r.gpu_stamp_ns = m.system_clock_counter.map(|c| c as f64);
                r.metrics_gfx_activity_raw = f(m.average_gfx_activity);
                r.metrics_temp_raw = f(m.temperature_gfx);
            }
            GpuMetrics::V3(m) => {
                r.temp_gpu_c = t(m.temperature_gfx);
                r.busy_pct = a(m.average_gfx_activity);
                r.power_avg_w = m.average_socket_power.map(|p| p as f64 / 1000.0);
                r.gfx_power_w = m.average_gfx_power.map(|p| p as f64 / 1000.0);
                // v3_0 has no "current" gfx clock; the time-filtered one is the closest.
                r.gfx_clock_mhz = f(m.average_gfxclk_frequency);
                r.mem_clock_mhz = f(m.average_uclk_frequency);
                r.gpu_stamp_ns = m.system_clock_counter.map(|c| c as f64);
                r.metrics_gfx_activity_raw = f(m.average_gfx_activity);
                r.metrics_temp_raw = f(m.temperature_gfx);
                let n = |v: Option<u32>| v.map(f64::from);
                r.throttle_prochot = n(m.throttle_residency_prochot);
                r.throttle_spl = n(m.throttle_residency_spl);
                r.throttle_fppt = n(m.throttle_residency_fppt);
                r.throttle_sppt = n(m.throttle_residency_sppt);
                r.throttle_thm_core = n(m.throttle_residency_thm_core);
                r.throttle_thm_gfx = n(m.throttle_residency_thm_gfx);
                r.throttle_thm_soc = n(m.throttle_residency_thm_soc);
            }
        }
        r
    }
}

/// Whether a raw word is in plain units or hundredths of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Scale {
    Plain,
    Centi,
}

impl Scale {
    pub(crate) fn apply(self, raw: u16) -> f64 {
        match self {
            Scale::Plain => raw as f64,
            Scale::Centi => raw as f64 / 100.0,
        }
    }
}

/// How temperature and activity words of a table are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Interpretation {
    pub(crate) temperature: Scale,
    pub(crate) activity: Scale,
}

impl Interpretation {
    /// Settles the temperature scale from an independent reading of the same sensor (hwmon
    /// temp1, °C): whichever scale lands within 5 °C of it wins; if neither does, the default
    /// stays and the caller reports the disagreement. Returns whether evidence decided it.
    pub(crate) fn settle_temperature(&mut self, raw: u16, hwmon_c: f64) -> bool {
        let close = |s: Scale| (s.apply(raw) - hwmon_c).abs() <= 5.0;
        match (close(Scale::Plain), close(Scale::Centi)) {
            (true, false) => self.temperature = Scale::Plain,
            (false, true) => self.temperature = Scale::Centi,
            _ => return false,
        }
        true
    }
}

fn decode_v1(header: Header, b: &Le) -> MetricsV1 {
    let content = header.content_revision;
    MetricsV1 {
        header,
        temperature_edge: b.u16(4),
        temperature_hotspot: b.u16(6),
        temperature_mem: b.u16(8),
        temperature_vrgfx: b.u16(10),
        temperature_vrsoc: b.u16(12),
        temperature_vrmem: b.u16(14),
        average_gfx_activity: b.u16(16),
        average_umc_activity: b.u16(18),
        average_mm_activity: b.u16(20),
        average_socket_power: b.u16(22),
        energy_accumulator: b.u64(24),
        system_clock_counter: b.u64(32),
        average_gfxclk_frequency: b.u16(40),
        average_socclk_frequency: b.u16(42),
        average_uclk_frequency: b.u16(44),
        current_gfxclk: b.u16(54),
        current_socclk: b.u16(56),
        current_uclk: b.u16(58),
        throttle_status: b.u32(68),
        current_fan_speed: b.u16(72),
        pcie_link_width: b.u16(74),
        pcie_link_speed: b.u16(76),
        gfx_activity_acc: b.u32(80),
        mem_activity_acc: b.u32(84),
        temperature_hbm: b.u16s::<4>(88),
        firmware_timestamp: (content >= 2).then(|| b.u64(96)).flatten(),
        voltage_soc: (content >= 3).then(|| b.u16(104)).flatten(),
        voltage_gfx: (content >= 3).then(|| b.u16(106)).flatten(),
        voltage_mem: (content >= 3).then(|| b.u16(108)).flatten(),
        indep_throttle_status: (content >= 3).then(|| b.u64(112)).flatten(),
    }
}

fn decode_v2(header: Header, b: &Le) -> MetricsV2 {
    let content = header.content_revision;
    let from = |min: u8, off: usize| (content >= min).then(|| b.u16(off)).flatten();
    MetricsV2 {
        header,
        temperature_gfx: b.u16(4),
        temperature_soc: b.u16(6),
        temperature_core: b.u16s::<8>(8),
        temperature_l3: b.u16s::<2>(24),
        average_gfx_activity: b.u16(28),
        average_mm_activity: b.u16(30),
        system_clock_counter: b.u64(32),
        average_socket_power: b.u16(40),
        average_cpu_power: b.u16(42),
        average_soc_power: b.u16(44),
        average_gfx_power: b.u16(46),
        average_core_power: b.u16s::<8>(48),
        average_gfxclk_frequency: b.u16(64),
        average_socclk_frequency: b.u16(66),
        average_uclk_frequency: b.u16(68),
        average_fclk_frequency: b.u16(70),
        average_vclk_frequency: b.u16(72),
        average_dclk_frequency: b.u16(74),
        current_gfxclk: b.u16(76),
        current_socclk: b.u16(78),
        current_uclk: b.u16(80),
        current_fclk: b.u16(82),
        current_vclk: b.u16(84),
        current_dclk: b.u16(86),
        current_coreclk: b.u16s::<8>(88),
        current_l3clk: b.u16s::<2>(104),
        throttle_status: b.u32(108),
        fan_pwm: b.u16(112),
        indep_throttle_status: (content >= 2).then(|| b.u64(120)).flatten(),
        average_temperature_gfx: from(3, 128),
        average_temperature_soc: from(3, 130),
        average_cpu_voltage: from(4, 152),
        average_soc_voltage: from(4, 154),
        average_gfx_voltage: from(4, 156),
        average_cpu_current: from(4, 158),
        average_soc_current: from(4, 160),
        average_gfx_current: from(4, 162),
    }
}

fn decode_v3(header: Header, b: &Le) -> MetricsV3 {
    MetricsV3 {
        header,
        temperature_gfx: b.u16(4),
        temperature_soc: b.u16(6),
        temperature_core: b.u16s::<16>(8),
        temperature_skin: b.u16(40),
        average_gfx_activity: b.u16(42),
        average_vcn_activity: b.u16(44),
        average_ipu_activity: b.u16s::<8>(46),
        average_core_c0_activity: b.u16s::<16>(62),
        average_dram_reads: b.u16(94),
        average_dram_writes: b.u16(96),
        average_ipu_reads: b.u16(98),
        average_ipu_writes: b.u16(100),
        system_clock_counter: b.u64(104),
        average_socket_power: b.u32(112),
        average_ipu_power: b.u16(116),
        average_apu_power: b.u32(120),
        average_gfx_power: b.u32(124),
        average_dgpu_power: b.u32(128),
        average_all_core_power: b.u32(132),
        average_core_power: b.u16s::<16>(136),
        average_sys_power: b.u16(168),
        stapm_power_limit: b.u16(170),
        current_stapm_power_limit: b.u16(172),
        average_gfxclk_frequency: b.u16(174),
        average_socclk_frequency: b.u16(176),
        average_vpeclk_frequency: b.u16(178),
        average_ipuclk_frequency: b.u16(180),
        average_fclk_frequency: b.u16(182),
        average_vclk_frequency: b.u16(184),
        average_uclk_frequency: b.u16(186),
        average_mpipu_frequency: b.u16(188),
        current_coreclk: b.u16s::<16>(190),
        current_core_maxfreq: b.u16(222),
        current_gfx_maxfreq: b.u16(224),
        throttle_residency_prochot: b.u32(228),
        throttle_residency_spl: b.u32(232),
        throttle_residency_fppt: b.u32(236),
        throttle_residency_sppt: b.u32(240),
        throttle_residency_thm_core: b.u32(244),
        throttle_residency_thm_gfx: b.u32(248),
        throttle_residency_thm_soc: b.u32(252),
        time_filter_alphavalue: b.u32(256),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blob(size: u16, format: u8, content: u8, len: usize) -> Vec<u8> {
        let mut b = vec![0xFFu8; len];
        b[..2].copy_from_slice(&size.to_le_bytes());
        b[2] = format;
        b[3] = content;
        b
    }

    #[test]
    fn short_unknown_mismatched_and_truncated_are_named() {
        assert_eq!(GpuMetrics::decode(&[1, 2]), Err(GpuMetricsError::NoHeader { got: 2 }));
        let e = GpuMetrics::decode(&blob(64, 9, 9, 64)).unwrap_err();
        assert!(matches!(e, GpuMetricsError::UnknownRevision { format: 9, content: 9, .. }), "{e}");
        let e = GpuMetrics::decode(&blob(500, 1, 6, 500)).unwrap_err();
        assert!(e.to_string().contains("rocm-smi"), "{e}");
        let e = GpuMetrics::decode(&blob(264, 2, 1, 264)).unwrap_err();
        assert_eq!(e, GpuMetricsError::SizeMismatch { format: 2, content: 1, expected: 120, declared: 264 });
        let e = GpuMetrics::decode(&blob(264, 3, 0, 200)).unwrap_err();
        assert_eq!(e, GpuMetricsError::Truncated { format: 3, content: 0, needed: 264, got: 200 });
    }

    #[test]
    fn all_ones_fields_are_absent_and_fill_the_reading_with_nothing() {
        let m = GpuMetrics::decode(&blob(264, 3, 0, 264)).unwrap();
        let r = m.to_reading(m.default_interpretation());
        assert_eq!(r.present().count(), 0);
    }

    #[test]
    fn temperature_scale_follows_hwmon_evidence() {
        let mut i = Interpretation { temperature: Scale::Centi, activity: Scale::Centi };
        assert!(i.settle_temperature(61, 61.25));
        assert_eq!(i.temperature, Scale::Plain);
        assert!(i.settle_temperature(6125, 61.25));
        assert_eq!(i.temperature, Scale::Centi);
        assert!(!i.settle_temperature(900, 40.0));
    }
}
