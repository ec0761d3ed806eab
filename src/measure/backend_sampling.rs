//! Whether `--backend-sampling` engaged in a sample (docs/methodology.md §7.20): llama.cpp warns
//! in the server log whenever it falls back to sampling on the CPU — a grammar or a reasoning
//! budget in the request (`common_sampler_init`), a sampler chain that cannot be offloaded or a
//! tensor-split model (`llama_context::set_sampler`). At the server's default verbosity nothing
//! says that the device sampled, so the proof is the absence of every fallback line in a sample
//! that asked for the flag. It cannot see a fallback that prints nothing (the HIP probe of
//! ggml-org/llama.cpp#28513, §7.20 says what to do there).
use serde::{Deserialize, Serialize};

/// The fallback warnings of the pinned llama.cpp (src/llama-context.cpp, common/sampling.cpp).
const FALLBACK_LINES: [&str; 4] = [
    "backend sampling is not compatible with",
    "cannot be offloaded to the backend",
    "backend sampling not supported",
    "backend sampling is not supported",
];

/// What a sample that asked for `--backend-sampling` showed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct BackendSamplingProof {
    /// No fallback warning in the server log.
    pub(crate) engaged: bool,
    /// The first fallback warning, trimmed (None when engaged).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) fallback: Option<String>,
}

/// Whether `argv` asks for backend sampling (llama.cpp's `-bs` / `--backend-sampling`).
pub(crate) fn requested(argv: &[String]) -> bool {
    argv.iter().any(|a| a == "--backend-sampling" || a == "-bs")
}

/// The proof of a sample whose server ran with `argv` and wrote `log`; None when it did not
/// ask for backend sampling.
pub(crate) fn prove(argv: &[String], log: &str) -> Option<BackendSamplingProof> {
    if !requested(argv) {
        return None;
    }
    let fallback = log.lines().find(|l| FALLBACK_LINES.iter().any(|w| l.contains(w))).map(|l| l.trim().to_string());
    Some(BackendSamplingProof { engaged: fallback.is_none(), fallback })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> String {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/llama-server").join(name);
        std::fs::read_to_string(p).unwrap()
    }

    /// Real server logs of the test bed (tests/fixtures/llama-server/README.md).
    #[test]
    fn a_fallback_warning_in_the_real_log_is_caught_and_a_clean_log_engaged() {
        let bs = vec!["-m".to_string(), "m.gguf".into(), "-bs".into()];
        let clean = prove(&bs, &fixture("backend-sampling-engaged.log")).unwrap();
        assert_eq!(clean, BackendSamplingProof { engaged: true, fallback: None });
        let fell = prove(&bs, &fixture("backend-sampling-grammar-fallback.log")).unwrap();
        assert!(!fell.engaged);
        assert!(fell.fallback.unwrap().contains("backend sampling is not compatible with grammar"));
        let long = vec!["--backend-sampling".to_string()];
        assert!(prove(
            &long,
            "W llama_context: set_sampler: sampler 'chain' for seq_id = 0, cannot be offloaded to the backend"
        )
        .is_some_and(|p| !p.engaged));
        assert_eq!(prove(&["-m".into()], &fixture("backend-sampling-grammar-fallback.log")), None, "not asked");
    }
}
