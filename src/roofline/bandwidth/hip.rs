//! The HIP runtime (`libamdhip64`), opened at run time, for the device-to-device copy bandwidth.
use super::runtime::device_runtime;
use super::types::{BandwidthError, DeviceIdentity};
use abprof_sys::hip as sys;
use std::ffi::CStr;

/// `ABPROF_HIP_LIB` (a path), when set, is the only one tried; else the loader's search path, then ROCm's
/// usual folders.
const NAMES: &[&str] = &["libamdhip64.so", "libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5"];

fn candidates() -> Result<Vec<String>, String> {
    let dirs =
        std::env::var("ROCM_PATH").ok().map(|d| format!("{d}/lib")).into_iter().chain(["/opt/rocm/lib".to_string()]);
    crate::dylib::candidates("ABPROF_HIP_LIB", NAMES, &dirs.collect::<Vec<_>>())
}

device_runtime! {
    runtime: "HIP", library: sys::HipLib, identify: [hipDeviceGet, hipDeviceGetName, hipDeviceGetPCIBusId],
    env: "ABPROF_HIP_LIB", candidates: candidates, code: sys::hipError_t, success: sys::hipError_t_hipSuccess,
    no_device: sys::hipError_t_hipErrorNoDevice | sys::hipError_t_hipErrorInsufficientDriver,
    memcpy_kind: sys::hipMemcpyKind_hipMemcpyDeviceToDevice, error_name: hipGetErrorName, reset: hipDeviceReset,
    calls: [hipGetDeviceCount, hipSetDevice, hipMemGetInfo, hipMalloc, hipFree, hipMemset, hipMemcpy],
    events: [hipEventCreate, hipEventRecord, hipEventSynchronize, hipEventElapsedTime, hipEventDestroy],
}

impl Runtime {
    /// The device's name and PCI bus id, once `identify` has found the device.
    fn name_and_bus(&self, device: u32) -> Result<DeviceIdentity, BandwidthError> {
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
}
