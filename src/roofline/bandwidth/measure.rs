//! Measures (or recalls from the day's cache) the bandwidth of a target.
use super::types::{Bandwidth, BandwidthError, DeviceRuntime, Passes, PASSES};
use super::{cache, cpu, cuda, hip, target::Target};

fn hostname() -> String {
    nix::unistd::gethostname().map(|h| h.to_string_lossy().to_string()).unwrap_or_default()
}

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split_once(':').map_or(l, |x| x.1).trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into())
}

fn stamp(target: &Target, device: String, p: Passes) -> Result<Bandwidth, BandwidthError> {
    let mut sorted = p.gb_per_s.clone();
    sorted.sort_by(f64::total_cmp);
    let best = *sorted.last().ok_or(BandwidthError::NoPass)?;
    let median = crate::stats::median(&sorted).unwrap_or(best);
    let now = chrono::Local::now();
    Ok(Bandwidth {
        target: target.clone(),
        gb_per_s: best,
        median_gb_per_s: median,
        passes: sorted.len() as u32,
        buffer_bytes: p.buffer_bytes,
        method: p.method,
        device,
        host: hostname(),
        measured_at: now.to_rfc3339_opts(chrono::SecondsFormat::Secs, false),
        measured_unix: now.timestamp(),
        cached: false,
    })
}

/// The bandwidth of `target`: from the cache when this host measured the same device less than
/// a day ago (unless `fresh`), else measured now and remembered.
pub(crate) fn bandwidth(target: &Target, fresh: bool) -> Result<Bandwidth, BandwidthError> {
    match target {
        Target::Cpu { threads } => {
            let device = cpu_model();
            let key = cache::Key::new(target, &device);
            if let Some(b) = (!fresh).then(|| cache::load(&key)).flatten() {
                return Ok(b);
            }
            let bytes = cpu::buffer_bytes();
            let passes = cpu::measure(*threads, bytes, PASSES)?;
            let b = stamp(
                target,
                device,
                Passes {
                    gb_per_s: passes,
                    buffer_bytes: bytes,
                    method: format!(
                        "host streaming read (glibc memchr, {threads} threads, each over its own first-touched slice)"
                    ),
                },
            )?;
            cache::store(&key, &b);
            Ok(b)
        }
        Target::Cuda { device } => gpu(target, cuda::Runtime::open()?, *device, fresh),
        Target::Hip { device } => gpu(target, hip::Runtime::open()?, *device, fresh),
    }
}

fn gpu(target: &Target, rt: impl DeviceRuntime, device: u32, fresh: bool) -> Result<Bandwidth, BandwidthError> {
    let id = rt.identify(device)?;
    let name = format!("{} ({})", id.name, id.pci_bus_id);
    let key = cache::Key::new(target, &name);
    if let Some(b) = (!fresh).then(|| cache::load(&key)).flatten() {
        return Ok(b);
    }
    let b = stamp(target, name, rt.copy_passes(device, PASSES)?)?;
    cache::store(&key, &b);
    Ok(b)
}

/// A GPU that the CUDA, else the HIP, runtime shows, if any.
pub(crate) fn probe_gpu() -> Option<Target> {
    if cuda::Runtime::open().ok().and_then(|r| r.device_count().ok()).is_some_and(|n| n > 0) {
        return Some(Target::Cuda { device: 0 });
    }
    if hip::Runtime::open().ok().and_then(|r| r.device_count().ok()).is_some_and(|n| n > 0) {
        return Some(Target::Hip { device: 0 });
    }
    None
}
