//! AMD SMI (`libamd_smi`), opened at run time: ROCm's supported monitoring library, which from
//! AMD SMI 27 (ROCm 10) also decodes the APU metrics tables v2_4 and v3_0 (docs/methodology.md
//! §9.2). One processor handle per source; every value comes from the library's unified
//! `amdsmi_gpu_metrics_t` (and its `apu_metrics` on an APU), the energy counter where the device
//! has one, and the memory-usage call.
//!
//! Never loaded beside ROCm SMI (`one_smi`); its metrics cache is set to 0 ms before it loads, so
//! every read reaches the driver; on libraries older than 26.2 (ROCm 7.2) every call holds one
//! process-wide lock, because those are not thread-safe.
use std::ffi::CStr;
use std::sync::{Mutex, MutexGuard};

use abprof_sys::amd_smi as sys;

use super::one_smi::{load_exclusive, SmiLibrary};
use super::power_field::{PowerField, PowerKind, PowerScope};
use super::{Field, Reading, SourceKind, TelemetryError, TelemetrySource};

const LIBRARY: &str = "libamd_smi";

/// Sonames in the order they are tried: AMD SMI 27 (ROCm 10), 26 (ROCm 7.x), 25 and 24 (ROCm
/// 6.x), the dev link, and ROCm's own install folder. `ABPROF_AMDSMI_LIB` (a path), when set, is the only one tried.
pub(crate) const LIBRARY_CANDIDATES: &[&str] = &[
    "libamd_smi.so.27",
    "libamd_smi.so.26",
    "libamd_smi.so.25",
    "libamd_smi.so.24",
    "libamd_smi.so",
    "/opt/rocm/lib/libamd_smi.so",
];

/// The library's metrics cache, read from the environment when it loads: abprof reads the table
/// at its own rate and measures how often it changes (§9.2), which a library-side cache would hide.
const METRICS_CACHE_VARIABLE: &str = "AMDSMI_GPU_METRICS_CACHE_MS";

/// The first library version whose calls are thread-safe (AMD SMI 26.2, ROCm 7.2).
const THREAD_SAFE_FROM: (u32, u32) = (26, 2);

/// Serializes every call of a library older than [`THREAD_SAFE_FROM`].
static CALLS: Mutex<()> = Mutex::new(());

/// Bytes handed to `amdsmi_get_gpu_metrics_info`: more than either known layout of
/// `amdsmi_gpu_metrics_t` (26.x 4,720, 27.x 4,736), so a library whose table grew writes into
/// abprof's buffer, never past it.
const TABLE_BUFFER_BYTES: usize = 8192;
const _: () = assert!(std::mem::size_of::<sys::amdsmi_gpu_metrics_t>() <= TABLE_BUFFER_BYTES);

/// The buffer the library fills, aligned as the struct is.
#[repr(C, align(8))]
struct TableBuffer([u8; TABLE_BUFFER_BYTES]);

/// Where a library of `major` keeps the `apu_metrics` pointer in `amdsmi_gpu_metrics_t`
/// (docs/methodology.md §9.2): AMD SMI 27 widened five accumulators to 64 bits, which moved it
/// from 4,712 (26.x: AMD's header at 26.5.0, tests/fixtures/amdsmi/layout-amdsmi-26.5.0.json) to
/// 4,728 (27.x: the bindings in sys/, 27.1.0). Everything abprof reads of a discrete GPU's table
/// lies before offset 80, where both agree. `None`: a major whose layout abprof does not know.
fn apu_pointer_offset(major: u32) -> Option<usize> {
    match major {
        26 => Some(APU_POINTER_OFFSET_26),
        27 => Some(std::mem::offset_of!(sys::amdsmi_gpu_metrics_t, apu_metrics)),
        _ => None,
    }
}

const APU_POINTER_OFFSET_26: usize = 4712;

/// The gpu_metrics format revisions of an APU's table (v2_x, v3_x); a discrete GPU's is v1_x.
fn is_apu_table(m: &sys::amdsmi_gpu_metrics_t) -> bool {
    matches!(m.common_header.format_revision, 2 | 3)
}

/// The unified table in `buf` as a library of `major` laid it out, and a copy of its APU part
/// where the library filled one and abprof knows where its pointer sits.
///
/// # Safety
/// A non-null pointer at the major's offset must point at a live `amdsmi_apu_metrics_t` (the
/// library's thread-local copy, valid until the thread's next call).
unsafe fn place_table(
    buf: &TableBuffer,
    major: Option<u32>,
) -> (sys::amdsmi_gpu_metrics_t, Option<sys::amdsmi_apu_metrics_t>) {
    // SAFETY: the buffer is larger than the struct and aligned as it is; every bit pattern is a
    // valid value of its integer and array fields, and the pointer field is reset below.
    let mut m: sys::amdsmi_gpu_metrics_t = unsafe { std::ptr::read(buf.0.as_ptr().cast()) };
    m.apu_metrics = std::ptr::null_mut();
    let apu = major.and_then(apu_pointer_offset).and_then(|at| {
        // SAFETY: `at` + 8 lies inside the buffer; read_unaligned asks nothing of its alignment.
        let ptr: *const sys::amdsmi_apu_metrics_t = unsafe { std::ptr::read_unaligned(buf.0.as_ptr().add(at).cast()) };
        // SAFETY: the caller's promise.
        (!ptr.is_null()).then(|| unsafe { *ptr })
    });
    (m, apu)
}

/// The library, loaded but not initialised: enough for its version and its status names.
pub struct AmdSmiLibrary {
    lib: sys::AmdSmiLib,
    path: String,
    /// What the metrics cache was set to, and by whom.
    cache: String,
}

/// The short name and text of a status code, as the library words it.
fn status_name(lib: &sys::AmdSmiLib, code: sys::amdsmi_status_t) -> String {
    let mut text: *const std::ffi::c_char = std::ptr::null();
    let named = lib.amdsmi_status_code_to_string.as_ref().ok().is_some_and(|f| {
        // SAFETY: text is a valid out-pointer; the library points it at a static string.
        unsafe { f(code, &mut text) == sys::amdsmi_status_t_AMDSMI_STATUS_SUCCESS && !text.is_null() }
    });
    if named {
        // SAFETY: checked non-null above; the library's strings are NUL-terminated and static.
        unsafe { CStr::from_ptr(text) }.to_string_lossy().into_owned()
    } else {
        format!("AMDSMI status {code}")
    }
}

/// Runs `f` with file descriptor 2 pointed at a temporary file, and returns what was written there
/// (trimmed): `amdsmi_init` prints its own "Exception caught: rsmi_init." where there is no GPU,
/// which would stand beside abprof's one line instead of inside it. Where the descriptor cannot be
/// moved, `f` runs as it is and nothing is kept.
fn with_stderr_kept<T>(f: impl FnOnce() -> T) -> (T, String) {
    use std::io::{Read, Seek, SeekFrom};
    let saved = nix::unistd::dup(std::io::stderr());
    let file = tempfile::tempfile();
    let (Ok(saved), Ok(mut file)) = (saved, file) else { return (f(), String::new()) };
    if nix::unistd::dup2_stderr(&file).is_err() {
        return (f(), String::new());
    }
    let out = f();
    // Put the real stderr back before anything else can write.
    let _ = nix::unistd::dup2_stderr(&saved);
    let mut said = String::new();
    let _ = file.seek(SeekFrom::Start(0)).and_then(|_| file.read_to_string(&mut said));
    (out, said.trim().to_string())
}

/// The one status→error step of an AMD SMI call: success, or the call named with its status.
fn amdsmi_try(lib: &sys::AmdSmiLib, call: &'static str, code: sys::amdsmi_status_t) -> Result<(), TelemetryError> {
    if code == sys::amdsmi_status_t_AMDSMI_STATUS_SUCCESS {
        return Ok(());
    }
    Err(TelemetryError::Call { call, code, name: status_name(lib, code) })
}

impl AmdSmiLibrary {
    /// Loads the first library that opens (see `LIBRARY_CANDIDATES`), unless ROCm SMI is loaded
    /// in this process.
    pub fn load() -> Result<AmdSmiLibrary, TelemetryError> {
        let candidates = crate::dylib::candidates("ABPROF_AMDSMI_LIB", LIBRARY_CANDIDATES, &[]).map_err(|detail| {
            TelemetryError::LibraryMissing { library: LIBRARY, tried: "ABPROF_AMDSMI_LIB".into(), detail }
        })?;
        Self::load_from(&candidates.iter().map(String::as_str).collect::<Vec<_>>())
    }

    /// Loads the first of `candidates` that opens, unless ROCm SMI is loaded in this process.
    pub fn load_from(candidates: &[&str]) -> Result<AmdSmiLibrary, TelemetryError> {
        load_exclusive(SmiLibrary::AmdSmi, || Self::open(candidates))
    }

    fn open(candidates: &[&str]) -> Result<AmdSmiLibrary, TelemetryError> {
        // The library reads its cache setting once, as it loads; a value the user set stays.
        let cache = match std::env::var(METRICS_CACHE_VARIABLE) {
            Ok(v) => format!("metrics cache {v} ms (the user's {METRICS_CACHE_VARIABLE})"),
            Err(_) => {
                std::env::set_var(METRICS_CACHE_VARIABLE, "0");
                format!("metrics cache 0 ms ({METRICS_CACHE_VARIABLE}=0)")
            }
        };
        // SAFETY: loading runs the library's initialisers, which set up C++ statics only.
        match crate::dylib::open_first(candidates, |name| unsafe { sys::AmdSmiLib::new(name) }) {
            Ok((lib, path)) => Ok(AmdSmiLibrary { lib, path, cache }),
            Err(detail) => {
                Err(TelemetryError::LibraryMissing { library: LIBRARY, tried: candidates.join(", "), detail })
            }
        }
    }

    pub fn path(&self) -> &str {
        &self.path
    }

    /// The library's own words for a status code (`amdsmi_status_code_to_string`).
    pub fn status(&self, code: u32) -> String {
        status_name(&self.lib, code)
    }

    /// (major, minor, release) from `amdsmi_get_lib_version`; callable before `amdsmi_init`.
    pub fn version(&self) -> Option<(u32, u32, u32)> {
        let f = self.lib.amdsmi_get_lib_version.as_ref().ok()?;
        // SAFETY: all-zero is a valid amdsmi_version_t (integers and a null pointer).
        let mut v: sys::amdsmi_version_t = unsafe { std::mem::zeroed() };
        // SAFETY: v is a valid out-pointer for the duration of the call.
        (unsafe { f(&mut v) } == sys::amdsmi_status_t_AMDSMI_STATUS_SUCCESS).then_some((v.major, v.minor, v.release))
    }

    /// `amdsmi_init(AMDSMI_INIT_AMD_GPUS)`, then picks the `index`-th GPU over all sockets.
    /// "No AMD device" (no amdgpu driver, or no GPU) is `NoAmdDevice`.
    pub fn init(self, index: u32) -> Result<AmdSmi, TelemetryError> {
        let need = |present: bool, symbol| {
            if present {
                Ok(())
            } else {
                Err(TelemetryError::SymbolMissing { library: LIBRARY, symbol })
            }
        };
        need(self.lib.amdsmi_init.is_ok(), "amdsmi_init")?;
        need(self.lib.amdsmi_shut_down.is_ok(), "amdsmi_shut_down")?;
        need(self.lib.amdsmi_get_socket_handles.is_ok(), "amdsmi_get_socket_handles")?;
        need(self.lib.amdsmi_get_processor_handles.is_ok(), "amdsmi_get_processor_handles")?;
        need(self.lib.amdsmi_get_gpu_metrics_info.is_ok(), "amdsmi_get_gpu_metrics_info")?;
        let version = self.version();
        let serialize = version.is_none_or(|(major, minor, _)| (major, minor) < THREAD_SAFE_FROM);
        let lock = || serialize.then(|| CALLS.lock().unwrap_or_else(|p| p.into_inner()));
        let (code, said) = {
            let _held = lock();
            // SAFETY: symbol checked above; the flag is a plain integer.
            with_stderr_kept(|| unsafe { self.lib.amdsmi_init(sys::amdsmi_init_flags_t_AMDSMI_INIT_AMD_GPUS as u64) })
        };
        // What the library printed while it failed belongs in the one line that says so.
        let said = if said.is_empty() { String::new() } else { format!("; the library said {said:?}") };
        if code == sys::amdsmi_status_t_AMDSMI_STATUS_DRIVER_NOT_LOADED
            || code == sys::amdsmi_status_t_AMDSMI_STATUS_NOT_FOUND
        {
            return Err(TelemetryError::NoAmdDevice {
                library: "AMD SMI",
                detail: format!("amdsmi_init returned {} ({code}){said}", status_name(&self.lib, code)),
            });
        }
        if code != sys::amdsmi_status_t_AMDSMI_STATUS_SUCCESS {
            let name = format!("{}{said}", status_name(&self.lib, code));
            return Err(TelemetryError::InitFailed { call: "amdsmi_init", code, name });
        }
        let mut smi = AmdSmi {
            lib: self.lib,
            path: self.path,
            cache: self.cache,
            version,
            serialize,
            handle: std::ptr::null_mut(),
            device: index,
            on_host: 0,
            name: String::new(),
            skip: 0,
            apu: None,
        };
        let gpus = smi.gpu_handles()?;
        if gpus.is_empty() {
            return Err(TelemetryError::NoAmdDevice {
                library: "AMD SMI",
                detail: "amdsmi_init succeeded but no socket holds a GPU".into(),
            });
        }
        let count = gpus.len() as u32;
        smi.handle =
            *gpus.get(index as usize).ok_or(TelemetryError::NoSuchDevice { backend: "amd-smi", index, count })?;
        smi.on_host = count;
        smi.name = smi.market_name().unwrap_or_else(|| "AMD GPU".into());
        // The first table says whether this is an APU and which filter its averages went through.
        match smi.metrics() {
            Ok((m, Some(a))) => {
                smi.apu = Some(ApuFilter {
                    revision: (m.common_header.format_revision, m.common_header.content_revision),
                    filter_us: (a.time_filter_alphavalue != u32::MAX).then_some(a.time_filter_alphavalue),
                });
            }
            // An APU's table without its APU part would read as a discrete GPU's: its socket power
            // (CPU included) taken for the GPU's, no gfx power, no filter.
            Ok((m, None)) if is_apu_table(&m) => {
                return Err(TelemetryError::ApuTableUnplaced {
                    version: smi.version.map_or("of unknown version".into(), |(a, b, c)| format!("{a}.{b}.{c}")),
                    revision: format!("v{}_{}", m.common_header.format_revision, m.common_header.content_revision),
                })
            }
            _ => {}
        }
        Ok(smi)
    }
}

/// An APU's table: its revision and the firmware filter its averages went through.
#[derive(Debug, Clone, Copy)]
struct ApuFilter {
    revision: (u8, u8),
    /// v3_0 `time_filter_alphavalue`: the averages' time constant, in µs.
    filter_us: Option<u32>,
}

/// An initialised AMD SMI with one GPU selected; shuts the library down when dropped.
pub struct AmdSmi {
    lib: sys::AmdSmiLib,
    path: String,
    cache: String,
    version: Option<(u32, u32, u32)>,
    serialize: bool,
    handle: sys::amdsmi_processor_handle,
    device: u32,
    /// GPUs over every socket.
    on_host: u32,
    name: String,
    /// Bit per `Call` that answered NOT_SUPPORTED (or is missing from the library): not asked again.
    skip: u32,
    apu: Option<ApuFilter>,
}

// SAFETY: the handle is an opaque token the library hands out for the whole session; every call
// that uses it goes through `&mut self` (or holds the process-wide lock on libraries that need it).
unsafe impl Send for AmdSmi {}

/// The calls `read` makes besides the metrics table, one bit each in `AmdSmi::skip`.
#[derive(Debug, Clone, Copy)]
enum Call {
    Energy,
    Power,
    Vram,
    Gtt,
}

const ALL_CALLS: [Call; 4] = [Call::Energy, Call::Power, Call::Vram, Call::Gtt];

/// A u16 word of the table, absent where the library left its all-ones "not supported".
fn word(v: u16) -> Option<f64> {
    (v != u16::MAX).then_some(v as f64)
}

fn dword(v: u32) -> Option<f64> {
    (v != u32::MAX).then_some(v as f64)
}

fn qword(v: u64) -> Option<f64> {
    (v != u64::MAX).then_some(v as f64)
}

impl AmdSmi {
    fn lock(&self) -> Option<MutexGuard<'static, ()>> {
        self.serialize.then(|| CALLS.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// Every GPU handle, socket by socket.
    fn gpu_handles(&self) -> Result<Vec<sys::amdsmi_processor_handle>, TelemetryError> {
        let _held = self.lock();
        let mut sockets = 0u32;
        // SAFETY: a null buffer asks for the count only.
        let code = unsafe { self.lib.amdsmi_get_socket_handles(&mut sockets, std::ptr::null_mut()) };
        amdsmi_try(&self.lib, "amdsmi_get_socket_handles", code)?;
        let mut socket_handles = vec![std::ptr::null_mut(); sockets as usize];
        // SAFETY: the buffer holds `sockets` handles.
        let code = unsafe { self.lib.amdsmi_get_socket_handles(&mut sockets, socket_handles.as_mut_ptr()) };
        amdsmi_try(&self.lib, "amdsmi_get_socket_handles", code)?;
        socket_handles.truncate(sockets as usize);
        let mut gpus = Vec::new();
        for socket in socket_handles {
            let mut n = 0u32;
            // SAFETY: a null buffer asks for the count only.
            let code = unsafe { self.lib.amdsmi_get_processor_handles(socket, &mut n, std::ptr::null_mut()) };
            amdsmi_try(&self.lib, "amdsmi_get_processor_handles", code)?;
            let mut handles = vec![std::ptr::null_mut(); n as usize];
            // SAFETY: the buffer holds `n` handles.
            let code = unsafe { self.lib.amdsmi_get_processor_handles(socket, &mut n, handles.as_mut_ptr()) };
            amdsmi_try(&self.lib, "amdsmi_get_processor_handles", code)?;
            handles.truncate(n as usize);
            gpus.extend(handles);
        }
        Ok(gpus)
    }

    fn market_name(&self) -> Option<String> {
        let f = self.lib.amdsmi_get_gpu_asic_info.as_ref().ok()?;
        let _held = self.lock();
        // SAFETY: all-zero is a valid amdsmi_asic_info_t (integers and char arrays).
        let mut info: sys::amdsmi_asic_info_t = unsafe { std::mem::zeroed() };
        // SAFETY: info is a valid out-pointer.
        if unsafe { f(self.handle, &mut info) } != sys::amdsmi_status_t_AMDSMI_STATUS_SUCCESS {
            return None;
        }
        let name = &mut info.market_name;
        name[name.len() - 1] = 0;
        // SAFETY: NUL-terminated by the line above at the latest.
        Some(unsafe { CStr::from_ptr(name.as_ptr()) }.to_string_lossy().into_owned()).filter(|s| !s.is_empty())
    }

    /// The unified table, and a copy of its APU part where the device has one (the library's
    /// copy lives in thread-local storage that the next call overwrites).
    fn metrics(&self) -> Result<(sys::amdsmi_gpu_metrics_t, Option<sys::amdsmi_apu_metrics_t>), TelemetryError> {
        let _held = self.lock();
        let mut buf = TableBuffer([0; TABLE_BUFFER_BYTES]);
        // SAFETY: the buffer holds more than any known layout of the struct, aligned as it is;
        // the symbol was checked at init.
        let code = unsafe { self.lib.amdsmi_get_gpu_metrics_info(self.handle, buf.0.as_mut_ptr().cast()) };
        amdsmi_try(&self.lib, "amdsmi_get_gpu_metrics_info", code)?;
        // SAFETY: the pointer is non-null only where the library filled its APU storage during
        // this call (a library writes no further than its own layout; the rest stays zero).
        Ok(unsafe { place_table(&buf, self.version.map(|v| v.0)) })
    }

    /// Runs one call unless it was found unsupported before; `None` where the symbol is missing.
    fn guarded(&mut self, which: Call, run: impl FnOnce(&Self) -> Option<sys::amdsmi_status_t>) -> bool {
        let bit = 1u32 << which as u32;
        if self.skip & bit != 0 {
            return false;
        }
        let status = {
            let _held = self.lock();
            run(self)
        };
        match status {
            Some(sys::amdsmi_status_t_AMDSMI_STATUS_SUCCESS) => true,
            Some(sys::amdsmi_status_t_AMDSMI_STATUS_NOT_SUPPORTED) | None => {
                self.skip |= bit;
                false
            }
            Some(_) => false,
        }
    }

    /// Energy in J: counter × resolution (µJ per tick).
    fn energy(&mut self) -> Option<f64> {
        let (mut ticks, mut resolution_uj, mut stamp) = (0u64, 0f32, 0u64);
        let h = self.handle;
        let ok = self.guarded(Call::Energy, |s| {
            let f = s.lib.amdsmi_get_energy_count.as_ref().ok()?;
            // SAFETY: three valid out-pointers to locals.
            Some(unsafe { f(h, &mut ticks, &mut resolution_uj, &mut stamp) })
        });
        ok.then(|| ticks as f64 * resolution_uj as f64 / 1e6)
    }

    /// (current socket power, average socket power) in W, as `amdsmi_get_power_info` has them.
    fn power(&mut self) -> (Option<f64>, Option<f64>) {
        // SAFETY: all-zero is a valid amdsmi_power_info_t (integers).
        let mut p: sys::amdsmi_power_info_t = unsafe { std::mem::zeroed() };
        let h = self.handle;
        let ok = self.guarded(Call::Power, |s| {
            let f = s.lib.amdsmi_get_power_info.as_ref().ok()?;
            // SAFETY: p is a valid out-pointer.
            Some(unsafe { f(h, &mut p) })
        });
        if !ok {
            return (None, None);
        }
        // 0 is what the library leaves in a field the device does not report.
        let watts = |v: u32| dword(v).filter(|w| *w > 0.0);
        (watts(p.current_socket_power), watts(p.average_socket_power))
    }

    fn memory_used(&mut self, which: Call, kind: sys::amdsmi_memory_type_t) -> Option<f64> {
        let mut used = 0u64;
        let h = self.handle;
        let ok = self.guarded(which, |s| {
            let f = s.lib.amdsmi_get_gpu_memory_usage.as_ref().ok()?;
            // SAFETY: used is a valid out-pointer.
            Some(unsafe { f(h, kind, &mut used) })
        });
        ok.then_some(used as f64)
    }

    /// The table in abprof's units. dGPU (v1_x): °C, %, W, MHz as the library converts them.
    /// APU (v2_4/v3_0): the APU part as the firmware gives it: centi-°C, centi-%, mW. Only fields
    /// before the v1.1 accumulators are read: AMD SMI 27 widened those to 64 bits and moved all
    /// that follow (tests/telemetry.rs checks against AMD's own 7.0.2 and 26.5.0 layouts), so this
    /// reads the table of a 24–26 library too; the APU part is placed by [`place_table`].
    fn table_reading(m: &sys::amdsmi_gpu_metrics_t, apu: Option<&sys::amdsmi_apu_metrics_t>) -> Reading {
        let mut r = Reading { gpu_stamp_ns: qword(m.system_clock_counter), ..Reading::default() };
        match apu {
            None => {
                r.temp_gpu_c = word(m.temperature_edge);
                r.temp_hotspot_c = word(m.temperature_hotspot);
                r.temp_mem_c = word(m.temperature_mem);
                r.busy_pct = word(m.average_gfx_activity);
                r.mem_busy_pct = word(m.average_umc_activity);
                r.power_avg_w = word(m.average_socket_power);
                r.gfx_clock_mhz = word(m.current_gfxclk);
                r.mem_clock_mhz = word(m.current_uclk);
                r.metrics_gfx_activity_raw = word(m.average_gfx_activity);
                r.metrics_temp_raw = word(m.temperature_edge);
            }
            Some(a) => {
                r.temp_gpu_c = word(a.temperature_gfx).map(|t| t / 100.0);
                r.busy_pct = word(a.average_gfx_activity).map(|b| b / 100.0);
                r.power_avg_w = dword(a.average_socket_power).map(|mw| mw / 1000.0);
                r.gfx_power_w = dword(a.average_gfx_power).map(|mw| mw / 1000.0);
                r.gfx_clock_mhz = word(a.current_gfxclk).or(word(a.average_gfxclk_frequency));
                r.mem_clock_mhz = word(a.current_uclk).or(word(a.average_uclk_frequency));
                r.metrics_gfx_activity_raw = word(a.average_gfx_activity);
                r.metrics_temp_raw = word(a.temperature_gfx);
                r.throttle_prochot = dword(a.throttle_residency_prochot);
                r.throttle_spl = dword(a.throttle_residency_spl);
                r.throttle_fppt = dword(a.throttle_residency_fppt);
                r.throttle_sppt = dword(a.throttle_residency_sppt);
                r.throttle_thm_core = dword(a.throttle_residency_thm_core);
                r.throttle_thm_gfx = dword(a.throttle_residency_thm_gfx);
                r.throttle_thm_soc = dword(a.throttle_residency_thm_soc);
            }
        }
        r
    }
}

impl TelemetrySource for AmdSmi {
    fn devices_on_host(&self) -> u32 {
        self.on_host
    }

    fn kind(&self) -> SourceKind {
        SourceKind::AmdSmi
    }

    fn describe(&self) -> String {
        let version = self.version.map(|(a, b, c)| format!("{a}.{b}.{c}")).unwrap_or_else(|| "?".into());
        let skipped: Vec<String> =
            ALL_CALLS.iter().filter(|c| self.skip & (1 << **c as u32) != 0).map(|c| format!("{c:?}")).collect();
        let mut s = format!("AMD SMI {version} ({}) device {}: {}; {}", self.path, self.device, self.name, self.cache);
        if self.serialize {
            s += "; calls serialized (library older than 26.2 is not thread-safe)";
        }
        if let Some(apu) = self.apu {
            s += &format!("; APU metrics v{}_{}", apu.revision.0, apu.revision.1);
        }
        if !skipped.is_empty() {
            s += &format!("; not supported here: {}", skipped.join(", "));
        }
        s
    }

    fn power_fields(&self) -> Vec<PowerField> {
        let filter_ms = self.apu.and_then(|a| a.filter_us).map(|us| us as f64 / 1000.0);
        match self.apu {
            Some(_) => vec![
                PowerField::new(
                    Field::PowerAvgW,
                    "AMD SMI apu_metrics average_socket_power",
                    PowerScope::ApuSocket,
                    PowerKind::Average,
                    filter_ms,
                ),
                PowerField::new(
                    Field::GfxPowerW,
                    "AMD SMI apu_metrics average_gfx_power",
                    PowerScope::Gfx,
                    PowerKind::Average,
                    filter_ms,
                ),
            ],
            None => vec![
                PowerField::new(
                    Field::PowerW,
                    "AMD SMI power_info current_socket_power",
                    PowerScope::GpuSocket,
                    PowerKind::Instant,
                    None,
                ),
                PowerField::new(
                    Field::PowerAvgW,
                    "AMD SMI gpu_metrics average_socket_power",
                    PowerScope::GpuSocket,
                    PowerKind::Average,
                    None,
                ),
            ],
        }
    }

    fn read(&mut self) -> Result<Reading, TelemetryError> {
        let (m, apu) = self.metrics()?;
        let mut r = AmdSmi::table_reading(&m, apu.as_ref());
        if apu.is_none() {
            let (now, average) = self.power();
            r.power_w = now;
            r.power_avg_w = r.power_avg_w.or(average);
            // An APU has no GPU energy counter; its energy is the integral of a named power.
            r.energy_j = self.energy();
        }
        r.vram_used_bytes = self.memory_used(Call::Vram, sys::amdsmi_memory_type_t_AMDSMI_MEM_TYPE_VRAM);
        r.gtt_used_bytes = self.memory_used(Call::Gtt, sys::amdsmi_memory_type_t_AMDSMI_MEM_TYPE_GTT);
        Ok(r)
    }
}

impl Drop for AmdSmi {
    fn drop(&mut self) {
        let _held = self.lock();
        // SAFETY: init succeeded for this value, so one shut-down balances it.
        unsafe {
            self.lib.amdsmi_shut_down();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::telemetry::gpu_metrics::GpuMetrics;

    fn recorded(name: &str) -> GpuMetrics {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/gpu_metrics").join(name);
        GpuMetrics::decode(&std::fs::read(path).unwrap()).unwrap()
    }

    /// The library's unified table as AMD SMI fills it from a recorded kernel table: the v1_x
    /// fields converted to its units (the same as the kernel's for v1_3), the APU's v2_4/v3_0
    /// fields copied as the firmware gives them, every field it does not have all-ones.
    fn as_the_library_fills_it(table: &GpuMetrics) -> (sys::amdsmi_gpu_metrics_t, Option<sys::amdsmi_apu_metrics_t>) {
        // SAFETY: all-ones is a valid value of these plain-data structs (the library's sentinel),
        // and the pointer is reset before use.
        let mut m: sys::amdsmi_gpu_metrics_t =
            unsafe { std::mem::transmute([0xFFu8; std::mem::size_of::<sys::amdsmi_gpu_metrics_t>()]) };
        m.apu_metrics = std::ptr::null_mut();
        let h = table.header();
        m.common_header.structure_size = h.structure_size;
        m.common_header.format_revision = h.format_revision;
        m.common_header.content_revision = h.content_revision;
        let w = |v: Option<u16>| v.unwrap_or(u16::MAX);
        let d = |v: Option<u32>| v.unwrap_or(u32::MAX);
        match table {
            GpuMetrics::V1(t) => {
                m.temperature_edge = w(t.temperature_edge);
                m.temperature_hotspot = w(t.temperature_hotspot);
                m.temperature_mem = w(t.temperature_mem);
                m.average_gfx_activity = w(t.average_gfx_activity);
                m.average_umc_activity = w(t.average_umc_activity);
                m.average_socket_power = w(t.average_socket_power);
                m.system_clock_counter = t.system_clock_counter.unwrap_or(u64::MAX);
                m.current_gfxclk = w(t.current_gfxclk);
                m.current_uclk = w(t.current_uclk);
                (m, None)
            }
            GpuMetrics::V2(t) => {
                // SAFETY: as above.
                let mut a: sys::amdsmi_apu_metrics_t =
                    unsafe { std::mem::transmute([0xFFu8; std::mem::size_of::<sys::amdsmi_apu_metrics_t>()]) };
                m.system_clock_counter = t.system_clock_counter.unwrap_or(u64::MAX);
                a.temperature_gfx = w(t.temperature_gfx);
                a.average_gfx_activity = w(t.average_gfx_activity);
                a.average_socket_power = t.average_socket_power.map_or(u32::MAX, u32::from);
                a.average_gfx_power = t.average_gfx_power.map_or(u32::MAX, u32::from);
                a.current_gfxclk = w(t.current_gfxclk);
                a.current_uclk = w(t.current_uclk);
                a.average_gfxclk_frequency = w(t.average_gfxclk_frequency);
                a.average_uclk_frequency = w(t.average_uclk_frequency);
                (m, Some(a))
            }
            GpuMetrics::V3(t) => {
                // SAFETY: as above.
                let mut a: sys::amdsmi_apu_metrics_t =
                    unsafe { std::mem::transmute([0xFFu8; std::mem::size_of::<sys::amdsmi_apu_metrics_t>()]) };
                m.system_clock_counter = t.system_clock_counter.unwrap_or(u64::MAX);
                a.temperature_gfx = w(t.temperature_gfx);
                a.average_gfx_activity = w(t.average_gfx_activity);
                a.average_socket_power = d(t.average_socket_power);
                a.average_gfx_power = d(t.average_gfx_power);
                a.average_gfxclk_frequency = w(t.average_gfxclk_frequency);
                a.average_uclk_frequency = w(t.average_uclk_frequency);
                a.time_filter_alphavalue = d(t.time_filter_alphavalue);
                a.throttle_residency_prochot = d(t.throttle_residency_prochot);
                a.throttle_residency_spl = d(t.throttle_residency_spl);
                a.throttle_residency_fppt = d(t.throttle_residency_fppt);
                a.throttle_residency_sppt = d(t.throttle_residency_sppt);
                a.throttle_residency_thm_core = d(t.throttle_residency_thm_core);
                a.throttle_residency_thm_gfx = d(t.throttle_residency_thm_gfx);
                a.throttle_residency_thm_soc = d(t.throttle_residency_thm_soc);
                (m, Some(a))
            }
        }
    }

    /// The recorded dGPU (v1_3) and APU (v2_4, v3_0) tables read through AMD SMI's structs give
    /// the reading the kernel-table decoder gives: one table, one set of values, whichever path.
    #[test]
    fn recorded_tables_read_through_the_librarys_structs_match_the_kernel_decoder() {
        for name in ["v1_3.bin", "v2_4.bin", "v3_0.bin"] {
            let table = recorded(name);
            let (m, apu) = as_the_library_fills_it(&table);
            let ours = AmdSmi::table_reading(&m, apu.as_ref());
            let kernel = table.to_reading(table.default_interpretation());
            for f in [
                Field::TempGpuC,
                Field::BusyPct,
                Field::PowerAvgW,
                Field::GfxPowerW,
                Field::GfxClockMhz,
                Field::MemClockMhz,
                Field::GpuStampNs,
                Field::ThrottleFppt,
                Field::ThrottleThmGfx,
            ] {
                assert_eq!(ours.get(f), kernel.get(f), "{name} {}", f.name());
            }
        }
        let (_, apu) = as_the_library_fills_it(&recorded("v3_0.bin"));
        assert_eq!(apu.unwrap().time_filter_alphavalue, 10_000, "the v3_0 table's filter, µs");
    }

    /// The buffer a library of `major` fills for `table`: the unified part at the start, its APU
    /// part in `storage` (the library's thread-local copy), its pointer at `pointer_at`.
    fn filled_by(
        table: &GpuMetrics,
        pointer_at: usize,
        storage: &mut Option<sys::amdsmi_apu_metrics_t>,
    ) -> TableBuffer {
        let (m, apu) = as_the_library_fills_it(table);
        *storage = apu;
        let mut buf = TableBuffer([0; TABLE_BUFFER_BYTES]);
        // SAFETY: the struct is plain data and the buffer larger than it.
        let bytes = unsafe {
            std::slice::from_raw_parts((&m as *const sys::amdsmi_gpu_metrics_t).cast::<u8>(), std::mem::size_of_val(&m))
        };
        buf.0[..bytes.len()].copy_from_slice(bytes);
        // A 26.x library's struct ends at its pointer: nothing of the 27.x tail is written.
        buf.0[pointer_at + 8..bytes.len()].fill(0);
        buf.0[std::mem::offset_of!(sys::amdsmi_gpu_metrics_t, apu_metrics)..][..8].fill(0);
        let ptr = storage.as_ref().map_or(std::ptr::null(), |a| a as *const sys::amdsmi_apu_metrics_t);
        buf.0[pointer_at..pointer_at + 8].copy_from_slice(&(ptr as usize).to_ne_bytes());
        buf
    }

    /// The 26.x layout from AMD's header at 26.5.0 (compiled offsets in the fixture) and the 27.x
    /// one from sys/: the APU pointer where each puts it, and the struct abprof reads agreeing
    /// with 26.5.0 on every field before the widened accumulators.
    #[test]
    fn the_apu_pointer_sits_where_each_major_puts_it() {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/amdsmi/layout-amdsmi-26.5.0.json");
        let fixture: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        assert!(fixture["source"].as_str().unwrap().contains("019df164d850f1333bf093d3a6d80f46b7281a36"));
        let at = |field: &str| fixture["structs"]["amdsmi_gpu_metrics_t"]["offsets"][field].as_u64().unwrap() as usize;
        assert_eq!(apu_pointer_offset(26), Some(at("apu_metrics")));
        assert_eq!(apu_pointer_offset(27), Some(4728));
        assert_eq!(apu_pointer_offset(25), None);
        for field in ["temperature_edge", "average_gfx_activity", "average_socket_power", "system_clock_counter"] {
            let ours = match field {
                "temperature_edge" => std::mem::offset_of!(sys::amdsmi_gpu_metrics_t, temperature_edge),
                "average_gfx_activity" => std::mem::offset_of!(sys::amdsmi_gpu_metrics_t, average_gfx_activity),
                "average_socket_power" => std::mem::offset_of!(sys::amdsmi_gpu_metrics_t, average_socket_power),
                _ => std::mem::offset_of!(sys::amdsmi_gpu_metrics_t, system_clock_counter),
            };
            assert_eq!(ours, at(field), "{field}");
        }
        let apu = &fixture["structs"]["amdsmi_apu_metrics_t"];
        assert_eq!(apu["size"].as_u64().unwrap() as usize, std::mem::size_of::<sys::amdsmi_apu_metrics_t>());
        let apu_at = |field: &str| apu["offsets"][field].as_u64().unwrap() as usize;
        assert_eq!(
            std::mem::offset_of!(sys::amdsmi_apu_metrics_t, average_socket_power),
            apu_at("average_socket_power")
        );
        assert_eq!(std::mem::offset_of!(sys::amdsmi_apu_metrics_t, average_gfx_power), apu_at("average_gfx_power"));
        assert_eq!(
            std::mem::offset_of!(sys::amdsmi_apu_metrics_t, time_filter_alphavalue),
            apu_at("time_filter_alphavalue")
        );
        assert_eq!(
            std::mem::offset_of!(sys::amdsmi_apu_metrics_t, throttle_residency_fppt),
            apu_at("throttle_residency_fppt")
        );
    }

    /// A real Strix Halo table (tests/fixtures/gpu_metrics/README.md) as a 26.5 and as a 27.x
    /// library would hand it over: read through `place_table` with the library's major, both give
    /// the APU's socket and gfx power, its 1 s filter and its throttle counters; read with the
    /// other major's offset (what abprof did before), the 26.x table loses its APU part.
    #[test]
    fn a_26_and_a_27_library_s_apu_table_read_the_same() {
        let table = recorded("v3_0_strix_halo_amdtop.bin");
        for (major, at) in [(26, APU_POINTER_OFFSET_26), (27, 4728)] {
            let mut storage = None;
            let buf = filled_by(&table, at, &mut storage);
            // SAFETY: the pointer in the buffer points at `storage`, alive here.
            let (m, apu) = unsafe { place_table(&buf, Some(major)) };
            let a = apu.unwrap_or_else(|| panic!("{major}: no APU part"));
            assert!(is_apu_table(&m), "{major}");
            let r = AmdSmi::table_reading(&m, Some(&a));
            assert_eq!(r.power_avg_w, Some(12.976), "{major}: socket power (mW in the table)");
            assert_eq!(r.gfx_power_w, Some(0.0), "{major}: the idle table's gfx power, 0 mW as it says");
            assert_eq!(a.time_filter_alphavalue, 1_000_000, "{major}: 1 s");
            assert_eq!(r.throttle_fppt, Some(461_257.0), "{major}");
            assert_eq!(r.throttle_sppt, Some(134_744.0), "{major}");
            assert_eq!(r.throttle_thm_core, Some(95.0), "{major}");
        }
        let mut storage = None;
        let buf = filled_by(&table, APU_POINTER_OFFSET_26, &mut storage);
        // SAFETY: as above; the 27 offset holds zero in a 26.x buffer.
        let (m, apu) = unsafe { place_table(&buf, Some(27)) };
        assert!(apu.is_none() && is_apu_table(&m), "a 26.x table read with 27's offset: the misread of #44");
        // SAFETY: as above.
        let (_, apu) = unsafe { place_table(&buf, Some(28)) };
        assert!(apu.is_none(), "an unknown major's pointer is never followed");
    }

    #[test]
    fn a_missing_library_is_named_with_every_path_tried() {
        let e = AmdSmiLibrary::open(&["/nonexistent/libamd_smi.so.27"]).err().unwrap();
        assert!(matches!(e, TelemetryError::LibraryMissing { library: "libamd_smi", .. }), "{e}");
        assert!(e.to_string().contains("/nonexistent/libamd_smi.so.27"), "{e}");
    }
}
