//! Telemetry against real things: the gpu_metrics fixture blobs (made field by field by
//! scripts/make_gpu_metrics_fixtures.py from the kernel header), fake sysfs trees, Debian's real
//! librocm_smi64, Debian's real AMD SMI 10.1 (scripts/amdsmi, in a child process), AMD's own
//! ctypes statement of its struct layouts, and NVML's absence (or presence, on a GPU host).
use std::path::{Path, PathBuf};
use std::time::Duration;

use abprof::telemetry::amdgpu_sysfs::AmdgpuSysfs;
use abprof::telemetry::gpu_metrics::{GpuMetrics, GpuMetricsError};
use abprof::telemetry::nvml::NvmlLibrary;
use abprof::telemetry::rocm_smi::RocmSmiLibrary;
use abprof::telemetry::sampler::{Sampler, SamplerConfig};
use abprof::telemetry::{open, Field, OpenOptions, SourceKind, TelemetryError, TelemetrySource};
use serde_json::Value;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn sysfs(tree: &str) -> PathBuf {
    fixtures().join("sysfs").join(tree)
}

fn blob(name: &str) -> Vec<u8> {
    std::fs::read(fixtures().join("gpu_metrics").join(name)).unwrap()
}

/// Every field the decoder exposes must equal the generator's value for it; fields the
/// revision does not have must decode as absent.
fn check_against_sidecar(name: &str) -> usize {
    let decoded = GpuMetrics::decode(&blob(&format!("{name}.bin"))).unwrap_or_else(|e| panic!("{name}: {e}"));
    let sidecar: Value =
        serde_json::from_str(&std::fs::read_to_string(fixtures().join(format!("gpu_metrics/{name}.json"))).unwrap())
            .unwrap();
    let decoded = serde_json::to_value(&decoded).unwrap();
    let mut compared = 0;
    for (field, value) in decoded.as_object().unwrap() {
        match sidecar.get(field) {
            Some(expected) => {
                assert_eq!(value, expected, "{name}.{field}");
                compared += 1;
            }
            None => assert!(value.is_null(), "{name}.{field} is not in this revision but decoded as {value}"),
        }
    }
    compared
}

#[test]
fn gpu_metrics_v1_3_v2_x_and_v3_0_decode_field_by_field() {
    assert!(check_against_sidecar("v1_3") >= 30);
    for v2 in ["v2_1", "v2_2", "v2_3", "v2_4"] {
        assert!(check_against_sidecar(v2) >= 30, "{v2}");
    }
    assert!(check_against_sidecar("v3_0") >= 40);
}

#[test]
fn gpu_metrics_units_land_in_abprof_units() {
    let v1 = GpuMetrics::decode(&blob("v1_3.bin")).unwrap();
    let r = v1.to_reading(v1.default_interpretation());
    assert_eq!((r.temp_gpu_c, r.temp_hotspot_c, r.busy_pct), (Some(61.0), Some(78.0), Some(97.0)));
    // 65536 × 1000 ticks of 2⁻¹⁶ J.
    assert_eq!(r.energy_j, Some(1000.0));
    assert_eq!((r.power_avg_w, r.gfx_clock_mhz, r.mem_clock_mhz), (Some(287.0), Some(2505.0), Some(1250.0)));
    assert_eq!(r.gpu_stamp_ns, Some(123_456_789_012.0));

    let v24 = GpuMetrics::decode(&blob("v2_4.bin")).unwrap();
    let r = v24.to_reading(v24.default_interpretation());
    assert_eq!((r.temp_gpu_c, r.busy_pct), (Some(52.3), Some(88.5)));
    assert_eq!((r.power_avg_w, r.gfx_power_w), (Some(41.25), Some(21.7)));

    let v3 = GpuMetrics::decode(&blob("v3_0.bin")).unwrap();
    let r = v3.to_reading(v3.default_interpretation());
    assert_eq!((r.temp_gpu_c, r.busy_pct), (Some(61.25), Some(93.12)));
    assert_eq!((r.power_avg_w, r.gfx_power_w), (Some(118.5), Some(97.25)));
    assert_eq!((r.metrics_temp_raw, r.metrics_gfx_activity_raw), (Some(6125.0), Some(9312.0)));
    assert_eq!(r.gfx_clock_mhz, Some(2890.0));
}

#[test]
fn truncated_unknown_and_mismatched_blobs_are_clear_errors() {
    let e = GpuMetrics::decode(&blob("v3_0_truncated.bin")).unwrap_err();
    assert_eq!(e, GpuMetricsError::Truncated { format: 3, content: 0, needed: 264, got: 108 });
    assert!(e.to_string().contains("truncated"), "{e}");

    let e = GpuMetrics::decode(&blob("v9_9_unknown.bin")).unwrap_err();
    assert!(matches!(e, GpuMetricsError::UnknownRevision { format: 9, content: 9, .. }), "{e}");
    assert!(e.to_string().contains("v9_9"), "{e}");

    let e = GpuMetrics::decode(&blob("v2_1_header_v3_0_body.bin")).unwrap_err();
    assert_eq!(e, GpuMetricsError::SizeMismatch { format: 2, content: 1, expected: 120, declared: 264 });
}

#[test]
fn sysfs_dgpu_reads_text_attributes_and_the_table() {
    let mut s = AmdgpuSysfs::open(&sysfs("dgpu-v1_3"), 0).unwrap();
    let r = s.read().unwrap();
    assert_eq!((r.busy_pct, r.mem_busy_pct), (Some(97.0), Some(41.0)));
    assert_eq!((r.power_w, r.power_avg_w), (Some(291.0), Some(287.0)));
    assert_eq!((r.temp_gpu_c, r.temp_hotspot_c, r.temp_mem_c), (Some(61.0), Some(78.0), Some(70.0)));
    assert_eq!((r.gfx_clock_mhz, r.mem_clock_mhz), (Some(2505.0), Some(1250.0)));
    assert_eq!((r.vram_used_bytes, r.gtt_used_bytes), (Some(8_589_934_592.0), Some(33_554_432.0)));
    assert_eq!(r.energy_j, Some(1000.0));
    assert!(s.describe().contains("gpu_metrics v1_3"), "{}", s.describe());
}

#[test]
fn sysfs_apu_v3_0_settles_centi_units_against_hwmon() {
    let mut s = AmdgpuSysfs::open(&sysfs("apu-v3_0"), 0).unwrap();
    let d = s.describe();
    assert!(d.contains("card1") && d.contains("gpu_metrics v3_0") && d.contains("Centi-scaled"), "{d}");
    let r = s.read().unwrap();
    assert_eq!((r.busy_pct, r.power_w, r.power_avg_w), (Some(93.0), Some(121.0), Some(118.5)));
    assert_eq!(r.gfx_power_w, Some(97.25));
    assert_eq!(r.temp_gpu_c, Some(61.25));
    assert_eq!(r.gfx_clock_mhz, Some(2890.0));
    assert_eq!(r.metrics_temp_raw, Some(6125.0));
}

#[test]
fn sysfs_apu_v2_4_uses_the_dpm_table_without_hwmon_clocks() {
    let mut s = AmdgpuSysfs::open(&sysfs("apu-v2_4"), 0).unwrap();
    let r = s.read().unwrap();
    assert_eq!((r.busy_pct, r.power_w, r.power_avg_w), (Some(88.0), None, Some(41.25)));
    assert_eq!(r.gfx_clock_mhz, Some(2710.0));
    assert_eq!(r.gfx_power_w, Some(21.7));
}

/// A copy of a fixture tree with its gpu_metrics replaced.
fn tree_with_metrics(tree: &str, blob_name: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let status =
        std::process::Command::new("cp").arg("-r").arg(sysfs(tree).join("class")).arg(dir.path()).status().unwrap();
    assert!(status.success());
    std::fs::write(dir.path().join("class/drm/card0/device/gpu_metrics"), blob(blob_name)).unwrap();
    dir
}

#[test]
fn an_undecodable_table_is_reported_and_the_text_attributes_still_work() {
    for (blob_name, says) in [("v9_9_unknown.bin", "v9_9"), ("v3_0_truncated.bin", "truncated")] {
        let dir = tree_with_metrics("dgpu-v1_3", blob_name);
        let mut s = AmdgpuSysfs::open(dir.path(), 0).unwrap();
        let d = s.describe();
        assert!(d.contains("gpu_metrics not used") && d.contains(says), "{d}");
        let r = s.read().unwrap();
        assert_eq!((r.busy_pct, r.energy_j), (Some(97.0), None));
    }
}

/// A table that tears mid-run (its header no longer the first table's) is left out of that one
/// reading, which keeps its text attributes, and counted; the next whole table is read again.
#[test]
fn a_torn_table_is_rejected_per_reading_and_counted() {
    let dir = tempfile::tempdir().unwrap();
    let copied =
        std::process::Command::new("cp").arg("-r").arg(sysfs("apu-v3_0").join("class")).arg(dir.path()).status();
    assert!(copied.unwrap().success());
    let table = dir.path().join("class/drm/card1/device/gpu_metrics");
    let mut s = AmdgpuSysfs::open(dir.path(), 0).unwrap();
    assert_eq!(s.read().unwrap().gfx_power_w, Some(97.25));
    for torn in ["v2_1_header_v3_0_body.bin", "v3_0_truncated.bin", "v2_4.bin"] {
        std::fs::write(&table, blob(torn)).unwrap();
        let r = s.read().unwrap_or_else(|e| panic!("{torn}: a torn table fails no reading: {e}"));
        assert_eq!((r.busy_pct, r.power_w, r.gfx_power_w), (Some(93.0), Some(121.0), None), "{torn}");
    }
    assert_eq!(s.torn_reads(), 3);
    std::fs::write(&table, blob("v3_0.bin")).unwrap();
    assert_eq!(s.read().unwrap().gfx_power_w, Some(97.25));
    assert_eq!(s.torn_reads(), 3);
}

/// Every power value names whose power it is: on an APU the socket includes the CPU, and hwmon's
/// power1_input is the firmware's filtered socket power, with the table's time constant (the
/// synthetic fixture's 10 ms; a real Strix Halo table's 1 s, tests/fixtures/gpu_metrics/README.md).
#[test]
fn an_apus_power_fields_say_socket_or_gfx_and_the_filter() {
    use abprof::telemetry::power_field::{PowerKind, PowerScope};
    let s = AmdgpuSysfs::open(&sysfs("apu-v3_0"), 0).unwrap();
    let fields = s.power_fields();
    let by = |f: Field| fields.iter().find(|p| p.field == f).unwrap_or_else(|| panic!("{f:?} in {fields:?}"));
    assert_eq!(by(Field::PowerW).scope, PowerScope::ApuSocket);
    assert_eq!(by(Field::PowerW).kind, PowerKind::Average);
    assert_eq!(by(Field::PowerW).filter_ms, Some(10.0));
    assert_eq!(by(Field::GfxPowerW).scope, PowerScope::Gfx);
    assert_eq!(by(Field::GfxPowerW).filter_ms, Some(10.0));
    let d = AmdgpuSysfs::open(&sysfs("dgpu-v1_3"), 0).unwrap();
    assert!(d.power_fields().iter().all(|p| p.scope == PowerScope::GpuSocket), "{:?}", d.power_fields());
    assert_eq!(
        d.power_fields().iter().find(|p| p.field == Field::PowerW).map(|p| p.kind),
        Some(PowerKind::Instant),
        "a discrete GPU's power1_input stays instantaneous"
    );

    // The real Strix Halo table in the APU tree: a 1 s filter on the socket and the gfx power, and
    // its throttle counters in every reading.
    let dir = tempfile::tempdir().unwrap();
    let copied =
        std::process::Command::new("cp").arg("-r").arg(sysfs("apu-v3_0").join("class")).arg(dir.path()).status();
    assert!(copied.unwrap().success());
    std::fs::write(dir.path().join("class/drm/card1/device/gpu_metrics"), blob("v3_0_strix_halo_amdtop.bin")).unwrap();
    let mut real = AmdgpuSysfs::open(dir.path(), 0).unwrap();
    let fields = real.power_fields();
    let by = |f: Field| fields.iter().find(|p| p.field == f).unwrap_or_else(|| panic!("{f:?} in {fields:?}"));
    assert_eq!((by(Field::PowerW).kind, by(Field::PowerW).filter_ms), (PowerKind::Average, Some(1000.0)));
    assert!(by(Field::PowerW).origin.contains("firmware's filtered socket power"), "{:?}", by(Field::PowerW));
    assert_eq!(by(Field::GfxPowerW).filter_ms, Some(1000.0));
    let r = real.read().unwrap();
    assert_eq!((r.throttle_fppt, r.throttle_sppt, r.throttle_thm_core), (Some(461_257.0), Some(134_744.0), Some(95.0)));
    assert_eq!((r.throttle_prochot, r.throttle_thm_gfx), (Some(0.0), Some(0.0)));
}

#[test]
fn sysfs_without_a_card_or_with_a_bad_index_names_the_fix() {
    let empty = tempfile::tempdir().unwrap();
    let e = AmdgpuSysfs::open(empty.path(), 0).err().unwrap();
    assert!(matches!(e, TelemetryError::NoAmdgpuCard { .. }) && e.to_string().contains("--sysfs-root"), "{e}");
    let e = AmdgpuSysfs::open(&sysfs("dgpu-v1_3"), 3).err().unwrap();
    assert!(matches!(e, TelemetryError::NoSuchDevice { index: 3, count: 1, .. }), "{e}");
}

#[test]
fn rocm_smi_from_debian_loads_and_names_the_missing_device() {
    let lib = match RocmSmiLibrary::load() {
        Ok(lib) => lib,
        Err(e) => {
            assert!(matches!(e, TelemetryError::LibraryMissing { .. }), "{e}");
            eprintln!("SKIP rocm_smi test: {e} (scripts/test installs Debian's librocm-smi64-1)");
            return;
        }
    };
    eprintln!("loaded {} version {:?}", lib.path(), lib.version());
    assert!(lib.version().is_some(), "rsmi_version_get works before rsmi_init");
    match lib.init(0) {
        Err(TelemetryError::NoAmdDevice { detail, .. }) => {
            assert!(detail.contains("RSMI_STATUS_INIT_ERROR") || detail.contains("0 devices"), "{detail}");
        }
        Ok(mut smi) => {
            // A host with an AMD GPU: the reading must carry something.
            let r = smi.read().unwrap();
            assert!(r.present().count() > 0, "{}", smi.describe());
        }
        Err(e) => panic!("unexpected ROCm SMI error: {e}"),
    }
}

#[test]
fn rocm_smi_from_a_missing_path_is_library_missing() {
    let e = RocmSmiLibrary::load_from(&["/nonexistent/librocm_smi64.so.1"]).err().unwrap();
    assert!(matches!(e, TelemetryError::LibraryMissing { library: "librocm_smi64", .. }), "{e}");
}

#[test]
fn nvml_is_missing_here_or_works_on_a_gpu_host() {
    let e = NvmlLibrary::load_from(&["/nonexistent/libnvidia-ml.so.1"]).err().unwrap();
    assert!(matches!(e, TelemetryError::LibraryMissing { library: "libnvidia-ml", .. }), "{e}");
    assert!(e.to_string().contains("/nonexistent/libnvidia-ml.so.1"), "{e}");
    match NvmlLibrary::load() {
        Err(e) => assert!(matches!(e, TelemetryError::LibraryMissing { .. }), "{e}"),
        Ok(lib) => match lib.init(0, Some(Duration::from_secs(1))) {
            Err(TelemetryError::NoNvidiaDevice { .. }) => {}
            Err(e) => panic!("unexpected NVML error: {e}"),
            Ok(mut nvml) => {
                let r = nvml.read().unwrap();
                assert!(r.power_w.or(r.power_avg_w).is_some_and(|w| w > 0.0), "{}: {r:?}", nvml.describe());
                assert!(r.gfx_clock_mhz.is_some() && r.vram_used_bytes.is_some(), "{r:?}");
                std::thread::sleep(Duration::from_millis(300));
                let mut driver = Vec::new();
                nvml.drain_driver_power(&mut driver).unwrap();
                eprintln!("{}: {r:?}; {} driver power samples", nvml.describe(), driver.len());
            }
        },
    }
}

#[test]
fn auto_explains_its_choice() {
    let o = OpenOptions { sysfs_root: sysfs("apu-v3_0"), ..OpenOptions::default() };
    let opened = open(&o).unwrap();
    if opened.source.kind() == SourceKind::AmdgpuSysfs {
        assert!(opened.why.contains("auto chose amdgpu-sysfs after passing over nvml"), "{}", opened.why);
    }
    let empty = tempfile::tempdir().unwrap();
    let o = OpenOptions {
        sysfs_root: empty.path().to_owned(),
        pid: Some(std::process::id() as i32),
        ..OpenOptions::default()
    };
    let opened = open(&o).unwrap();
    if opened.source.kind() == SourceKind::Cpu {
        assert!(
            opened.why.contains("nvml:") && opened.why.contains("amdgpu-sysfs:") && opened.why.contains("rocm-smi:"),
            "{}",
            opened.why
        );
    }
    let e = open(&OpenOptions { kind: SourceKind::Cpu, ..OpenOptions::default() }).err().unwrap();
    assert!(matches!(e, TelemetryError::CpuNeedsPid), "{e}");
}

#[test]
fn the_sampler_runs_a_sysfs_source_with_the_servers_cpu() {
    let o = OpenOptions {
        kind: SourceKind::AmdgpuSysfs,
        sysfs_root: sysfs("dgpu-v1_3"),
        pid: Some(std::process::id() as i32),
        ..OpenOptions::default()
    };
    let source = open(&o).unwrap().source;
    let done = Sampler::run_for(source, SamplerConfig::new(200.0, 1000), Duration::from_millis(400)).unwrap();
    let st = &done.first().series.stats;
    assert!(st.reads >= 40 && st.read_errors == 0, "{st:?}");
    assert!(done.first().series.samples.iter().all(|s| s.reading.power_w == Some(291.0)));
    assert!(done.first().series.samples.last().unwrap().reading.cpu_pct.is_some(), "a 200 ms CPU window has closed");
    assert!(st.fields.iter().any(|f| f.field == Field::CpuPct));
    assert!(st.source.contains("/proc/"), "{}", st.source);
}

#[test]
fn monitor_records_csv_and_reports_rates() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("m.csv");
    let out = assert_cmd::Command::cargo_bin("abprof")
        .unwrap()
        .args(["monitor", "--telemetry", "amdgpu-sysfs", "--hz", "200", "--duration", "500ms", "--csv"])
        .arg(&csv)
        .arg("--sysfs-root")
        .arg(sysfs("apu-v3_0"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    for needle in ["Hz achieved", "jitter:", "CPU:", "real update interval", "gfx_power_w"] {
        assert!(stdout.contains(needle), "{needle} missing from:\n{stdout}");
    }
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = text.lines();
    assert!(lines.next().unwrap().starts_with("mono_ns,boot_ns,late_us,busy_pct"));
    assert!(lines.count() >= 50);

    let bad =
        assert_cmd::Command::cargo_bin("abprof").unwrap().args(["monitor", "--telemetry", "gpu"]).output().unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("choose one of"));
}

/// SIGTERM (a supervisor, `timeout`) and SIGHUP (a closed ssh session) end an open-ended monitor
/// run like Ctrl-C: the CSV and statistics are written and the account printed, exit 0.
#[test]
fn monitor_stops_cleanly_on_sigterm_and_sighup() {
    use nix::sys::signal::{kill, Signal};
    for signal in [Signal::SIGTERM, Signal::SIGHUP] {
        let dir = tempfile::tempdir().unwrap();
        let (csv, stats) = (dir.path().join("m.csv"), dir.path().join("stats.json"));
        let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("abprof"))
            .args(["monitor", "--telemetry", "amdgpu-sysfs", "--hz", "200", "--csv"])
            .arg(&csv)
            .arg("--stats-json")
            .arg(&stats)
            .arg("--sysfs-root")
            .arg(sysfs("apu-v3_0"))
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // Running once the CSV has rows past its header.
        let t0 = std::time::Instant::now();
        while std::fs::read_to_string(&csv).unwrap_or_default().lines().count() < 2 {
            assert!(t0.elapsed() < std::time::Duration::from_secs(20), "the monitor never wrote a row");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        kill(nix::unistd::Pid::from_raw(child.id() as i32), signal).unwrap();
        let sent = std::time::Instant::now();
        let out = child.wait_with_output().unwrap();
        let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert_eq!(out.status.code(), Some(0), "{signal}: {stdout}\n{stderr}");
        assert!(sent.elapsed() < std::time::Duration::from_secs(3), "{signal}: took {:?}", sent.elapsed());
        assert!(stdout.contains("Hz achieved"), "{signal}: the account is printed: {stdout}");
        let rows = std::fs::read_to_string(&csv).unwrap().lines().count();
        let st: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
        assert!(st["stats"]["reads"].as_u64().unwrap() > 0, "{signal}: {st}");
        assert!(rows > 2, "{signal}: the CSV is flushed: {rows} lines");
    }
}

/// The real AMD SMI that scripts/amdsmi made: (library, runtime folder or None for this host's).
/// `None` (and a note) where the script was not run, unless scripts/test requires it.
fn amd_smi() -> Option<(PathBuf, Option<PathBuf>)> {
    match std::env::var_os("AMDSMI_LIB") {
        Some(lib) => {
            let runtime = std::env::var_os("AMDSMI_RUNTIME").filter(|r| !r.is_empty()).map(PathBuf::from);
            Some((PathBuf::from(lib), runtime))
        }
        None => {
            assert!(
                std::env::var_os("ABPROF_REQUIRE_AMDSMI").is_none(),
                "AMDSMI_LIB is unset: run eval \"$(scripts/amdsmi)\" first"
            );
            eprintln!("SKIP AMD SMI test: AMDSMI_LIB unset (eval \"$(scripts/amdsmi)\"; scripts/test does)");
            None
        }
    }
}

/// A command that runs `program` in a process that can load `lib`: under the runtime's own
/// loader when scripts/amdsmi took Debian's build, which needs a newer C library than the host's.
fn under_amd_smi_runtime(program: &Path, lib: &Path, runtime: Option<&Path>) -> std::process::Command {
    let mut cmd = match runtime {
        Some(rt) => {
            let mut c = std::process::Command::new(rt.join("usr/lib64/ld-linux-x86-64.so.2"));
            c.arg("--library-path").arg(rt.join("usr/lib/x86_64-linux-gnu")).arg(program);
            c
        }
        None => std::process::Command::new(program),
    };
    cmd.env("ABPROF_AMDSMI_LIB", lib);
    cmd
}

/// The files the dynamic loader opened in a child, from glibc's own LD_DEBUG=files trace.
fn loaded_by(mut cmd: std::process::Command, dir: &Path) -> (std::process::Output, String) {
    let trace = dir.join("ld");
    let out = cmd.env("LD_DEBUG", "files").env("LD_DEBUG_OUTPUT", &trace).output().unwrap();
    let mut files = String::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        if e.file_name().to_string_lossy().starts_with("ld.") {
            files += &std::fs::read_to_string(e.path()).unwrap();
        }
    }
    (out, files)
}

/// Every struct abprof hands AMD SMI, laid out by bindgen from amdsmi.h 10.1, against AMD's own
/// generated ctypes wrapper (PyPI amdsmi 7.0.2): the fields abprof reads sit where both say, and
/// the unified table is at least as large as the older library writes.
#[test]
fn amd_smi_bindings_match_amds_own_ctypes_layouts() {
    use abprof_sys::amd_smi as sys;
    use std::mem::{offset_of, size_of};
    let fixture: Value = serde_json::from_str(
        &std::fs::read_to_string(fixtures().join("amdsmi/layout-pypi-amdsmi-7.0.2.json")).unwrap(),
    )
    .unwrap();
    let structs = &fixture["structs"];
    let want = |s: &str, f: &str| structs[s]["offsets"][f].as_u64().unwrap() as usize;
    let size = |s: &str| structs[s]["size"].as_u64().unwrap() as usize;

    assert_eq!(size_of::<sys::amdsmi_version_t>(), size("amdsmi_version_t"));
    assert_eq!(offset_of!(sys::amdsmi_version_t, major), want("amdsmi_version_t", "major"));
    assert_eq!(offset_of!(sys::amdsmi_version_t, release), want("amdsmi_version_t", "release"));
    assert_eq!(offset_of!(sys::amdsmi_version_t, build), want("amdsmi_version_t", "build"));

    let p = "amdsmi_power_info_t";
    assert_eq!(size_of::<sys::amdsmi_power_info_t>(), size(p));
    assert_eq!(offset_of!(sys::amdsmi_power_info_t, socket_power), want(p, "socket_power"));
    assert_eq!(offset_of!(sys::amdsmi_power_info_t, current_socket_power), want(p, "current_socket_power"));
    assert_eq!(offset_of!(sys::amdsmi_power_info_t, average_socket_power), want(p, "average_socket_power"));
    assert_eq!(offset_of!(sys::amdsmi_power_info_t, power_limit), want(p, "power_limit"));

    let h = "amd_metrics_table_header_t";
    assert_eq!(size_of::<sys::amd_metrics_table_header_t>(), size(h));
    assert_eq!(offset_of!(sys::amd_metrics_table_header_t, format_revision), want(h, "format_revision"));
    assert_eq!(offset_of!(sys::amd_metrics_table_header_t, content_revision), want(h, "content_revision"));

    let m = "amdsmi_gpu_metrics_t";
    macro_rules! same {
        ($($field:ident),*) => {$(
            assert_eq!(offset_of!(sys::amdsmi_gpu_metrics_t, $field), want(m, stringify!($field)), stringify!($field));
        )*};
    }
    // What abprof reads of the unified table sits where both say…
    same!(
        common_header,
        temperature_edge,
        temperature_hotspot,
        temperature_mem,
        average_gfx_activity,
        average_umc_activity,
        average_socket_power,
        energy_accumulator,
        system_clock_counter,
        current_gfxclk,
        current_uclk
    );
    // …and past it the two disagree: AMD SMI 27 widened the v1.1 activity accumulators to 64 bits,
    // which moved every later field by 8 bytes. abprof reads none of them from this table (its
    // socket power comes from amdsmi_power_info_t), so one reader serves libraries 24–27.
    assert_eq!(offset_of!(sys::amdsmi_gpu_metrics_t, current_socket_power), want(m, "current_socket_power") + 8);
    // 27.x grew the table (per-partition XCD temperatures, the APU pointer at its end): a 7.0.2
    // library writes less than abprof's buffer holds, never more, and leaves the pointer null.
    assert!(size_of::<sys::amdsmi_gpu_metrics_t>() >= size(m));
    assert!(offset_of!(sys::amdsmi_gpu_metrics_t, apu_metrics) >= want(m, "xgmi_link_status"));
    assert!(fixture["source"].as_str().unwrap().contains("amdsmi==7.0.2"));
}

/// The real AMD SMI in a child process (the test binary itself, re-run under the library's
/// runtime): its version before init, the library's own status words, "no device" on this
/// GPU-less host, ROCm SMI refused afterwards, and the process's maps holding AMD SMI alone.
#[test]
fn amd_smi_real_library_version_status_no_device_and_one_smi_per_process() {
    if std::env::var_os("ABPROF_AMDSMI_CHILD").is_some() {
        return amd_smi_child();
    }
    let Some((lib, runtime)) = amd_smi() else { return };
    let me = std::env::current_exe().unwrap();
    let mut cmd = under_amd_smi_runtime(&me, &lib, runtime.as_deref());
    let out = cmd
        .args(["--exact", "amd_smi_real_library_version_status_no_device_and_one_smi_per_process", "--nocapture"])
        .env("ABPROF_AMDSMI_CHILD", "1")
        .output()
        .unwrap();
    let text = format!("{}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "the child failed:\n{text}");
    assert!(text.contains("AMD SMI child checks passed"), "the child ran no check:\n{text}");
}

fn amd_smi_child() {
    use abprof::telemetry::amd_smi::AmdSmiLibrary;
    let lib_path = std::env::var("ABPROF_AMDSMI_LIB").unwrap();
    let lib = AmdSmiLibrary::load_from(&[lib_path.as_str()]).unwrap_or_else(|e| panic!("{e}"));
    let (major, minor, release) = lib.version().expect("amdsmi_get_lib_version works before amdsmi_init");
    assert!(major >= 24, "{major}.{minor}.{release}");
    eprintln!("loaded {} version {major}.{minor}.{release}", lib.path());
    let maps = || std::fs::read_to_string("/proc/self/maps").unwrap();
    assert!(maps().contains("libamd_smi.so"), "AMD SMI is mapped");
    // The status→error step words a status as the library does.
    assert!(lib.status(34).contains("AMDSMI_STATUS_DRIVER_NOT_LOADED"), "{}", lib.status(34));
    assert!(lib.status(2).contains("AMDSMI_STATUS_NOT_SUPPORTED"), "{}", lib.status(2));
    match lib.init(0) {
        Err(TelemetryError::NoAmdDevice { library, detail }) => {
            assert_eq!(library, "AMD SMI");
            assert!(detail.contains("amdsmi_init returned AMDSMI_STATUS_"), "{detail}");
            eprintln!("no device: {detail}");
        }
        Ok(mut smi) => {
            let r = smi.read().unwrap();
            assert!(r.present().count() > 0, "{}", smi.describe());
        }
        Err(e) => panic!("unexpected AMD SMI error: {e}"),
    }
    // Once AMD SMI was loaded (even unloaded again after its failed init), ROCm SMI never is.
    let e = RocmSmiLibrary::load().err().expect("ROCm SMI must not load beside AMD SMI");
    assert!(matches!(e, TelemetryError::OtherSmiLoaded { .. }) && e.to_string().contains("§9.2"), "{e}");
    assert!(!maps().contains("librocm_smi64"), "ROCm SMI was never loaded:\n{}", maps());
    assert_eq!(
        std::env::var("AMDSMI_GPU_METRICS_CACHE_MS").as_deref(),
        Ok("0"),
        "the library's metrics cache is off for abprof's reads"
    );
    println!("AMD SMI child checks passed");
}

/// `abprof monitor --telemetry amdsmi` on a host without an AMD GPU: one line naming the cause,
/// a failing exit and no crash, and the loader never opened ROCm SMI in that process.
#[test]
fn monitor_with_amd_smi_names_the_missing_device_and_never_loads_rocm_smi() {
    let Some((lib, runtime)) = amd_smi() else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = under_amd_smi_runtime(&assert_cmd::cargo::cargo_bin("abprof"), &lib, runtime.as_deref());
    cmd.args(["monitor", "--telemetry", "amdsmi", "--duration", "200ms"]);
    let (out, loaded) = loaded_by(cmd, dir.path());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "a clear failure, not a crash: {stderr}");
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "one line: {stderr}");
    assert!(lines[0].contains("no AMD GPU found by AMD SMI") && lines[0].contains("AMDSMI_STATUS_"), "{stderr}");
    assert!(loaded.contains("libamd_smi.so"), "AMD SMI was loaded: {loaded}");
    assert!(!loaded.contains("librocm_smi64"), "ROCm SMI was opened in the same process:\n{loaded}");
}

/// `auto` tries AMD SMI first; once it loaded (and found no device here), ROCm SMI is passed
/// over unopened and amdgpu sysfs (a fixture tree) is chosen.
#[test]
fn auto_tries_amd_smi_first_and_then_never_opens_rocm_smi() {
    let Some((lib, runtime)) = amd_smi() else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = under_amd_smi_runtime(&assert_cmd::cargo::cargo_bin("abprof"), &lib, runtime.as_deref());
    cmd.args(["monitor", "--telemetry", "auto", "--hz", "50", "--duration", "200ms", "--sysfs-root"])
        .arg(sysfs("apu-v3_0"));
    let (out, loaded) = loaded_by(cmd, dir.path());
    let text = format!("{}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{text}");
    assert!(text.contains("auto chose amdgpu-sysfs"), "{text}");
    assert!(text.contains("amd-smi: no AMD GPU found by AMD SMI"), "{text}");
    assert!(text.contains("rocm-smi: ROCm SMI (librocm_smi64) not opened"), "{text}");
    assert!(loaded.contains("libamd_smi.so"), "AMD SMI was loaded: {loaded}");
    assert!(!loaded.contains("librocm_smi64"), "ROCm SMI was opened in the same process:\n{loaded}");
}
