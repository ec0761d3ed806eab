//! NVML (`libnvidia-ml.so.1`), opened at run time.
//!
//! What NVML's reference and measurements on an H200 (driver 580) show: every value here refreshes
//! at 100 ms (power) or 200 ms (utilization) whatever the read rate; `nvmlDeviceGetPowerUsage` is a
//! 1 s average on Ampere and later, so phases use the instant field `NVML_FI_DEV_POWER_INSTANT`;
//! the energy counter costs ~4 ms a call, so it is read at a low rate (`energy_every`); and the
//! driver keeps ~2.4 s of 20 ms power samples, which `drain_driver_power` collects.
use std::ffi::CStr;
use std::time::Duration;

use abprof_sys::nvml as sys;
use nix::time::ClockId;

use super::power_field::{PowerField, PowerKind, PowerScope};
use super::{DriverPowerSample, Field, Reading, SourceKind, TelemetryError, TelemetrySource};
use crate::clock::mono_ns;

const LIBRARY: &str = "libnvidia-ml";

/// `ABPROF_NVML_LIB` (a path), when set, is the only one tried.
pub(crate) const LIBRARY_CANDIDATES: &[&str] = &["libnvidia-ml.so.1", "libnvidia-ml.so"];

/// The driver's ring holds ~120 power samples; twice that leaves room for slow drains.
const SAMPLE_CAPACITY: usize = 256;

/// Default interval between energy-counter reads (each costs ~4 ms on an H200).
pub(crate) const DEFAULT_ENERGY_EVERY: Duration = Duration::from_secs(1);

/// The one status→error step of an NVML call on the open path: success, or the call named with
/// its return code.
fn nvml_try(call: &'static str, code: sys::nvmlReturn_t) -> Result<(), TelemetryError> {
    if code == sys::nvmlReturn_enum_NVML_SUCCESS {
        return Ok(());
    }
    Err(TelemetryError::Call { call, code, name: return_name(code).into() })
}

/// The short name of an NVML return code, from the constants bindgen generated.
pub(crate) fn return_name(code: sys::nvmlReturn_t) -> &'static str {
    match code {
        sys::nvmlReturn_enum_NVML_SUCCESS => "NVML_SUCCESS",
        sys::nvmlReturn_enum_NVML_ERROR_UNINITIALIZED => "NVML_ERROR_UNINITIALIZED",
        sys::nvmlReturn_enum_NVML_ERROR_INVALID_ARGUMENT => "NVML_ERROR_INVALID_ARGUMENT",
        sys::nvmlReturn_enum_NVML_ERROR_NOT_SUPPORTED => "NVML_ERROR_NOT_SUPPORTED",
        sys::nvmlReturn_enum_NVML_ERROR_NO_PERMISSION => "NVML_ERROR_NO_PERMISSION",
        sys::nvmlReturn_enum_NVML_ERROR_NOT_FOUND => "NVML_ERROR_NOT_FOUND",
        sys::nvmlReturn_enum_NVML_ERROR_INSUFFICIENT_SIZE => "NVML_ERROR_INSUFFICIENT_SIZE",
        sys::nvmlReturn_enum_NVML_ERROR_DRIVER_NOT_LOADED => "NVML_ERROR_DRIVER_NOT_LOADED",
        sys::nvmlReturn_enum_NVML_ERROR_TIMEOUT => "NVML_ERROR_TIMEOUT",
        sys::nvmlReturn_enum_NVML_ERROR_LIBRARY_NOT_FOUND => "NVML_ERROR_LIBRARY_NOT_FOUND",
        sys::nvmlReturn_enum_NVML_ERROR_FUNCTION_NOT_FOUND => "NVML_ERROR_FUNCTION_NOT_FOUND",
        sys::nvmlReturn_enum_NVML_ERROR_GPU_IS_LOST => "NVML_ERROR_GPU_IS_LOST",
        sys::nvmlReturn_enum_NVML_ERROR_LIB_RM_VERSION_MISMATCH => "NVML_ERROR_LIB_RM_VERSION_MISMATCH",
        sys::nvmlReturn_enum_NVML_ERROR_NO_DATA => "NVML_ERROR_NO_DATA",
        sys::nvmlReturn_enum_NVML_ERROR_GPU_NOT_FOUND => "NVML_ERROR_GPU_NOT_FOUND",
        sys::nvmlReturn_enum_NVML_ERROR_UNKNOWN => "NVML_ERROR_UNKNOWN",
        _ => "NVML return code unknown to this header",
    }
}

/// The library, loaded but not initialised.
pub struct NvmlLibrary {
    lib: sys::NvmlLib,
    path: String,
}

impl NvmlLibrary {
    pub fn load() -> Result<NvmlLibrary, TelemetryError> {
        let candidates = crate::dylib::candidates("ABPROF_NVML_LIB", LIBRARY_CANDIDATES, &[]).map_err(|detail| {
            TelemetryError::LibraryMissing { library: LIBRARY, tried: "ABPROF_NVML_LIB".into(), detail }
        })?;
        Self::load_from(&candidates.iter().map(String::as_str).collect::<Vec<_>>())
    }

    pub fn load_from(candidates: &[&str]) -> Result<NvmlLibrary, TelemetryError> {
        // SAFETY: libnvidia-ml's initialisers only set up its own state.
        match crate::dylib::open_first(candidates, |name| unsafe { sys::NvmlLib::new(name) }) {
            Ok((lib, path)) => Ok(NvmlLibrary { lib, path }),
            Err(detail) => {
                Err(TelemetryError::LibraryMissing { library: LIBRARY, tried: candidates.join(", "), detail })
            }
        }
    }

    /// `nvmlInit_v2`, then device `index`. No driver or no GPU is `NoNvidiaDevice`.
    pub fn init(self, index: u32, energy_every: Option<Duration>) -> Result<Nvml, TelemetryError> {
        for (present, symbol) in [
            (self.lib.nvmlInit_v2.is_ok(), "nvmlInit_v2"),
            (self.lib.nvmlShutdown.is_ok(), "nvmlShutdown"),
            (self.lib.nvmlDeviceGetCount_v2.is_ok(), "nvmlDeviceGetCount_v2"),
            (self.lib.nvmlDeviceGetHandleByIndex_v2.is_ok(), "nvmlDeviceGetHandleByIndex_v2"),
        ] {
            if !present {
                return Err(TelemetryError::SymbolMissing { library: LIBRARY, symbol });
            }
        }
        // SAFETY: symbol checked above; no arguments.
        let code = unsafe { self.lib.nvmlInit_v2() };
        if code == sys::nvmlReturn_enum_NVML_ERROR_DRIVER_NOT_LOADED
            || code == sys::nvmlReturn_enum_NVML_ERROR_GPU_NOT_FOUND
        {
            return Err(TelemetryError::NoNvidiaDevice {
                detail: format!("nvmlInit_v2 returned {} ({code})", return_name(code)),
            });
        }
        if code != sys::nvmlReturn_enum_NVML_SUCCESS {
            return Err(TelemetryError::InitFailed { call: "nvmlInit_v2", code, name: return_name(code).into() });
        }
        // From here on, Drop shuts NVML down again on every exit path.
        let mut nvml = Nvml {
            lib: self.lib,
            path: self.path,
            device: Device(std::ptr::null_mut()),
            index,
            on_host: 0,
            name: String::new(),
            energy_every,
            last_energy_read_ns: None,
            skip: 0,
            samples: Vec::with_capacity(SAMPLE_CAPACITY),
            last_seen_us: 0,
            driver_clock: None,
        };
        let mut count = 0u32;
        // SAFETY: count is a valid out-pointer.
        nvml_try("nvmlDeviceGetCount_v2", unsafe { nvml.lib.nvmlDeviceGetCount_v2(&mut count) })?;
        if count == 0 {
            return Err(TelemetryError::NoNvidiaDevice { detail: "nvmlDeviceGetCount_v2 reports 0 devices".into() });
        }
        if index >= count {
            return Err(TelemetryError::NoSuchDevice { backend: "nvml", index, count });
        }
        nvml.on_host = count;
        let mut handle: sys::nvmlDevice_t = std::ptr::null_mut();
        // SAFETY: handle is a valid out-pointer.
        nvml_try("nvmlDeviceGetHandleByIndex_v2", unsafe {
            nvml.lib.nvmlDeviceGetHandleByIndex_v2(index, &mut handle)
        })?;
        nvml.device = Device(handle);
        nvml.name = nvml.device_name().unwrap_or_else(|| "NVIDIA GPU".into());
        Ok(nvml)
    }
}

/// An NVML device handle. NVML handles are process-wide and the library is thread-safe, so
/// moving one to the sampler thread is sound.
struct Device(sys::nvmlDevice_t);
// SAFETY: see above; the handle is an opaque token, never dereferenced by abprof.
unsafe impl Send for Device {}

/// Which clock the driver's sample timestamps are on, found from the newest sample on first use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DriverClock {
    Realtime,
    Monotonic,
}

pub struct Nvml {
    lib: sys::NvmlLib,
    path: String,
    device: Device,
    index: u32,
    /// Devices nvmlDeviceGetCount_v2 counts.
    on_host: u32,
    name: String,
    energy_every: Option<Duration>,
    last_energy_read_ns: Option<u64>,
    skip: u32,
    samples: Vec<sys::nvmlSample_t>,
    last_seen_us: u64,
    driver_clock: Option<DriverClock>,
}

#[derive(Debug, Clone, Copy)]
enum Call {
    Utilization,
    InstantPower,
    AveragePower,
    Energy,
    Temperature,
    GfxClock,
    MemClock,
    Memory,
    Samples,
}

const ALL_CALLS: [Call; 9] = [
    Call::Utilization,
    Call::InstantPower,
    Call::AveragePower,
    Call::Energy,
    Call::Temperature,
    Call::GfxClock,
    Call::MemClock,
    Call::Memory,
    Call::Samples,
];

macro_rules! call {
    ($lib:expr, $sym:ident ( $($arg:expr),* )) => {
        match $lib.$sym.as_ref() {
            // SAFETY: every argument is a plain value, the device handle, or a pointer to a live local.
            Ok(f) => Some(unsafe { f($($arg),*) }),
            Err(_) => None,
        }
    };
}

/// An NVML value union read per its type tag.
fn value_as_f64(kind: sys::nvmlValueType_t, v: sys::nvmlValue_t) -> Option<f64> {
    // SAFETY: the member read is the one `kind` names.
    unsafe {
        Some(match kind {
            sys::nvmlValueType_enum_NVML_VALUE_TYPE_DOUBLE => v.dVal,
            sys::nvmlValueType_enum_NVML_VALUE_TYPE_UNSIGNED_INT => v.uiVal as f64,
            sys::nvmlValueType_enum_NVML_VALUE_TYPE_UNSIGNED_LONG => v.ulVal as f64,
            sys::nvmlValueType_enum_NVML_VALUE_TYPE_UNSIGNED_LONG_LONG => v.ullVal as f64,
            sys::nvmlValueType_enum_NVML_VALUE_TYPE_SIGNED_LONG_LONG => v.sllVal as f64,
            sys::nvmlValueType_enum_NVML_VALUE_TYPE_SIGNED_INT => v.siVal as f64,
            sys::nvmlValueType_enum_NVML_VALUE_TYPE_UNSIGNED_SHORT => v.usVal as f64,
            _ => return None,
        })
    }
}

fn realtime_ns() -> u64 {
    crate::clock::read(ClockId::CLOCK_REALTIME)
}

impl Nvml {
    fn device_name(&self) -> Option<String> {
        let mut buf = [0 as std::ffi::c_char; sys::NVML_DEVICE_NAME_V2_BUFFER_SIZE as usize];
        let code = call!(self.lib, nvmlDeviceGetName(self.device.0, buf.as_mut_ptr(), buf.len() as u32))?;
        (code == sys::nvmlReturn_enum_NVML_SUCCESS).then(|| {
            buf[buf.len() - 1] = 0;
            // SAFETY: NUL-terminated by NVML, and by us at the end.
            unsafe { CStr::from_ptr(buf.as_ptr()) }.to_string_lossy().into_owned()
        })
    }

    /// Runs a call unless it answered NOT_SUPPORTED before (or its symbol is missing).
    fn guarded(&mut self, which: Call, run: impl FnOnce(&Self) -> Option<sys::nvmlReturn_t>) -> bool {
        let bit = 1u32 << which as u32;
        if self.skip & bit != 0 {
            return false;
        }
        match run(self) {
            Some(sys::nvmlReturn_enum_NVML_SUCCESS) => true,
            Some(sys::nvmlReturn_enum_NVML_ERROR_NOT_SUPPORTED)
            | Some(sys::nvmlReturn_enum_NVML_ERROR_FUNCTION_NOT_FOUND)
            | None => {
                self.skip |= bit;
                false
            }
            Some(_) => false,
        }
    }

    fn instant_power_w(&mut self) -> Option<f64> {
        // SAFETY: nvmlFieldValue_t is plain data; all-zero is valid before the id is set.
        let mut field: sys::nvmlFieldValue_t = unsafe { std::mem::zeroed() };
        field.fieldId = sys::NVML_FI_DEV_POWER_INSTANT;
        let d = self.device.0;
        if !self.guarded(Call::InstantPower, |s| call!(s.lib, nvmlDeviceGetFieldValues(d, 1, &mut field))) {
            return None;
        }
        if field.nvmlReturn != sys::nvmlReturn_enum_NVML_SUCCESS {
            if field.nvmlReturn == sys::nvmlReturn_enum_NVML_ERROR_NOT_SUPPORTED {
                self.skip |= 1 << Call::InstantPower as u32;
            }
            return None;
        }
        value_as_f64(field.valueType, field.value).map(|mw| mw / 1000.0)
    }

    fn energy_j(&mut self) -> Option<f64> {
        let every = self.energy_every?;
        let now = mono_ns();
        if self.last_energy_read_ns.is_some_and(|t| now - t < every.as_nanos() as u64) {
            return None;
        }
        self.last_energy_read_ns = Some(now);
        let mut mj = 0u64;
        let d = self.device.0;
        let ok = self.guarded(Call::Energy, |s| call!(s.lib, nvmlDeviceGetTotalEnergyConsumption(d, &mut mj)));
        ok.then_some(mj as f64 / 1000.0)
    }

    fn driver_us_to_mono_ns(&mut self, driver_us: u64) -> u64 {
        let (mono, real) = (mono_ns(), realtime_ns());
        let clock = *self.driver_clock.get_or_insert_with(|| {
            // Whichever clock puts the newest sample in the last ten seconds is the driver's.
            let ts = driver_us.saturating_mul(1000);
            if real.abs_diff(ts) < 10_000_000_000 {
                DriverClock::Realtime
            } else {
                DriverClock::Monotonic
            }
        });
        match clock {
            DriverClock::Realtime => (driver_us * 1000).saturating_sub(real - mono),
            DriverClock::Monotonic => driver_us * 1000,
        }
    }
}

impl TelemetrySource for Nvml {
    fn power_fields(&self) -> Vec<PowerField> {
        vec![
            PowerField::new(
                Field::PowerW,
                "NVML field NVML_FI_DEV_POWER_INSTANT",
                PowerScope::GpuBoard,
                PowerKind::Instant,
                None,
            ),
            PowerField::new(Field::PowerAvgW, "NVML GetPowerUsage", PowerScope::GpuBoard, PowerKind::Average, None),
        ]
    }

    fn devices_on_host(&self) -> u32 {
        self.on_host
    }

    fn kind(&self) -> SourceKind {
        SourceKind::Nvml
    }

    fn describe(&self) -> String {
        let skipped: Vec<String> =
            ALL_CALLS.iter().filter(|c| self.skip & (1 << **c as u32) != 0).map(|c| format!("{c:?}")).collect();
        let energy = match self.energy_every {
            Some(d) => format!("energy counter every {} ms", d.as_millis()),
            None => "energy counter off".into(),
        };
        let mut s = format!("NVML ({}) device {}: {}; {energy}", self.path, self.index, self.name);
        if let Some(clock) = self.driver_clock {
            s += &format!("; driver sample clock {clock:?}");
        }
        if !skipped.is_empty() {
            s += &format!("; not supported here: {}", skipped.join(", "));
        }
        s
    }

    fn read(&mut self) -> Result<Reading, TelemetryError> {
        let d = self.device.0;
        let mut r = Reading::default();
        let mut util = sys::nvmlUtilization_t { gpu: 0, memory: 0 };
        if self.guarded(Call::Utilization, |s| call!(s.lib, nvmlDeviceGetUtilizationRates(d, &mut util))) {
            r.busy_pct = Some(util.gpu as f64);
            r.mem_busy_pct = Some(util.memory as f64);
        }
        r.power_w = self.instant_power_w();
        let mut mw = 0u32;
        if self.guarded(Call::AveragePower, |s| call!(s.lib, nvmlDeviceGetPowerUsage(d, &mut mw))) {
            r.power_avg_w = Some(mw as f64 / 1000.0);
        }
        r.energy_j = self.energy_j();
        let mut temp = 0u32;
        if self.guarded(Call::Temperature, |s| {
            call!(s.lib, nvmlDeviceGetTemperature(d, sys::nvmlTemperatureSensors_enum_NVML_TEMPERATURE_GPU, &mut temp))
        }) {
            r.temp_gpu_c = Some(temp as f64);
        }
        let mut mhz = 0u32;
        if self.guarded(Call::GfxClock, |s| {
            call!(s.lib, nvmlDeviceGetClockInfo(d, sys::nvmlClockType_enum_NVML_CLOCK_GRAPHICS, &mut mhz))
        }) {
            r.gfx_clock_mhz = Some(mhz as f64);
        }
        if self.guarded(Call::MemClock, |s| {
            call!(s.lib, nvmlDeviceGetClockInfo(d, sys::nvmlClockType_enum_NVML_CLOCK_MEM, &mut mhz))
        }) {
            r.mem_clock_mhz = Some(mhz as f64);
        }
        let mut mem = sys::nvmlMemory_t { total: 0, free: 0, used: 0 };
        if self.guarded(Call::Memory, |s| call!(s.lib, nvmlDeviceGetMemoryInfo(d, &mut mem))) {
            r.vram_used_bytes = Some(mem.used as f64);
        }
        Ok(r)
    }

    fn drain_driver_power(&mut self, out: &mut Vec<DriverPowerSample>) -> Result<(), TelemetryError> {
        let d = self.device.0;
        let mut kind: sys::nvmlValueType_t = 0;
        let mut count = SAMPLE_CAPACITY as u32;
        let last_seen = self.last_seen_us;
        let buf = self.samples.as_mut_ptr();
        let code = match self.lib.nvmlDeviceGetSamples.as_ref() {
            // SAFETY: buf has capacity for `count` samples; NVML writes at most `count` and
            // reports how many it wrote.
            Ok(f) => unsafe {
                f(d, sys::nvmlSamplingType_enum_NVML_TOTAL_POWER_SAMPLES, last_seen, &mut kind, &mut count, buf)
            },
            Err(_) => {
                self.skip |= 1 << Call::Samples as u32;
                return Ok(());
            }
        };
        match code {
            sys::nvmlReturn_enum_NVML_SUCCESS => {}
            // Nothing new since last_seen.
            sys::nvmlReturn_enum_NVML_ERROR_NOT_FOUND => return Ok(()),
            sys::nvmlReturn_enum_NVML_ERROR_NOT_SUPPORTED => {
                self.skip |= 1 << Call::Samples as u32;
                return Ok(());
            }
            _ => {
                return Err(TelemetryError::Call { call: "nvmlDeviceGetSamples", code, name: return_name(code).into() })
            }
        }
        // SAFETY: NVML initialised the first `count` entries (count <= capacity).
        unsafe { self.samples.set_len((count as usize).min(SAMPLE_CAPACITY)) };
        let fresh: Vec<(u64, f64)> = self
            .samples
            .iter()
            .filter(|s| s.timeStamp > last_seen)
            .filter_map(|s| value_as_f64(kind, s.sampleValue).map(|mw| (s.timeStamp, mw / 1000.0)))
            .collect();
        self.samples.clear();
        for (driver_us, power_w) in fresh {
            self.last_seen_us = self.last_seen_us.max(driver_us);
            let mono_ns = self.driver_us_to_mono_ns(driver_us);
            out.push(DriverPowerSample { mono_ns, driver_us, power_w });
        }
        Ok(())
    }
}

impl Drop for Nvml {
    fn drop(&mut self) {
        // SAFETY: nvmlInit_v2 succeeded for this handle; one shutdown balances it.
        unsafe {
            self.lib.nvmlShutdown();
        }
    }
}
