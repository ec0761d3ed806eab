//! amdgpu read straight from sysfs: the text attributes (`gpu_busy_percent`, hwmon power,
//! temperature and clock, `mem_info_*`, `pp_dpm_*`) plus the binary `gpu_metrics` table. This is
//! the practical path on APUs such as Strix Halo, where ROCm SMI cannot parse gpu_metrics v3_0.
//!
//! Every attribute is opened once and re-read with pread, so one sample costs one syscall per
//! value. The root is configurable (`--sysfs-root`) so tests and benchmarks run on fixture trees.
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::gpu_metrics::Scale;
use super::gpu_metrics::{GpuMetrics, Header, Interpretation};
use super::power_field::{PowerField, PowerKind, PowerScope};
use super::sysfs_file::{parse_dpm_current_mhz, SysfsFile};
use super::{Field, Reading, SourceKind, TelemetryError, TelemetrySource};
use crate::clock::mono_ns;

/// Big enough for any gpu_metrics revision (v1_8 is under 1.5 KiB); sysfs caps a read at a page.
const METRICS_BUF: usize = 4096;

/// Temperatures, memory use and the SMU's own averages (power1_average, mem_busy_percent) move
/// on a scale of many milliseconds (thermal mass, allocations, the SMU's filters), so they are
/// re-read at most this often and held in between. At 1 kHz this removes seven of the thirteen
/// reads a dGPU sample makes; those fields' change statistics then show ≥ 10 ms.
pub(crate) const SLOW_FIELDS_EVERY: Duration = Duration::from_millis(10);

pub struct AmdgpuSysfs {
    card: String,
    device_dir: PathBuf,
    busy: Option<SysfsFile>,
    mem_busy: Option<SysfsFile>,
    power_input: Option<SysfsFile>,
    power_average: Option<SysfsFile>,
    temp_gpu: Option<SysfsFile>,
    temp_hotspot: Option<SysfsFile>,
    temp_mem: Option<SysfsFile>,
    freq_gfx_hz: Option<SysfsFile>,
    freq_mem_hz: Option<SysfsFile>,
    dpm_sclk: Option<SysfsFile>,
    dpm_mclk: Option<SysfsFile>,
    vram_used: Option<SysfsFile>,
    gtt_used: Option<SysfsFile>,
    gpu_metrics: Option<SysfsFile>,
    interpretation: Interpretation,
    /// The first table's revision and, for v3_0, its filter constant (µs); `None` without a table.
    table: Option<TableFacts>,
    /// Readings whose table was rejected as torn.
    torn: u64,
    metrics_buf: Box<[u8; METRICS_BUF]>,
    slow: Reading,
    slow_read_ns: Option<u64>,
    notes: Vec<String>,
    /// amdgpu cards under the same root.
    on_host: u32,
}

/// amdgpu cards under `root/class/drm` (card0, card1, … — not connectors or render nodes) that
/// have `device/gpu_busy_percent`, ordered by card number.
pub fn discover_cards(root: &Path) -> Vec<(String, PathBuf)> {
    let drm = root.join("class/drm");
    let mut cards: Vec<(u32, String, PathBuf)> = fs::read_dir(&drm)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let number: u32 = name.strip_prefix("card")?.parse().ok()?;
            let device = drm.join(&name).join("device");
            device.join("gpu_busy_percent").exists().then_some((number, name, device))
        })
        .collect();
    cards.sort();
    cards.into_iter().map(|(_, name, dir)| (name, dir)).collect()
}

/// The amdgpu hwmon folder of a device (`device/hwmon/hwmonN` whose `name` is amdgpu).
fn find_hwmon(device_dir: &Path) -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> = fs::read_dir(device_dir.join("hwmon")).ok()?.flatten().map(|e| e.path()).collect();
    dirs.sort();
    let is_amdgpu = |d: &PathBuf| fs::read_to_string(d.join("name")).map(|n| n.trim() == "amdgpu").unwrap_or(false);
    dirs.iter().find(|d| is_amdgpu(d)).or(dirs.first()).cloned()
}

/// hwmon temperature inputs by role. Labels win where present ("edge", "junction", "mem");
/// without labels amdgpu's fixed order applies: temp1 edge, temp2 junction, temp3 mem.
fn temperature_inputs(hwmon: &Path) -> [Option<SysfsFile>; 3] {
    let mut by_role: [Option<SysfsFile>; 3] = [None, None, None];
    for n in 1..=3 {
        let label = fs::read_to_string(hwmon.join(format!("temp{n}_label"))).ok();
        let role = match label.as_deref().map(str::trim) {
            Some("edge") => 0,
            Some("junction") | Some("hotspot") => 1,
            Some("mem") => 2,
            Some(_) => continue,
            None => n - 1,
        };
        if by_role[role].is_none() {
            by_role[role] = SysfsFile::open_optional(&hwmon.join(format!("temp{n}_input")));
        }
    }
    by_role
}

impl AmdgpuSysfs {
    /// Opens the `index`-th amdgpu card under `root` (`/sys` on a real host).
    pub fn open(root: &Path, index: u32) -> Result<AmdgpuSysfs, TelemetryError> {
        let cards = discover_cards(root);
        if cards.is_empty() {
            return Err(TelemetryError::NoAmdgpuCard { root: root.to_owned() });
        }
        let (card, device_dir) = cards.get(index as usize).cloned().ok_or(TelemetryError::NoSuchDevice {
            backend: "amdgpu-sysfs",
            index,
            count: cards.len() as u32,
        })?;
        let dev = |name: &str| SysfsFile::open_optional(&device_dir.join(name));
        let hwmon = find_hwmon(&device_dir);
        let mon = |name: &str| hwmon.as_ref().and_then(|h| SysfsFile::open_optional(&h.join(name)));
        let [temp_gpu, temp_hotspot, temp_mem] = match &hwmon {
            Some(h) => temperature_inputs(h),
            None => [None, None, None],
        };
        let busy = Some(SysfsFile::open_readable(&device_dir.join("gpu_busy_percent"))?);
        let freq_gfx_hz = mon("freq1_input");
        let freq_mem_hz = mon("freq2_input");
        let mut source = AmdgpuSysfs {
            card,
            busy,
            mem_busy: dev("mem_busy_percent"),
            power_input: mon("power1_input"),
            power_average: mon("power1_average"),
            temp_gpu,
            temp_hotspot,
            temp_mem,
            // pp_dpm_* costs a table print per read; only needed where hwmon has no freq input.
            dpm_sclk: if freq_gfx_hz.is_none() { dev("pp_dpm_sclk") } else { None },
            dpm_mclk: if freq_mem_hz.is_none() { dev("pp_dpm_mclk") } else { None },
            freq_gfx_hz,
            freq_mem_hz,
            vram_used: dev("mem_info_vram_used"),
            gtt_used: dev("mem_info_gtt_used"),
            gpu_metrics: None,
            interpretation: Interpretation { temperature: Scale::Plain, activity: Scale::Plain },
            table: None,
            torn: 0,
            metrics_buf: Box::new([0u8; METRICS_BUF]),
            slow: Reading::default(),
            slow_read_ns: None,
            notes: Vec::new(),
            on_host: cards.len() as u32,
            device_dir,
        };
        if hwmon.is_none() {
            source.notes.push("no hwmon folder: no power, temperature or hwmon clocks".into());
        }
        source.open_gpu_metrics();
        Ok(source)
    }

    /// Opens `gpu_metrics` if it decodes, and settles its temperature scale against hwmon.
    /// A table that does not decode is reported in `describe`, not guessed at.
    fn open_gpu_metrics(&mut self) {
        let path = self.device_dir.join("gpu_metrics");
        let Some(file) = SysfsFile::open_optional(&path) else {
            self.notes.push("no gpu_metrics".into());
            return;
        };
        let decoded = file.read_into(&mut self.metrics_buf[..]).map(|n| GpuMetrics::decode(&self.metrics_buf[..n]));
        let metrics = match decoded {
            Ok(Ok(m)) => m,
            Ok(Err(e)) => return self.notes.push(format!("gpu_metrics not used: {e}")),
            Err(e) => return self.notes.push(format!("gpu_metrics not used: {e}")),
        };
        self.interpretation = metrics.default_interpretation();
        self.table = Some(TableFacts {
            header: metrics.header(),
            apu: !matches!(metrics, GpuMetrics::V1(_)),
            filter_us: metrics.filter_us(),
        });
        let mut note = format!("gpu_metrics {}", metrics.revision());
        if !matches!(metrics, GpuMetrics::V1(_)) {
            let hwmon_c = self.temp_gpu.as_ref().and_then(|f| f.read_i64().ok()).map(|m| m as f64 / 1000.0);
            match (metrics.raw_gpu_temperature(), hwmon_c) {
                (Some(raw), Some(c)) if self.interpretation.settle_temperature(raw, c) => {
                    note += &format!(
                        " (temperature {:?}-scaled: raw {raw} vs hwmon {c:.1} °C)",
                        self.interpretation.temperature
                    )
                }
                (Some(raw), Some(c)) => {
                    note += &format!(
                        " (temperature raw {raw} matches neither °C nor centi-°C of hwmon {c:.1} °C; read as {:?})",
                        self.interpretation.temperature
                    )
                }
                _ => {
                    note += &format!(
                        " (temperature read as {:?}: no hwmon temperature to check against)",
                        self.interpretation.temperature
                    )
                }
            }
            note += &format!("; activity read as {:?}", self.interpretation.activity);
        }
        self.notes.push(note);
        self.gpu_metrics = Some(file);
    }

    /// Values read on every sample: busy, instant power, clocks.
    fn fast_reading(&self) -> Result<Reading, TelemetryError> {
        let dpm = |f: &Option<SysfsFile>| -> Result<Option<f64>, TelemetryError> {
            let Some(f) = f else { return Ok(None) };
            let mut buf = [0u8; 512];
            let n = f.read_into(&mut buf)?;
            parse_dpm_current_mhz(&buf[..n]).map(Some).ok_or_else(|| f.parse_error("a current DPM level", &buf[..n]))
        };
        Ok(Reading {
            busy_pct: scaled(&self.busy, 1.0)?,
            power_w: scaled(&self.power_input, 1e6)?,
            gfx_clock_mhz: match scaled(&self.freq_gfx_hz, 1e6)? {
                Some(v) => Some(v),
                None => dpm(&self.dpm_sclk)?,
            },
            mem_clock_mhz: match scaled(&self.freq_mem_hz, 1e6)? {
                Some(v) => Some(v),
                None => dpm(&self.dpm_mclk)?,
            },
            ..Reading::default()
        })
    }

    /// Values re-read every `SLOW_FIELDS_EVERY`: temperatures, memory use, SMU averages.
    fn slow_reading(&self) -> Result<Reading, TelemetryError> {
        Ok(Reading {
            mem_busy_pct: scaled(&self.mem_busy, 1.0)?,
            power_avg_w: scaled(&self.power_average, 1e6)?,
            temp_gpu_c: scaled(&self.temp_gpu, 1e3)?,
            temp_hotspot_c: scaled(&self.temp_hotspot, 1e3)?,
            temp_mem_c: scaled(&self.temp_mem, 1e3)?,
            vram_used_bytes: scaled(&self.vram_used, 1.0)?,
            gtt_used_bytes: scaled(&self.gtt_used, 1.0)?,
            ..Reading::default()
        })
    }
}

/// What the first gpu_metrics table said about the device's power fields.
#[derive(Debug, Clone, Copy)]
struct TableFacts {
    /// Its header: every later read must carry the same (size, revision).
    header: Header,
    /// A v2_x/v3_0 table: an APU, whose socket power includes its CPU.
    apu: bool,
    /// v3_0 `time_filter_alphavalue`: the time constant of the firmware's averages, µs.
    filter_us: Option<u32>,
}

/// An integer attribute divided by `div`, or `None` where the attribute does not exist.
fn scaled(f: &Option<SysfsFile>, div: f64) -> Result<Option<f64>, TelemetryError> {
    f.as_ref().map(|f| f.read_i64().map(|x| x as f64 / div)).transpose()
}

impl TelemetrySource for AmdgpuSysfs {
    fn devices_on_host(&self) -> u32 {
        self.on_host
    }

    fn kind(&self) -> SourceKind {
        SourceKind::AmdgpuSysfs
    }

    fn torn_reads(&self) -> u64 {
        self.torn
    }

    /// hwmon's power where it exists, the table's where hwmon has none (`read` fills the gaps
    /// from the table); on an APU all socket power includes the CPU, and only the table's
    /// gfx power is the GPU's own.
    fn power_fields(&self) -> Vec<PowerField> {
        let apu = self.table.is_some_and(|t| t.apu);
        let socket = if apu { PowerScope::ApuSocket } else { PowerScope::GpuSocket };
        let filter_ms = self.table.and_then(|t| t.filter_us).map(|us| us as f64 / 1000.0);
        let mut out = Vec::new();
        if self.power_input.is_some() {
            // On an APU the SMU's socket power behind power1_input is itself the firmware's
            // filtered average (docs/methodology.md §9.7), with the table's time constant.
            out.push(if apu {
                PowerField::new(
                    Field::PowerW,
                    "hwmon power1_input (the firmware's filtered socket power)",
                    socket,
                    PowerKind::Average,
                    filter_ms,
                )
            } else {
                PowerField::new(Field::PowerW, "hwmon power1_input", socket, PowerKind::Instant, None)
            });
        }
        if self.power_average.is_some() {
            out.push(PowerField::new(Field::PowerAvgW, "hwmon power1_average", socket, PowerKind::Average, None));
        } else if self.gpu_metrics.is_some() {
            let origin = "gpu_metrics average_socket_power";
            out.push(PowerField::new(Field::PowerAvgW, origin, socket, PowerKind::Average, filter_ms));
        }
        if apu && self.gpu_metrics.is_some() {
            let origin = "gpu_metrics average_gfx_power";
            out.push(PowerField::new(Field::GfxPowerW, origin, PowerScope::Gfx, PowerKind::Average, filter_ms));
        }
        out
    }

    fn describe(&self) -> String {
        let mut s = format!(
            "amdgpu sysfs {} ({}); temperatures, memory and averaged power re-read every {} ms",
            self.card,
            self.device_dir.display(),
            SLOW_FIELDS_EVERY.as_millis()
        );
        for n in &self.notes {
            s += "; ";
            s += n;
        }
        s
    }

    fn read(&mut self) -> Result<Reading, TelemetryError> {
        let now = mono_ns();
        if self.slow_read_ns.is_none_or(|t| now - t >= SLOW_FIELDS_EVERY.as_nanos() as u64) {
            self.slow = self.slow_reading()?;
            self.slow_read_ns = Some(now);
        }
        let mut r = self.fast_reading()?;
        r.fill_missing_from(&self.slow);
        if let (Some(file), Some(table)) = (&self.gpu_metrics, self.table) {
            let n = file.read_into(&mut self.metrics_buf[..])?;
            // A table whose header or size is not the first table's was torn by a concurrent
            // update (docs/methodology.md §9.2): this reading goes on without it, and it is counted.
            match GpuMetrics::decode(&self.metrics_buf[..n]) {
                Ok(m) if m.header() == table.header => {
                    // Text attributes win where both exist: they are what rocm-smi and users see.
                    r.fill_missing_from(&m.to_reading(self.interpretation));
                }
                _ => self.torn += 1,
            }
        }
        Ok(r)
    }
}
