//! Device memory bandwidth as a device-to-device copy (docs/methodology.md §18): two buffers,
//! timed with the runtime's events around a burst of copies. The one algorithm for CUDA and HIP;
//! each runtime supplies the calls through [`DeviceApi`].
use super::types::{human_bytes, BandwidthError, Passes};
use std::ffi::c_void;

/// The runtime calls a copy measurement makes, each checked.
pub(crate) trait DeviceApi {
    fn set_device(&self, device: u32) -> Result<(), BandwidthError>;
    fn free_memory(&self) -> Result<u64, BandwidthError>;
    fn alloc(&self, bytes: usize) -> Result<*mut c_void, BandwidthError>;
    fn free(&self, ptr: *mut c_void);
    fn fill(&self, ptr: *mut c_void, value: u8, bytes: usize) -> Result<(), BandwidthError>;
    fn copy(&self, dst: *mut c_void, src: *const c_void, bytes: usize) -> Result<(), BandwidthError>;
    fn event(&self) -> Result<*mut c_void, BandwidthError>;
    fn record(&self, event: *mut c_void) -> Result<(), BandwidthError>;
    /// Waits for `stop`, then the milliseconds between the two events.
    fn elapsed_ms(&self, start: *mut c_void, stop: *mut c_void) -> Result<f32, BandwidthError>;
    fn destroy_event(&self, event: *mut c_void);
    /// Destroys the context the measurement created, so abprof holds no device memory while the
    /// study's servers run.
    fn reset(&self);
}

/// Copies per timed pass: long enough (≥ 10 ms on a 5 TB/s device) for the events' resolution.
const COPIES_PER_PASS: u32 = 24;

/// A device buffer, freed on every exit path.
struct Buffer<'a, A: DeviceApi> {
    api: &'a A,
    ptr: *mut c_void,
}

impl<A: DeviceApi> Drop for Buffer<'_, A> {
    fn drop(&mut self) {
        self.api.free(self.ptr);
    }
}

/// Resets the device once everything below it is freed.
struct Reset<'a, A: DeviceApi>(&'a A);

impl<A: DeviceApi> Drop for Reset<'_, A> {
    fn drop(&mut self) {
        self.0.reset();
    }
}

struct Event<'a, A: DeviceApi> {
    api: &'a A,
    ptr: *mut c_void,
}

impl<A: DeviceApi> Drop for Event<'_, A> {
    fn drop(&mut self) {
        self.api.destroy_event(self.ptr);
    }
}

/// The size of each of the two buffers: 1 GiB, or an eighth of the free memory on a smaller device.
fn buffer_bytes(free: u64) -> u64 {
    (free / 8).min(1 << 30) & !((1 << 20) - 1)
}

pub(crate) fn copy_passes(
    api: &impl DeviceApi,
    device: u32,
    passes: u32,
    runtime_call: &str,
) -> Result<Passes, BandwidthError> {
    api.set_device(device)?;
    // Declared first, so dropped last: after the buffers and events, on every exit path.
    let _reset = Reset(api);
    let bytes = buffer_bytes(api.free_memory()?);
    if bytes < 64 << 20 {
        return Err(BandwidthError::DeviceMemory(format!(
            "device {device} has {} free: too little for a copy measurement",
            human_bytes(8.0 * bytes as f64)
        )));
    }
    let n = bytes as usize;
    let src = Buffer { api, ptr: api.alloc(n)? };
    let dst = Buffer { api, ptr: api.alloc(n)? };
    api.fill(src.ptr, 1, n)?;
    api.fill(dst.ptr, 0, n)?;
    let start = Event { api, ptr: api.event()? };
    let stop = Event { api, ptr: api.event()? };
    let mut gb_per_s = Vec::with_capacity(passes as usize);
    // One untimed pass first: clocks ramp up and first-use costs fall outside the figures.
    for pass in 0..=passes {
        api.record(start.ptr)?;
        for _ in 0..COPIES_PER_PASS {
            api.copy(dst.ptr, src.ptr, n)?;
        }
        api.record(stop.ptr)?;
        let ms = f64::from(api.elapsed_ms(start.ptr, stop.ptr)?);
        if pass > 0 && ms > 0.0 {
            // A copy reads and writes each byte: both count, as the runtimes' own bandwidth tests count them.
            gb_per_s.push(2.0 * bytes as f64 * f64::from(COPIES_PER_PASS) / (ms / 1e3) / 1e9);
        }
    }
    Ok(Passes {
        gb_per_s,
        buffer_bytes: bytes,
        method: format!(
            "{runtime_call} device to device, {COPIES_PER_PASS} copies a pass, read + written bytes counted"
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_are_a_gib_or_an_eighth_of_free_memory_in_whole_mib() {
        assert_eq!(buffer_bytes(140 << 30), 1 << 30);
        assert_eq!(buffer_bytes(4 << 30), 512 << 20);
        assert_eq!(buffer_bytes((1 << 30) + 12345) % (1 << 20), 0);
    }
}
