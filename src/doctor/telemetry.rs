//! Which telemetry source a study's `--telemetry` would open, why, and its refresh measured now
//! as a study measures it at its start (docs/methodology.md §9.2).
use super::finding::Finding;
use crate::telemetry::refresh::{measure, PROBE};
use crate::telemetry::{open, OpenOptions, SourceKind};

const NAME: &str = "telemetry";

pub(crate) fn finding(o: &OpenOptions) -> Finding {
    let mut opened = match open(o) {
        Ok(opened) => opened,
        Err(e) => {
            return Finding::warn(
                NAME,
                format!("--telemetry {}: {e}", o.kind),
                "install the vendor's library (NVML with the NVIDIA driver, AMD SMI or ROCm SMI with ROCm) or pass --telemetry auto",
            )
        }
    };
    if opened.source.kind() == SourceKind::None && o.kind == SourceKind::None {
        return Finding::not_present(
            NAME,
            "none, as --telemetry none asks (a study reads the server's CPU instead)",
            None,
        );
    }
    if opened.source.kind() == SourceKind::None {
        // One short line: a CPU-only host is common and normal; why each backend did not open is
        // the detail (--verbose, --json).
        return Finding::not_present(
            NAME,
            "no GPU telemetry on this host (a study reads the server's CPU instead)",
            Some("on a GPU host: the NVIDIA driver's NVML, AMD SMI, ROCm SMI or the amdgpu driver (why each did not open: --verbose)".into()),
        )
        .with_detail(opened.why);
    }
    let described = format!("{} ({})", opened.source.describe(), opened.why);
    let refresh = match measure(opened.source.as_mut()) {
        Some(r) => format!(
            "refresh: one new {} every {:.1} ms ({:.0}/s over {:.1} s)",
            r.field.name(),
            r.interval_ms,
            r.distinct_per_s,
            r.probe_s
        ),
        None => format!(
            "refresh not measured: no value changed twice in {} ms (an idle device's power may sit still)",
            PROBE.as_millis()
        ),
    };
    Finding::ok(NAME, format!("{described}; {refresh}"))
}

#[cfg(test)]
mod tests {
    use super::super::finding::Status;
    use super::*;
    use std::path::Path;

    fn fixture(name: &str) -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sysfs").join(name)
    }

    #[test]
    fn an_amdgpu_card_is_found_and_its_refresh_probed() {
        let o =
            OpenOptions { kind: SourceKind::AmdgpuSysfs, sysfs_root: fixture("dgpu-v1_3"), ..OpenOptions::default() };
        let f = finding(&o);
        assert_eq!(f.status, Status::Ok, "{}", f.value);
        assert!(f.value.contains("amdgpu-sysfs as requested"), "{}", f.value);
        // A fixture's gpu_metrics never changes: nothing to date a refresh by.
        assert!(f.value.contains("refresh not measured"), "{}", f.value);
    }

    #[test]
    fn no_gpu_is_not_present_and_a_missing_backend_warns() {
        let empty = tempfile::tempdir().unwrap();
        let none = OpenOptions { kind: SourceKind::None, sysfs_root: empty.path().into(), ..OpenOptions::default() };
        assert_eq!(finding(&none).status, Status::NotPresent);
        // Auto on a host without a GPU: one short line, each backend's reason in the detail.
        let auto = OpenOptions { kind: SourceKind::Auto, sysfs_root: empty.path().into(), ..OpenOptions::default() };
        let f = finding(&auto);
        assert_eq!(
            (f.status, f.value.as_str()),
            (Status::NotPresent, "no GPU telemetry on this host (a study reads the server's CPU instead)")
        );
        let detail = f.detail.unwrap();
        assert!(detail.contains("amdgpu-sysfs") && detail.contains("nvml"), "{detail}");
        let sysfs =
            OpenOptions { kind: SourceKind::AmdgpuSysfs, sysfs_root: empty.path().into(), ..OpenOptions::default() };
        let f = finding(&sysfs);
        assert_eq!(f.status, Status::Warn);
        assert!(f.value.starts_with("--telemetry amdgpu-sysfs: "), "{}", f.value);
    }
}
