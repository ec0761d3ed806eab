//! ROCm SMI (`librocm_smi64`), opened at run time. Works on dGPUs with gpu_metrics v1_x; on APUs
//! with v2_x/v3_0 its energy and activity calls return NOT_SUPPORTED (by ROCm SMI's code paths),
//! which this backend records once and then stops asking for, leaving those fields empty.
use std::ffi::CStr;

use abprof_sys::rocm_smi as sys;

use super::one_smi::{load_exclusive, SmiLibrary};
use super::power_field::{PowerField, PowerKind, PowerScope};
use super::{Field, Reading, SourceKind, TelemetryError, TelemetrySource};

const LIBRARY: &str = "librocm_smi64";

/// Sonames in the order they are tried: Debian's (.so.1), Ubuntu's and ROCm 6.x/7.x (.so.7,
/// .so.6), older ROCm (.so.5), the dev link, and ROCm's own install folder.
/// `ABPROF_ROCM_SMI_LIB` (a path), when set, is the only one tried.
pub(crate) const LIBRARY_CANDIDATES: &[&str] = &[
    "librocm_smi64.so.1",
    "librocm_smi64.so.7",
    "librocm_smi64.so.6",
    "librocm_smi64.so.5",
    "librocm_smi64.so",
    "/opt/rocm/lib/librocm_smi64.so",
];

/// The library, loaded but not initialised: enough to report its version and status names.
pub struct RocmSmiLibrary {
    lib: sys::RocmSmiLib,
    path: String,
}

/// The one status→error step of a ROCm SMI call on the open path: success, or the call named with
/// its status.
fn rsmi_try(call: &'static str, code: sys::rsmi_status_t) -> Result<(), TelemetryError> {
    if code == sys::rsmi_status_t_RSMI_STATUS_SUCCESS {
        return Ok(());
    }
    Err(TelemetryError::Call { call, code, name: status_name(code).into() })
}

/// The short name of a status code, from the constants bindgen generated out of the header.
pub(crate) fn status_name(code: sys::rsmi_status_t) -> &'static str {
    match code {
        sys::rsmi_status_t_RSMI_STATUS_SUCCESS => "RSMI_STATUS_SUCCESS",
        sys::rsmi_status_t_RSMI_STATUS_INVALID_ARGS => "RSMI_STATUS_INVALID_ARGS",
        sys::rsmi_status_t_RSMI_STATUS_NOT_SUPPORTED => "RSMI_STATUS_NOT_SUPPORTED",
        sys::rsmi_status_t_RSMI_STATUS_FILE_ERROR => "RSMI_STATUS_FILE_ERROR",
        sys::rsmi_status_t_RSMI_STATUS_PERMISSION => "RSMI_STATUS_PERMISSION",
        sys::rsmi_status_t_RSMI_STATUS_OUT_OF_RESOURCES => "RSMI_STATUS_OUT_OF_RESOURCES",
        sys::rsmi_status_t_RSMI_STATUS_INTERNAL_EXCEPTION => "RSMI_STATUS_INTERNAL_EXCEPTION",
        sys::rsmi_status_t_RSMI_STATUS_INPUT_OUT_OF_BOUNDS => "RSMI_STATUS_INPUT_OUT_OF_BOUNDS",
        sys::rsmi_status_t_RSMI_STATUS_INIT_ERROR => "RSMI_STATUS_INIT_ERROR",
        sys::rsmi_status_t_RSMI_STATUS_NOT_YET_IMPLEMENTED => "RSMI_STATUS_NOT_YET_IMPLEMENTED",
        sys::rsmi_status_t_RSMI_STATUS_NOT_FOUND => "RSMI_STATUS_NOT_FOUND",
        sys::rsmi_status_t_RSMI_STATUS_INSUFFICIENT_SIZE => "RSMI_STATUS_INSUFFICIENT_SIZE",
        sys::rsmi_status_t_RSMI_STATUS_INTERRUPT => "RSMI_STATUS_INTERRUPT",
        sys::rsmi_status_t_RSMI_STATUS_UNEXPECTED_SIZE => "RSMI_STATUS_UNEXPECTED_SIZE",
        sys::rsmi_status_t_RSMI_STATUS_NO_DATA => "RSMI_STATUS_NO_DATA",
        sys::rsmi_status_t_RSMI_STATUS_UNEXPECTED_DATA => "RSMI_STATUS_UNEXPECTED_DATA",
        sys::rsmi_status_t_RSMI_STATUS_BUSY => "RSMI_STATUS_BUSY",
        sys::rsmi_status_t_RSMI_STATUS_REFCOUNT_OVERFLOW => "RSMI_STATUS_REFCOUNT_OVERFLOW",
        sys::rsmi_status_t_RSMI_STATUS_UNKNOWN_ERROR => "RSMI_STATUS_UNKNOWN_ERROR",
        _ => "RSMI status unknown to this header",
    }
}

impl RocmSmiLibrary {
    /// Loads the first library that opens (see `LIBRARY_CANDIDATES`).
    pub fn load() -> Result<RocmSmiLibrary, TelemetryError> {
        let candidates =
            crate::dylib::candidates("ABPROF_ROCM_SMI_LIB", LIBRARY_CANDIDATES, &[]).map_err(|detail| {
                TelemetryError::LibraryMissing { library: LIBRARY, tried: "ABPROF_ROCM_SMI_LIB".into(), detail }
            })?;
        Self::load_from(&candidates.iter().map(String::as_str).collect::<Vec<_>>())
    }

    /// Loads the first of `candidates` that opens, unless AMD SMI is loaded in this process
    /// (docs/methodology.md §9.2).
    pub fn load_from(candidates: &[&str]) -> Result<RocmSmiLibrary, TelemetryError> {
        load_exclusive(SmiLibrary::RocmSmi, || Self::open(candidates))
    }

    fn open(candidates: &[&str]) -> Result<RocmSmiLibrary, TelemetryError> {
        // SAFETY: loading runs the library's initialisers; librocm_smi64's only set up
        // C++ statics and do not touch the process state abprof relies on.
        match crate::dylib::open_first(candidates, |name| unsafe { sys::RocmSmiLib::new(name) }) {
            Ok((lib, path)) => Ok(RocmSmiLibrary { lib, path }),
            Err(detail) => {
                Err(TelemetryError::LibraryMissing { library: LIBRARY, tried: candidates.join(", "), detail })
            }
        }
    }

    pub fn path(&self) -> &str {
        &self.path
    }

    /// (major, minor, patch) from `rsmi_version_get`; callable before `rsmi_init`.
    pub fn version(&self) -> Option<(u32, u32, u32)> {
        let f = self.lib.rsmi_version_get.as_ref().ok()?;
        let mut v = sys::rsmi_version_t { major: 0, minor: 0, patch: 0, build: std::ptr::null() };
        // SAFETY: v is a valid out-pointer for the duration of the call.
        (unsafe { f(&mut v) } == sys::rsmi_status_t_RSMI_STATUS_SUCCESS).then_some((v.major, v.minor, v.patch))
    }

    /// `rsmi_init(0)`, then picks device `index`. "No AMD device" is `NoAmdDevice`.
    pub fn init(self, index: u32) -> Result<RocmSmi, TelemetryError> {
        let need = |present: bool, symbol| {
            if present {
                Ok(())
            } else {
                Err(TelemetryError::SymbolMissing { library: LIBRARY, symbol })
            }
        };
        need(self.lib.rsmi_init.is_ok(), "rsmi_init")?;
        need(self.lib.rsmi_shut_down.is_ok(), "rsmi_shut_down")?;
        need(self.lib.rsmi_num_monitor_devices.is_ok(), "rsmi_num_monitor_devices")?;
        // SAFETY: symbols checked above; rsmi_init has no pointer arguments.
        let code = unsafe { self.lib.rsmi_init(0) };
        if code == sys::rsmi_status_t_RSMI_STATUS_INIT_ERROR {
            // What rsmi_init returns when /sys/class/drm has no amdgpu device (or does not exist).
            return Err(TelemetryError::NoAmdDevice {
                library: "ROCm SMI",
                detail: format!("rsmi_init returned {} ({code})", status_name(code)),
            });
        }
        if code != sys::rsmi_status_t_RSMI_STATUS_SUCCESS {
            return Err(TelemetryError::InitFailed { call: "rsmi_init", code, name: status_name(code).into() });
        }
        let version = self.version();
        let mut smi = RocmSmi {
            lib: self.lib,
            path: self.path,
            device: index,
            on_host: 0,
            name: String::new(),
            version,
            skip: 0,
        };
        let mut count = 0u32;
        // SAFETY: count is a valid out-pointer.
        rsmi_try("rsmi_num_monitor_devices", unsafe { smi.lib.rsmi_num_monitor_devices(&mut count) })?;
        if count == 0 {
            return Err(TelemetryError::NoAmdDevice {
                library: "ROCm SMI",
                detail: "rsmi_init succeeded but rsmi_num_monitor_devices reports 0 devices".into(),
            });
        }
        if index >= count {
            return Err(TelemetryError::NoSuchDevice { backend: "rocm-smi", index, count });
        }
        smi.on_host = count;
        smi.name = smi.device_name().unwrap_or_else(|| "AMD GPU".into());
        Ok(smi)
    }
}

/// An initialised ROCm SMI with one device selected; shuts the library down when dropped.
pub struct RocmSmi {
    lib: sys::RocmSmiLib,
    path: String,
    device: u32,
    /// Devices rsmi_num_monitor_devices counts.
    on_host: u32,
    name: String,
    version: Option<(u32, u32, u32)>,
    /// Bit per `Call` that answered NOT_SUPPORTED (or is missing from the library): not asked again.
    skip: u32,
}

/// The calls `read` makes, one bit each in `RocmSmi::skip`.
#[derive(Debug, Clone, Copy)]
enum Call {
    Busy,
    MemBusy,
    SocketPower,
    AveragePower,
    Energy,
    TempEdge,
    TempJunction,
    TempMem,
    GfxClock,
    MemClock,
    Vram,
    Gtt,
}

const ALL_CALLS: [Call; 12] = [
    Call::Busy,
    Call::MemBusy,
    Call::SocketPower,
    Call::AveragePower,
    Call::Energy,
    Call::TempEdge,
    Call::TempJunction,
    Call::TempMem,
    Call::GfxClock,
    Call::MemClock,
    Call::Vram,
    Call::Gtt,
];

/// `rsmi_frequencies_t` in either layout; the larger one bounds what the library may write.
#[repr(C)]
union Frequencies {
    v5: sys::rsmi_frequencies_t,
    v6: sys::abprof_rsmi_frequencies_v6_t,
}

/// Calls a symbol if the library has it: `None` if missing, else its status.
macro_rules! call {
    ($lib:expr, $sym:ident ( $($arg:expr),* )) => {
        match $lib.$sym.as_ref() {
            // SAFETY: every argument is a plain value or a pointer to a live local.
            Ok(f) => Some(unsafe { f($($arg),*) }),
            Err(_) => None,
        }
    };
}

impl RocmSmi {
    fn device_name(&self) -> Option<String> {
        let mut buf = [0 as std::ffi::c_char; 128];
        let code = call!(self.lib, rsmi_dev_name_get(self.device, buf.as_mut_ptr(), buf.len()))?;
        if code != sys::rsmi_status_t_RSMI_STATUS_SUCCESS {
            return None;
        }
        // SAFETY: the library wrote a NUL-terminated string into buf (and buf ends zeroed).
        buf[buf.len() - 1] = 0;
        Some(unsafe { CStr::from_ptr(buf.as_ptr()) }.to_string_lossy().into_owned())
    }

    /// ROCm 6.0 put `has_deep_sleep` in front of rsmi_frequencies_t; libraries of major version
    /// 6 and later use that layout, Debian's 5.2.3 (which reports 1.0.0) the old one.
    fn frequencies_v6(&self) -> bool {
        self.version.is_some_and(|(major, _, _)| major >= 6)
    }

    /// Runs one call unless it was found unsupported before. `status` is `None` when the symbol
    /// is missing; NOT_SUPPORTED and missing symbols mark the call as skipped for good.
    fn guarded(&mut self, which: Call, run: impl FnOnce(&Self) -> Option<sys::rsmi_status_t>) -> bool {
        let bit = 1u32 << which as u32;
        if self.skip & bit != 0 {
            return false;
        }
        match run(self) {
            Some(sys::rsmi_status_t_RSMI_STATUS_SUCCESS) => true,
            Some(sys::rsmi_status_t_RSMI_STATUS_NOT_SUPPORTED)
            | Some(sys::rsmi_status_t_RSMI_STATUS_NOT_YET_IMPLEMENTED)
            | None => {
                self.skip |= bit;
                false
            }
            Some(_) => false,
        }
    }

    fn u32_value(&mut self, which: Call) -> Option<f64> {
        let mut v = 0u32;
        let d = self.device;
        let ok = self.guarded(which, |s| match which {
            Call::Busy => call!(s.lib, rsmi_dev_busy_percent_get(d, &mut v)),
            _ => call!(s.lib, rsmi_dev_memory_busy_percent_get(d, &mut v)),
        });
        ok.then_some(v as f64)
    }

    fn temperature_c(&mut self, which: Call, sensor: sys::rsmi_temperature_type_t) -> Option<f64> {
        let mut milli = 0i64;
        let d = self.device;
        let ok = self.guarded(which, |s| {
            call!(
                s.lib,
                rsmi_dev_temp_metric_get(d, sensor, sys::rsmi_temperature_metric_t_RSMI_TEMP_CURRENT, &mut milli)
            )
        });
        ok.then_some(milli as f64 / 1000.0)
    }

    fn memory_used(&mut self, which: Call, kind: sys::rsmi_memory_type_t) -> Option<f64> {
        let mut used = 0u64;
        let d = self.device;
        let ok = self.guarded(which, |s| call!(s.lib, rsmi_dev_memory_usage_get(d, kind, &mut used)));
        ok.then_some(used as f64)
    }

    fn clock_mhz(&mut self, which: Call, kind: sys::rsmi_clk_type_t) -> Option<f64> {
        // SAFETY: all-zero is a valid value of both plain-data layouts.
        let mut f: Frequencies = unsafe { std::mem::zeroed() };
        let d = self.device;
        let ptr = &mut f as *mut Frequencies as *mut sys::rsmi_frequencies_t;
        if !self.guarded(which, |s| call!(s.lib, rsmi_dev_gpu_clk_freq_get(d, kind, ptr))) {
            return None;
        }
        // SAFETY: the library filled the layout frequencies_v6() names; both are plain data.
        let (num, current, table): (u32, u32, &[u64]) = unsafe {
            if self.frequencies_v6() {
                (f.v6.num_supported, f.v6.current, &f.v6.frequency[..])
            } else {
                (f.v5.num_supported, f.v5.current, &f.v5.frequency[..])
            }
        };
        (current < num && (num as usize) <= table.len()).then(|| table[current as usize] as f64 / 1e6)
    }

    fn socket_power_w(&mut self) -> Option<f64> {
        let mut uw = 0u64;
        let d = self.device;
        let ok = self.guarded(Call::SocketPower, |s| call!(s.lib, rsmi_dev_current_socket_power_get(d, &mut uw)));
        ok.then_some(uw as f64 / 1e6)
    }

    fn average_power_w(&mut self) -> Option<f64> {
        let mut uw = 0u64;
        let d = self.device;
        let ok = self.guarded(Call::AveragePower, |s| call!(s.lib, rsmi_dev_power_ave_get(d, 0, &mut uw)));
        ok.then_some(uw as f64 / 1e6)
    }

    /// (energy in J, the gpu_metrics timestamp in ns) — counter × resolution (µJ per tick).
    fn energy(&mut self) -> Option<(f64, u64)> {
        let (mut ticks, mut resolution_uj, mut stamp) = (0u64, 0f32, 0u64);
        let d = self.device;
        let ok = self.guarded(Call::Energy, |s| {
            call!(s.lib, rsmi_dev_energy_count_get(d, &mut ticks, &mut resolution_uj, &mut stamp))
        });
        ok.then(|| (ticks as f64 * resolution_uj as f64 / 1e6, stamp))
    }
}

impl TelemetrySource for RocmSmi {
    /// ROCm SMI reads the dGPU tables (v1_x); on an APU its power calls answer NOT_SUPPORTED
    /// and these fields stay empty.
    fn power_fields(&self) -> Vec<PowerField> {
        vec![
            PowerField::new(
                Field::PowerW,
                "ROCm SMI rsmi_dev_current_socket_power_get",
                PowerScope::GpuSocket,
                PowerKind::Instant,
                None,
            ),
            PowerField::new(
                Field::PowerAvgW,
                "ROCm SMI rsmi_dev_power_ave_get",
                PowerScope::GpuSocket,
                PowerKind::Average,
                None,
            ),
        ]
    }

    fn devices_on_host(&self) -> u32 {
        self.on_host
    }

    fn kind(&self) -> SourceKind {
        SourceKind::RocmSmi
    }

    fn describe(&self) -> String {
        let version = self.version.map(|(a, b, c)| format!("{a}.{b}.{c}")).unwrap_or_else(|| "?".into());
        let skipped: Vec<String> =
            ALL_CALLS.iter().filter(|c| self.skip & (1 << **c as u32) != 0).map(|c| format!("{c:?}")).collect();
        let mut s = format!("ROCm SMI {version} ({}) device {}: {}", self.path, self.device, self.name);
        if !skipped.is_empty() {
            s += &format!("; not supported here: {}", skipped.join(", "));
        }
        s
    }

    fn read(&mut self) -> Result<Reading, TelemetryError> {
        let energy = self.energy();
        Ok(Reading {
            busy_pct: self.u32_value(Call::Busy),
            mem_busy_pct: self.u32_value(Call::MemBusy),
            power_w: self.socket_power_w(),
            power_avg_w: self.average_power_w(),
            energy_j: energy.map(|e| e.0),
            gpu_stamp_ns: energy.map(|e| e.1 as f64),
            temp_gpu_c: self.temperature_c(Call::TempEdge, sys::rsmi_temperature_type_t_RSMI_TEMP_TYPE_EDGE),
            temp_hotspot_c: self
                .temperature_c(Call::TempJunction, sys::rsmi_temperature_type_t_RSMI_TEMP_TYPE_JUNCTION),
            temp_mem_c: self.temperature_c(Call::TempMem, sys::rsmi_temperature_type_t_RSMI_TEMP_TYPE_MEMORY),
            gfx_clock_mhz: self.clock_mhz(Call::GfxClock, sys::rsmi_clk_type_t_RSMI_CLK_TYPE_SYS),
            mem_clock_mhz: self.clock_mhz(Call::MemClock, sys::rsmi_clk_type_t_RSMI_CLK_TYPE_MEM),
            vram_used_bytes: self.memory_used(Call::Vram, sys::rsmi_memory_type_t_RSMI_MEM_TYPE_VRAM),
            gtt_used_bytes: self.memory_used(Call::Gtt, sys::rsmi_memory_type_t_RSMI_MEM_TYPE_GTT),
            ..Reading::default()
        })
    }
}

impl Drop for RocmSmi {
    fn drop(&mut self) {
        // SAFETY: init succeeded for this handle, so one shut-down balances it.
        unsafe {
            self.lib.rsmi_shut_down();
        }
    }
}
