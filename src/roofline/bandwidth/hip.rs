//! The HIP runtime (`libamdhip64`), opened at run time, for the device-to-device copy bandwidth.
use super::copy::{copy_passes, DeviceApi};
use super::types::{BandwidthError, CallStatus, DeviceIdentity, DeviceRuntime, Passes};
use abprof_sys::hip as sys;
use std::ffi::{c_void, CStr};

/// `ABPROF_HIP_LIB` (a path) is tried first when set; then the loader's search path, then ROCm's
/// usual folders.
const NAMES: &[&str] = &["libamdhip64.so", "libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5"];

pub(crate) struct Runtime {
    lib: sys::HipLib,
    path: String,
}

fn candidates() -> Vec<String> {
    let dirs =
        std::env::var("ROCM_PATH").ok().map(|d| format!("{d}/lib")).into_iter().chain(["/opt/rocm/lib".to_string()]);
    crate::dylib::candidates("ABPROF_HIP_LIB", NAMES, &dirs.collect::<Vec<_>>())
}

impl Runtime {
    pub(crate) fn open() -> Result<Runtime, BandwidthError> {
        let tried = candidates();
        // SAFETY: the HIP runtime's initialisers only set up its own state.
        let (lib, path) =
            crate::dylib::open_first(&tried, |name| unsafe { sys::HipLib::new(name) }).map_err(|detail| {
                BandwidthError::LibraryMissing {
                    runtime: "HIP",
                    tried: format!("{} names and paths", tried.len()),
                    detail,
                    env: "ABPROF_HIP_LIB",
                }
            })?;
        Ok(Runtime { lib, path })
    }

    fn error_name(&self, code: sys::hipError_t) -> String {
        match &self.lib.hipGetErrorName {
            // SAFETY: the runtime returns a static NUL-terminated string for any code.
            Ok(f) => unsafe { CStr::from_ptr(f(code)) }.to_string_lossy().into_owned(),
            Err(_) => "unnamed HIP error".into(),
        }
    }

    fn check(&self, call: &'static str, code: sys::hipError_t) -> Result<(), BandwidthError> {
        let status = match code {
            sys::hipError_t_hipSuccess => CallStatus::Success,
            sys::hipError_t_hipErrorNoDevice | sys::hipError_t_hipErrorInsufficientDriver => CallStatus::NoDevice,
            _ => CallStatus::Failed,
        };
        status.into_result("HIP", call, i64::from(code), || self.error_name(code))
    }

    fn require(&self) -> Result<(), BandwidthError> {
        let l = &self.lib;
        for (present, symbol) in [
            (l.hipGetDeviceCount.is_ok(), "hipGetDeviceCount"),
            (l.hipSetDevice.is_ok(), "hipSetDevice"),
            (l.hipDeviceGet.is_ok(), "hipDeviceGet"),
            (l.hipDeviceGetName.is_ok(), "hipDeviceGetName"),
            (l.hipDeviceGetPCIBusId.is_ok(), "hipDeviceGetPCIBusId"),
            (l.hipMemGetInfo.is_ok(), "hipMemGetInfo"),
            (l.hipMalloc.is_ok(), "hipMalloc"),
            (l.hipFree.is_ok(), "hipFree"),
            (l.hipMemset.is_ok(), "hipMemset"),
            (l.hipMemcpy.is_ok(), "hipMemcpy"),
            (l.hipEventCreate.is_ok(), "hipEventCreate"),
            (l.hipEventRecord.is_ok(), "hipEventRecord"),
            (l.hipEventSynchronize.is_ok(), "hipEventSynchronize"),
            (l.hipEventElapsedTime.is_ok(), "hipEventElapsedTime"),
            (l.hipEventDestroy.is_ok(), "hipEventDestroy"),
        ] {
            if !present {
                return Err(BandwidthError::SymbolMissing { library: self.path.clone(), symbol });
            }
        }
        Ok(())
    }

    pub(crate) fn device_count(&self) -> Result<u32, BandwidthError> {
        self.require()?;
        let mut n = 0;
        // SAFETY: symbol checked; `n` is a valid out-pointer.
        self.check("hipGetDeviceCount", unsafe { self.lib.hipGetDeviceCount(&mut n) })?;
        Ok(n.max(0) as u32)
    }
}

impl DeviceRuntime for Runtime {
    fn identify(&self, device: u32) -> Result<DeviceIdentity, BandwidthError> {
        let count = self.device_count()?;
        if device >= count {
            return Err(BandwidthError::NoDevice {
                runtime: "HIP",
                device,
                detail: format!("the runtime ({}) shows {count} device(s)", self.path),
            });
        }
        let mut handle: sys::hipDevice_t = 0;
        // SAFETY: symbols checked; each buffer and its length agree, and the runtime
        // NUL-terminates within that length.
        let (name, pci_bus_id) = unsafe {
            self.check("hipDeviceGet", self.lib.hipDeviceGet(&mut handle, device as i32))?;
            let mut name = [0 as std::ffi::c_char; 256];
            self.check("hipDeviceGetName", self.lib.hipDeviceGetName(name.as_mut_ptr(), 256, handle))?;
            let mut bus = [0 as std::ffi::c_char; 64];
            self.check("hipDeviceGetPCIBusId", self.lib.hipDeviceGetPCIBusId(bus.as_mut_ptr(), 64, device as i32))?;
            (
                CStr::from_ptr(name.as_ptr()).to_string_lossy().into_owned(),
                CStr::from_ptr(bus.as_ptr()).to_string_lossy().into_owned(),
            )
        };
        Ok(DeviceIdentity { name, pci_bus_id })
    }

    fn copy_passes(&self, device: u32, passes: u32) -> Result<Passes, BandwidthError> {
        copy_passes(self, device, passes, "hipMemcpy")
    }
}

// SAFETY (every call below): `require` checked each symbol before `identify` or `copy_passes`
// can reach here, and each pointer passed is one the runtime handed out or a valid out-pointer.
impl DeviceApi for Runtime {
    fn set_device(&self, device: u32) -> Result<(), BandwidthError> {
        self.check("hipSetDevice", unsafe { self.lib.hipSetDevice(device as i32) })
    }
    fn free_memory(&self) -> Result<u64, BandwidthError> {
        let (mut free, mut total) = (0usize, 0usize);
        self.check("hipMemGetInfo", unsafe { self.lib.hipMemGetInfo(&mut free, &mut total) })?;
        Ok(free as u64)
    }
    fn alloc(&self, bytes: usize) -> Result<*mut c_void, BandwidthError> {
        let mut p = std::ptr::null_mut();
        self.check("hipMalloc", unsafe { self.lib.hipMalloc(&mut p, bytes) })?;
        Ok(p)
    }
    fn free(&self, ptr: *mut c_void) {
        unsafe { self.lib.hipFree(ptr) };
    }
    fn fill(&self, ptr: *mut c_void, value: u8, bytes: usize) -> Result<(), BandwidthError> {
        self.check("hipMemset", unsafe { self.lib.hipMemset(ptr, i32::from(value), bytes) })
    }
    fn copy(&self, dst: *mut c_void, src: *const c_void, bytes: usize) -> Result<(), BandwidthError> {
        self.check("hipMemcpy", unsafe {
            self.lib.hipMemcpy(dst, src, bytes, sys::hipMemcpyKind_hipMemcpyDeviceToDevice)
        })
    }
    fn event(&self) -> Result<*mut c_void, BandwidthError> {
        let mut e: sys::hipEvent_t = std::ptr::null_mut();
        self.check("hipEventCreate", unsafe { self.lib.hipEventCreate(&mut e) })?;
        Ok(e.cast())
    }
    fn record(&self, event: *mut c_void) -> Result<(), BandwidthError> {
        self.check("hipEventRecord", unsafe { self.lib.hipEventRecord(event.cast(), std::ptr::null_mut()) })
    }
    fn elapsed_ms(&self, start: *mut c_void, stop: *mut c_void) -> Result<f32, BandwidthError> {
        self.check("hipEventSynchronize", unsafe { self.lib.hipEventSynchronize(stop.cast()) })?;
        let mut ms = 0f32;
        self.check("hipEventElapsedTime", unsafe { self.lib.hipEventElapsedTime(&mut ms, start.cast(), stop.cast()) })?;
        Ok(ms)
    }
    fn destroy_event(&self, event: *mut c_void) {
        unsafe { self.lib.hipEventDestroy(event.cast()) };
    }
    fn reset(&self) {
        if let Ok(reset) = &self.lib.hipDeviceReset {
            unsafe { reset() };
        }
    }
}
