//! An APU's memory and platform (docs/methodology.md §21): on Strix Halo the GPU's model lives in
//! GTT, system memory the GPU maps, so what ROCm can allocate is bounded by both amdgpu's GTT size
//! and TTM's page limit; the ACPI platform profile sets the power budget; and the IOMMU mode
//! decides whether every GPU access of system memory is translated.
use super::finding::Finding;
use std::path::{Path, PathBuf};

/// TTM's pages are 4 KiB.
const PAGE: u64 = 4096;
const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

/// The amdgpu cards whose gpu_metrics table is an APU's (v2_x, v3_x).
fn apu_cards(sys: &Path) -> Vec<PathBuf> {
    let mut cards: Vec<PathBuf> = std::fs::read_dir(sys.join("class/drm"))
        .map(|d| {
            d.flatten()
                .map(|e| e.path())
                .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(is_card))
                .map(|p| p.join("device"))
                .filter(|d| {
                    let table = std::fs::read(d.join("gpu_metrics")).ok();
                    table.is_some_and(|b| b.len() >= 4 && matches!(b[2], 2 | 3))
                })
                .collect()
        })
        .unwrap_or_default();
    cards.sort();
    cards
}

fn is_card(name: &str) -> bool {
    name.strip_prefix("card").is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

fn read_u64(path: &Path) -> Option<u64> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// A `name=value` word of the kernel command line.
fn cmdline_value<'a>(cmdline: &'a str, name: &str) -> Option<&'a str> {
    cmdline.split_whitespace().find_map(|w| w.strip_prefix(name)?.strip_prefix('='))
}

/// GTT against TTM's page limit (they must agree, or ROCm sees about the smaller:
/// kyuz0/amd-strix-halo-toolboxes#98), and both against the model a study would load.
pub(crate) fn memory(sys: &Path, cmdline: &str, model: Option<&Path>) -> Finding {
    const NAME: &str = "apu memory";
    let Some(card) = apu_cards(sys).into_iter().next() else {
        return Finding::not_present(NAME, "no amdgpu APU (no gpu_metrics v2/v3 table)", None);
    };
    let gtt = read_u64(&card.join("mem_info_gtt_total"));
    let ttm_pages = read_u64(&sys.join("module/ttm/parameters/pages_limit"));
    let gttsize_mib: Option<u64> = cmdline_value(cmdline, "amdgpu.gttsize").and_then(|v| v.parse().ok());
    let ttm_bytes = ttm_pages.map(|p| p * PAGE);
    let gib = |b: u64| format!("{:.1} GiB", b as f64 / GIB);
    let mut said = Vec::new();
    if let Some(g) = gtt {
        said.push(format!("GTT {}", gib(g)));
    }
    if let Some(t) = ttm_bytes {
        said.push(format!("TTM pages_limit {} pages ({})", ttm_pages.unwrap_or(0), gib(t)));
    }
    if let Some(m) = gttsize_mib {
        said.push(format!("amdgpu.gttsize={m} MiB"));
    }
    let value = if said.is_empty() { "GTT and TTM limits not readable".to_string() } else { said.join(", ") };
    // The limits agree within 1%: TTM counts pages, amdgpu MiB.
    let apart = |a: u64, b: u64| (a as f64 - b as f64).abs() > 0.01 * a.max(b) as f64;
    if let (Some(m), Some(t)) = (gttsize_mib, ttm_bytes) {
        if apart(m * 1024 * 1024, t) {
            return Finding::warn(
                NAME,
                value,
                format!(
                    "amdgpu.gttsize and ttm.pages_limit disagree, and ROCm sees about the smaller: boot with ttm.pages_limit={} (amdgpu.gttsize={m} MiB in 4 KiB pages), or drop amdgpu.gttsize and set ttm.pages_limit alone",
                    m * 1024 * 1024 / PAGE
                ),
            );
        }
    }
    if let (Some(g), Some(t)) = (gtt, ttm_bytes) {
        if apart(g, t) {
            return Finding::warn(
                NAME,
                value,
                format!(
                    "the GPU's GTT ({}) and TTM's page limit ({}) disagree, and ROCm sees about the smaller: set both on the kernel command line to the same size (ttm.pages_limit={} for the GTT's)",
                    gib(g),
                    gib(t),
                    g / PAGE
                ),
            );
        }
    }
    let room = [gtt, ttm_bytes].into_iter().flatten().min();
    if let (Some(room), Some(model)) = (room, model) {
        let size = std::fs::metadata(model).map(|m| m.len()).unwrap_or(0);
        if size as f64 > 0.9 * room as f64 {
            return Finding::warn(
                NAME,
                format!("{value}; model {} {}", model.display(), gib(size)),
                format!(
                    "the model takes more than 90% of what the GPU may map ({}), leaving too little for its KV cache and compute buffers: raise ttm.pages_limit (and amdgpu.gttsize where set) or load a smaller model",
                    gib(room)
                ),
            );
        }
        return Finding::ok(NAME, format!("{value}; model {} leaves {}", gib(size), gib(room.saturating_sub(size))));
    }
    Finding::ok(NAME, value)
}

/// The ACPI platform profile: a power-saving one caps the APU's power budget.
pub(crate) fn platform_profile(sys: &Path) -> Finding {
    const NAME: &str = "platform profile";
    let path = sys.join("firmware/acpi/platform_profile");
    let Ok(now) = std::fs::read_to_string(&path) else {
        return Finding::not_present(NAME, format!("no {}", path.display()), None);
    };
    let now = now.trim().to_string();
    let choices = std::fs::read_to_string(sys.join("firmware/acpi/platform_profile_choices")).unwrap_or_default();
    let value = if choices.trim().is_empty() { now.clone() } else { format!("{now} (of {})", choices.trim()) };
    if matches!(now.as_str(), "low-power" | "quiet" | "cool") {
        let to = if choices.split_whitespace().any(|c| c == "performance") { "performance" } else { "balanced" };
        return Finding::warn(
            NAME,
            value,
            format!(
                "a power-saving profile caps the APU's power: `echo {to} | sudo tee {}` (or `powerprofilesctl set {to}`), and keep one profile for every study (abprof records it and never compares across it)",
                path.display()
            ),
        );
    }
    Finding::ok(NAME, value)
}

/// The IOMMU mode of the APU's device: translated DMA puts an IOMMU lookup in front of the GPU's
/// accesses of system memory, where an APU's model lives.
pub(crate) fn iommu(sys: &Path, cmdline: &str) -> Finding {
    const NAME: &str = "iommu";
    let Some(card) = apu_cards(sys).into_iter().next() else {
        return Finding::not_present(NAME, "no amdgpu APU", None);
    };
    let Ok(kind) = std::fs::read_to_string(card.join("iommu_group/type")) else {
        let off = cmdline_value(cmdline, "amd_iommu") == Some("off");
        return Finding::not_present(
            NAME,
            if off { "amd_iommu=off: no IOMMU group" } else { "the APU has no IOMMU group (IOMMU off)" },
            None,
        );
    };
    let kind = kind.trim().to_string();
    if kind == "identity" {
        return Finding::ok(NAME, "identity (pass-through): the GPU's DMA is not translated");
    }
    Finding::warn(
        NAME,
        format!("{kind}: the GPU's DMA to system memory is translated by the IOMMU"),
        "boot with iommu=pt (pass-through for the host's devices) or amd_iommu=off, as Strix Halo inference hosts do; keep the same mode for every study".to_string(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doctor::Status;

    /// A sysfs tree with one APU (the recorded v3_0 table) and the files this module reads.
    fn tree(gtt: u64, ttm_pages: u64, profile: &str, iommu: Option<&str>) -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        let dev = d.path().join("class/drm/card1/device");
        std::fs::create_dir_all(&dev).unwrap();
        let table = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/gpu_metrics/v3_0_strix_halo_amdtop.bin");
        std::fs::copy(table, dev.join("gpu_metrics")).unwrap();
        std::fs::write(dev.join("mem_info_gtt_total"), format!("{gtt}\n")).unwrap();
        if let Some(kind) = iommu {
            std::fs::create_dir_all(dev.join("iommu_group")).unwrap();
            std::fs::write(dev.join("iommu_group/type"), format!("{kind}\n")).unwrap();
        }
        let ttm = d.path().join("module/ttm/parameters");
        std::fs::create_dir_all(&ttm).unwrap();
        std::fs::write(ttm.join("pages_limit"), format!("{ttm_pages}\n")).unwrap();
        let acpi = d.path().join("firmware/acpi");
        std::fs::create_dir_all(&acpi).unwrap();
        std::fs::write(acpi.join("platform_profile"), format!("{profile}\n")).unwrap();
        std::fs::write(acpi.join("platform_profile_choices"), "low-power balanced performance\n").unwrap();
        d
    }

    const GIB: u64 = 1 << 30;

    #[test]
    fn gtt_and_ttm_must_agree_and_hold_the_model() {
        // 120 GiB both ways: fine.
        let ok = tree(120 * GIB, 120 * GIB / PAGE, "performance", Some("identity"));
        let f = memory(ok.path(), "amdgpu.gttsize=122880 ttm.pages_limit=31457280", None);
        assert_eq!(f.status, Status::Ok, "{f:?}");
        assert!(f.value.contains("GTT 120.0 GiB") && f.value.contains("31457280 pages"), "{}", f.value);
        // The command line's gttsize at 120 GiB and a default TTM limit of half the RAM.
        let half = tree(120 * GIB, 64 * GIB / PAGE, "performance", None);
        let f = memory(half.path(), "amdgpu.gttsize=122880", None);
        assert_eq!(f.status, Status::Warn, "{f:?}");
        assert!(f.fix.as_deref().unwrap().contains("ttm.pages_limit=31457280"), "{:?}", f.fix);
        let f = memory(half.path(), "amdgpu.gttsize=122880 ttm.pages_limit=16777216", None);
        assert!(f.fix.as_deref().unwrap().contains("amdgpu.gttsize and ttm.pages_limit disagree"), "{:?}", f.fix);
        // A model larger than 90% of what the GPU may map.
        let small = tree(GIB, GIB / PAGE, "performance", None);
        let model = small.path().join("m.gguf");
        std::fs::write(&model, vec![0u8; (GIB as f64 * 0.95) as usize]).unwrap();
        let f = memory(small.path(), "", Some(&model));
        assert_eq!(f.status, Status::Warn, "{f:?}");
        assert!(f.fix.as_deref().unwrap().contains("KV cache"), "{:?}", f.fix);
        // No APU: nothing to say.
        let none = tempfile::tempdir().unwrap();
        assert_eq!(memory(none.path(), "", None).status, Status::NotPresent);
    }

    #[test]
    fn a_power_saving_profile_and_translated_dma_warn_with_their_fix() {
        let quiet = tree(GIB, GIB / PAGE, "low-power", Some("DMA-FQ"));
        let f = platform_profile(quiet.path());
        assert_eq!(f.status, Status::Warn);
        assert!(f.fix.as_deref().unwrap().contains("echo performance"), "{:?}", f.fix);
        let f = iommu(quiet.path(), "");
        assert_eq!(f.status, Status::Warn);
        assert!(f.value.starts_with("DMA-FQ") && f.fix.as_deref().unwrap().contains("iommu=pt"), "{f:?}");
        let fine = tree(GIB, GIB / PAGE, "balanced", Some("identity"));
        assert_eq!(platform_profile(fine.path()).status, Status::Ok);
        assert_eq!(iommu(fine.path(), "").status, Status::Ok);
        let off = tree(GIB, GIB / PAGE, "balanced", None);
        assert_eq!(iommu(off.path(), "amd_iommu=off").status, Status::NotPresent);
        let none = tempfile::tempdir().unwrap();
        assert_eq!(platform_profile(none.path()).status, Status::NotPresent);
    }
}
