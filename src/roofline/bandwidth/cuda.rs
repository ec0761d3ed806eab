//! The CUDA runtime (`libcudart`), opened at run time, for the device-to-device copy bandwidth.
use super::copy::{copy_passes, DeviceApi};
use super::types::{BandwidthError, CallStatus, DeviceIdentity, DeviceRuntime, Passes};
use abprof_sys::cudart as sys;
use std::ffi::{c_void, CStr};

/// `ABPROF_CUDART_LIB` (a path) is tried first when set; then the loader's search path, then
/// the toolkit's usual folders.
const NAMES: &[&str] = &["libcudart.so", "libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0"];

pub(crate) struct Runtime {
    lib: sys::CudartLib,
    path: String,
}

fn candidates() -> Vec<String> {
    let dirs = ["CUDA_HOME", "CUDA_PATH"]
        .iter()
        .filter_map(|v| std::env::var(v).ok())
        .map(|d| format!("{d}/lib64"))
        .chain(["/usr/local/cuda/lib64".to_string(), "/usr/local/cuda/targets/x86_64-linux/lib".to_string()]);
    crate::dylib::candidates("ABPROF_CUDART_LIB", NAMES, &dirs.collect::<Vec<_>>())
}

impl Runtime {
    pub(crate) fn open() -> Result<Runtime, BandwidthError> {
        let tried = candidates();
        // SAFETY: the CUDA runtime's initialisers only set up its own state.
        let (lib, path) =
            crate::dylib::open_first(&tried, |name| unsafe { sys::CudartLib::new(name) }).map_err(|detail| {
                BandwidthError::LibraryMissing {
                    runtime: "CUDA",
                    tried: format!("{} names and paths", tried.len()),
                    detail,
                    env: "ABPROF_CUDART_LIB",
                }
            })?;
        Ok(Runtime { lib, path })
    }

    fn error_name(&self, code: sys::cudaError_t) -> String {
        match &self.lib.cudaGetErrorName {
            // SAFETY: the runtime returns a static NUL-terminated string for any code.
            Ok(f) => unsafe { CStr::from_ptr(f(code)) }.to_string_lossy().into_owned(),
            Err(_) => "unnamed CUDA error".into(),
        }
    }

    fn check(&self, call: &'static str, code: sys::cudaError_t) -> Result<(), BandwidthError> {
        let status = match code {
            sys::cudaError_cudaSuccess => CallStatus::Success,
            sys::cudaError_cudaErrorNoDevice | sys::cudaError_cudaErrorInsufficientDriver => CallStatus::NoDevice,
            _ => CallStatus::Failed,
        };
        status.into_result("CUDA", call, i64::from(code), || self.error_name(code))
    }

    fn require(&self) -> Result<(), BandwidthError> {
        let l = &self.lib;
        for (present, symbol) in [
            (l.cudaGetDeviceCount.is_ok(), "cudaGetDeviceCount"),
            (l.cudaSetDevice.is_ok(), "cudaSetDevice"),
            (l.cudaMemGetInfo.is_ok(), "cudaMemGetInfo"),
            (l.cudaMalloc.is_ok(), "cudaMalloc"),
            (l.cudaFree.is_ok(), "cudaFree"),
            (l.cudaMemset.is_ok(), "cudaMemset"),
            (l.cudaMemcpy.is_ok(), "cudaMemcpy"),
            (l.cudaEventCreate.is_ok(), "cudaEventCreate"),
            (l.cudaEventRecord.is_ok(), "cudaEventRecord"),
            (l.cudaEventSynchronize.is_ok(), "cudaEventSynchronize"),
            (l.cudaEventElapsedTime.is_ok(), "cudaEventElapsedTime"),
            (l.cudaEventDestroy.is_ok(), "cudaEventDestroy"),
            (l.cudaDeviceGetPCIBusId.is_ok(), "cudaDeviceGetPCIBusId"),
            (l.cudaGetDeviceProperties.is_ok(), "cudaGetDeviceProperties"),
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
        self.check("cudaGetDeviceCount", unsafe { self.lib.cudaGetDeviceCount(&mut n) })?;
        Ok(n.max(0) as u32)
    }
}

/// Device properties grow between CUDA releases; the name is their first field in every one,
/// so a buffer larger than any release's struct is passed and only the name is read.
const PROPERTIES_BYTES: usize = 16 << 10;

impl DeviceRuntime for Runtime {
    fn identify(&self, device: u32) -> Result<DeviceIdentity, BandwidthError> {
        let count = self.device_count()?;
        if device >= count {
            return Err(BandwidthError::NoDevice {
                runtime: "CUDA",
                device,
                detail: format!("the runtime ({}) shows {count} device(s)", self.path),
            });
        }
        let mut props = vec![0u64; PROPERTIES_BYTES / 8];
        // SAFETY: symbol checked; the buffer is larger than any cudaDeviceProp and 8-aligned.
        self.check("cudaGetDeviceProperties", unsafe {
            self.lib.cudaGetDeviceProperties(props.as_mut_ptr().cast(), device as i32)
        })?;
        let bytes: Vec<u8> = props.iter().flat_map(|w| w.to_ne_bytes()).take(256).collect();
        let name = CStr::from_bytes_until_nul(&bytes)
            .map_or_else(|_| "CUDA device".into(), |c| c.to_string_lossy().into_owned());
        let mut bus = [0 as std::ffi::c_char; 64];
        // SAFETY: symbol checked; the buffer and its length agree.
        self.check("cudaDeviceGetPCIBusId", unsafe {
            self.lib.cudaDeviceGetPCIBusId(bus.as_mut_ptr(), 64, device as i32)
        })?;
        // SAFETY: the runtime NUL-terminates within the length given.
        let pci_bus_id = unsafe { CStr::from_ptr(bus.as_ptr()) }.to_string_lossy().into_owned();
        Ok(DeviceIdentity { name, pci_bus_id })
    }

    fn copy_passes(&self, device: u32, passes: u32) -> Result<Passes, BandwidthError> {
        copy_passes(self, device, passes, "cudaMemcpy")
    }
}

// SAFETY (every call below): `require` checked each symbol before `identify` or `copy_passes`
// can reach here, and each pointer passed is one the runtime handed out or a valid out-pointer.
impl DeviceApi for Runtime {
    fn set_device(&self, device: u32) -> Result<(), BandwidthError> {
        self.check("cudaSetDevice", unsafe { self.lib.cudaSetDevice(device as i32) })
    }
    fn free_memory(&self) -> Result<u64, BandwidthError> {
        let (mut free, mut total) = (0usize, 0usize);
        self.check("cudaMemGetInfo", unsafe { self.lib.cudaMemGetInfo(&mut free, &mut total) })?;
        Ok(free as u64)
    }
    fn alloc(&self, bytes: usize) -> Result<*mut c_void, BandwidthError> {
        let mut p = std::ptr::null_mut();
        self.check("cudaMalloc", unsafe { self.lib.cudaMalloc(&mut p, bytes) })?;
        Ok(p)
    }
    fn free(&self, ptr: *mut c_void) {
        unsafe { self.lib.cudaFree(ptr) };
    }
    fn fill(&self, ptr: *mut c_void, value: u8, bytes: usize) -> Result<(), BandwidthError> {
        self.check("cudaMemset", unsafe { self.lib.cudaMemset(ptr, i32::from(value), bytes) })
    }
    fn copy(&self, dst: *mut c_void, src: *const c_void, bytes: usize) -> Result<(), BandwidthError> {
        self.check("cudaMemcpy", unsafe {
            self.lib.cudaMemcpy(dst, src, bytes, sys::cudaMemcpyKind_cudaMemcpyDeviceToDevice)
        })
    }
    fn event(&self) -> Result<*mut c_void, BandwidthError> {
        let mut e: sys::cudaEvent_t = std::ptr::null_mut();
        self.check("cudaEventCreate", unsafe { self.lib.cudaEventCreate(&mut e) })?;
        Ok(e.cast())
    }
    fn record(&self, event: *mut c_void) -> Result<(), BandwidthError> {
        self.check("cudaEventRecord", unsafe { self.lib.cudaEventRecord(event.cast(), std::ptr::null_mut()) })
    }
    fn elapsed_ms(&self, start: *mut c_void, stop: *mut c_void) -> Result<f32, BandwidthError> {
        self.check("cudaEventSynchronize", unsafe { self.lib.cudaEventSynchronize(stop.cast()) })?;
        let mut ms = 0f32;
        self.check("cudaEventElapsedTime", unsafe {
            self.lib.cudaEventElapsedTime(&mut ms, start.cast(), stop.cast())
        })?;
        Ok(ms)
    }
    fn destroy_event(&self, event: *mut c_void) {
        unsafe { self.lib.cudaEventDestroy(event.cast()) };
    }
    fn reset(&self) {
        if let Ok(reset) = &self.lib.cudaDeviceReset {
            unsafe { reset() };
        }
    }
}
