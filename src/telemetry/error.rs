//! Everything that can go wrong opening or reading a telemetry source, as named conditions the
//! caller can match on ("no AMD device" is a fact about the host, not a failure of abprof).
use std::path::PathBuf;

use super::gpu_metrics::GpuMetricsError;

#[derive(Debug, thiserror::Error)]
pub enum TelemetryError {
    #[error("{library} could not be loaded (tried {tried}): {detail}; install the vendor driver/library, or pick another --telemetry backend")]
    LibraryMissing { library: &'static str, tried: String, detail: String },

    #[error("{library} has no symbol {symbol}, which abprof needs (library too old?)")]
    SymbolMissing { library: &'static str, symbol: &'static str },

    #[error("{call} failed with {name} ({code})")]
    InitFailed { call: &'static str, code: u32, name: String },

    #[error("no AMD GPU found by {library} ({detail}); on a host without amdgpu use --telemetry nvml, cpu or none")]
    NoAmdDevice { library: &'static str, detail: String },

    #[error("{wanted} not opened: {loaded} is already loaded in this process, and AMD SMI sees no device while ROCm SMI shares its process (docs/methodology.md §9.2); use --telemetry {flag} or amdgpu-sysfs")]
    OtherSmiLoaded { wanted: &'static str, loaded: &'static str, flag: &'static str },

    #[error("AMD SMI {version} gives this APU's gpu_metrics table ({revision}) without its APU part (a library before 26.x's apu_metrics, or a layout abprof does not know: it reads 26.x and 27.x), so its socket power would pass for the GPU's: read amdgpu sysfs instead (--telemetry amdgpu-sysfs; auto falls to it)")]
    ApuTableUnplaced { version: String, revision: String },

    #[error("no NVIDIA GPU found by NVML ({detail}); on a host without the NVIDIA driver use --telemetry amd-smi, amdgpu-sysfs, rocm-smi, cpu or none")]
    NoNvidiaDevice { detail: String },

    #[error(
        "no amdgpu card with gpu_busy_percent under {root}/class/drm; point --sysfs-root at a sysfs tree that has one"
    )]
    NoAmdgpuCard { root: PathBuf },

    #[error("device index {index} is out of range: {backend} sees {count} device(s); pass --device 0..{count}")]
    NoSuchDevice { backend: &'static str, index: u32, count: u32 },

    #[error("{call} failed with {name} ({code})")]
    Call { call: &'static str, code: u32, name: String },

    #[error("reading {}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },

    #[error("{}: cannot parse {what} from {text:?}", path.display())]
    Parse { path: PathBuf, what: &'static str, text: String },

    #[error("{}: {source}", path.display())]
    GpuMetrics { path: PathBuf, source: GpuMetricsError },

    #[error("process {pid} not found (/proc/{pid}/stat is gone); it exited, or pass the server's pid")]
    NoSuchProcess { pid: i32 },

    #[error("--telemetry cpu needs the pid of the process to watch (--pid)")]
    CpuNeedsPid,
}
