//! The CUDA runtime (`libcudart`), opened at run time, for the device-to-device copy bandwidth.
use super::runtime::device_runtime;
use super::types::{BandwidthError, DeviceIdentity};
use abprof_sys::cudart as sys;
use std::ffi::CStr;

/// `ABPROF_CUDART_LIB` (a path), when set, is the only one tried; else the loader's search path, then
/// the toolkit's usual folders.
const NAMES: &[&str] = &["libcudart.so", "libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0"];

fn candidates() -> Result<Vec<String>, String> {
    let dirs = ["CUDA_HOME", "CUDA_PATH"]
        .iter()
        .filter_map(|v| std::env::var(v).ok())
        .map(|d| format!("{d}/lib64"))
        .chain(["/usr/local/cuda/lib64".to_string(), "/usr/local/cuda/targets/x86_64-linux/lib".to_string()]);
    crate::dylib::candidates("ABPROF_CUDART_LIB", NAMES, &dirs.collect::<Vec<_>>())
}

device_runtime! {
    runtime: "CUDA", library: sys::CudartLib, identify: [cudaDeviceGetPCIBusId, cudaGetDeviceProperties],
    env: "ABPROF_CUDART_LIB", candidates: candidates, code: sys::cudaError_t, success: sys::cudaError_cudaSuccess,
    no_device: sys::cudaError_cudaErrorNoDevice | sys::cudaError_cudaErrorInsufficientDriver,
    memcpy_kind: sys::cudaMemcpyKind_cudaMemcpyDeviceToDevice, error_name: cudaGetErrorName, reset: cudaDeviceReset,
    calls: [cudaGetDeviceCount, cudaSetDevice, cudaMemGetInfo, cudaMalloc, cudaFree, cudaMemset, cudaMemcpy],
    events: [cudaEventCreate, cudaEventRecord, cudaEventSynchronize, cudaEventElapsedTime, cudaEventDestroy],
}

/// Device properties grow between CUDA releases; the name is their first field in every one,
/// so a buffer larger than any release's struct is passed and only the name is read.
const PROPERTIES_BYTES: usize = 16 << 10;

impl Runtime {
    /// The device's name and PCI bus id, once `identify` has found the device.
    fn name_and_bus(&self, device: u32) -> Result<DeviceIdentity, BandwidthError> {
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
}
