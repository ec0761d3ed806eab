//! The noise hint (docs/methodology.md §8 "The noise budget"): a GPU study whose decode samples
//! spread well beyond a cold llama-bench's is told the one server flag measured to close most of
//! the gap, since the server's per-token sampling on the CPU was most of that spread.

/// A decode CV above this (%) on a GPU is well above a cold llama-bench's 1.0–1.4% (§8).
pub(crate) const HINT_CV_PCT: f64 = 2.0;

/// A per-sample CV above this (%) is flagged beside its metric in every report
/// (docs/methodology.md §8 "Per-sample noise"): more than twice the widest spread of cold
/// samples measured on a GPU (4.5%), and a spread at which 10 paired blocks resolve no change
/// below about ±12.5%.
pub(crate) const HIGH_CV_PCT: f64 = 10.0;

/// One variant as the hint reads it: its label, its decode samples' CV (%), and whether every
/// accepted sample's server already sampled on the device.
pub(crate) struct DecodeNoise<'a> {
    pub(crate) label: &'a str,
    pub(crate) cv_pct: Option<f64>,
    pub(crate) backend_sampling: bool,
}

/// Whether a server argv asks llama.cpp to sample on the device.
pub(crate) fn samples_on_device(argv: &[String]) -> bool {
    crate::measure::backend_sampling::requested(argv)
}

/// The hint line, or None: a GPU telemetry source, some variant sampling on the CPU with a
/// decode CV above [`HINT_CV_PCT`], and no sample of the study that asked for the flag and fell
/// back to the CPU (`fell_back`, docs/methodology.md §7.20: on such a host the flag is no cure).
pub(crate) fn backend_sampling_hint(
    telemetry: Option<&str>,
    variants: &[DecodeNoise<'_>],
    fell_back: bool,
) -> Option<String> {
    if fell_back || !matches!(telemetry, Some("nvml" | "amd-smi" | "rocm-smi" | "amdgpu-sysfs")) {
        return None;
    }
    let noisy: Vec<String> = variants
        .iter()
        .filter(|v| !v.backend_sampling)
        .filter_map(|v| v.cv_pct.filter(|&cv| cv > HINT_CV_PCT).map(|cv| format!("{} {cv:.2}%", v.label)))
        .collect();
    (!noisy.is_empty()).then(|| {
        format!(
            "decode CV {} is above a cold llama-bench's (1.0–1.4%): the server samples every token on the CPU; \
             `--backend-sampling` in --server-args (or a variant's extra=) samples on the GPU and took an H200's CV \
             from 3.18% to 1.15% (docs/methodology.md §8 \"The noise budget\"; it changes the server's sampling path)",
            noisy.join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(label: &str, cv: f64, bs: bool) -> DecodeNoise<'_> {
        DecodeNoise { label, cv_pct: Some(cv), backend_sampling: bs }
    }

    #[test]
    fn only_a_noisy_gpu_variant_sampling_on_the_cpu_gets_the_hint() {
        let line = backend_sampling_hint(Some("nvml"), &[v("a", 3.18, false), v("b", 1.2, false)], false).unwrap();
        assert!(line.starts_with("decode CV a 3.18% is above") && line.contains("--backend-sampling"), "{line}");
        assert!(!line.contains("b 1.20%"), "{line}");
        assert_eq!(backend_sampling_hint(Some("nvml"), &[v("a", 3.18, true)], false), None, "already on the GPU");
        assert_eq!(backend_sampling_hint(Some("cpu"), &[v("a", 9.0, false)], false), None, "the CPU test bed");
        assert_eq!(backend_sampling_hint(None, &[v("a", 9.0, false)], false), None);
        assert!(backend_sampling_hint(Some("rocm-smi"), &[v("a", 2.5, false)], false).is_some());
        assert_eq!(backend_sampling_hint(Some("rocm-smi"), &[v("a", 2.5, false)], true), None, "it fell back here");
        assert!(samples_on_device(&["-ngl".into(), "99".into(), "-bs".into()]));
        assert!(!samples_on_device(&["--spec-draft-backend-sampling".into()]));
    }
}
