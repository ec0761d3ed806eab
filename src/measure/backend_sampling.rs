//! Whether `--backend-sampling` engaged in a sample (docs/methodology.md §7.20), proven by a
//! presence: at `-lv 4` (which abprof adds to a `-bs` server that sets no verbosity of its own,
//! `LaunchSpec::argv`) the pinned llama.cpp prints each request's sampler chain when its slot
//! launches (`sampler chain: logits -> … -> +top-k -> … -> +dist`), a `+` marking each sampler
//! that runs on the device. The token is picked on the device only when the chain's last sampler
//! carries the mark; a chain the device cannot run whole (DRY, mirostat, typical, XTC, a request
//! for `n_probs`, a request's own `"backend_sampling": false`) ends unmarked and prints no
//! warning. The fallback warnings are read as well: they name the cause. The draft side (a draft
//! model or MTP head) has no per-token proof in the pinned tree; its fallback warning is read.
use serde::{Deserialize, Serialize};

/// The fallback warnings of the pinned llama.cpp (common/sampling.cpp, src/llama-context.cpp,
/// src/llama-sampler.cpp, common/speculative.cpp).
const FALLBACK_LINES: [&str; 6] = [
    "backend sampling is not compatible with",
    "cannot be offloaded to the backend",
    "backend sampling not supported",
    "backend sampling is not supported",
    "does not have support for op",
    "backend offload failed for seq_id",
];

/// What precedes each request's chain in the log (server-context.cpp, at `-lv 4`).
const CHAIN: &str = "sampler chain: ";

/// The verbosity at which the chain is printed.
pub(crate) const PROOF_VERBOSITY: &str = "4";

/// What a sample that asked for `--backend-sampling` showed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct BackendSamplingProof {
    /// Every request's chain ended on the device, and no fallback warning.
    pub(crate) engaged: bool,
    /// The first fallback warning, trimmed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) fallback: Option<String>,
    /// Requests whose sampler chain ended on the device (a `+` on its last sampler). Absent in
    /// records of releases that proved by absence alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) chains_on_device: Option<usize>,
    /// Why the sample does not prove it, in words (None when engaged).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) why: Option<String>,
}

impl BackendSamplingProof {
    /// The reason a rule prints: what was missing or what fell back.
    pub(crate) fn reason(&self) -> String {
        self.why.clone().or_else(|| self.fallback.clone()).unwrap_or_else(|| "a fallback line in server.log".into())
    }
}

/// Whether `argv` asks for backend sampling (llama.cpp's `-bs` / `--backend-sampling`).
pub(crate) fn requested(argv: &[String]) -> bool {
    crate::server::asks_backend_sampling(argv)
}

/// The last sampler of a chain (`+dist`), and whether it carries the device's mark.
fn ends_on_device(chain: &str) -> bool {
    chain.trim().rsplit(" -> ").next().is_some_and(|last| last.starts_with('+'))
}

/// The proof of a sample whose server ran with `argv` and wrote `log`; None when it did not
/// ask for backend sampling.
pub(crate) fn prove(argv: &[String], log: &str) -> Option<BackendSamplingProof> {
    if !requested(argv) {
        return None;
    }
    let fallback = log.lines().find(|l| FALLBACK_LINES.iter().any(|w| l.contains(w))).map(|l| l.trim().to_string());
    let chains: Vec<&str> = log.lines().filter_map(|l| l.split_once(CHAIN).map(|(_, c)| c.trim())).collect();
    let on_device = chains.iter().filter(|c| ends_on_device(c)).count();
    let why = if let Some(f) = &fallback {
        Some(format!("the server sampled on the CPU: {f}"))
    } else if chains.is_empty() {
        Some(format!(
            "no request's sampler chain in the server log, so nothing shows the device sampled: the chain is printed at -lv {PROOF_VERBOSITY} (abprof adds it unless the variant sets a verbosity; set none, or -lv {PROOF_VERBOSITY} or more)"
        ))
    } else {
        chains.iter().find(|c| !ends_on_device(c)).map(|cpu| {
            format!(
                "{} of {} requests' sampler chains ended on the CPU (`{cpu}`: its last sampler has no `+`): a sampler the device cannot run (DRY, mirostat, typical, XTC), n_probs or the request's own \"backend_sampling\": false",
                chains.len() - on_device,
                chains.len()
            )
        })
    };
    Some(BackendSamplingProof { engaged: why.is_none(), fallback, chains_on_device: Some(on_device), why })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> String {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/llama-server").join(name);
        std::fs::read_to_string(p).unwrap()
    }

    fn bs() -> Vec<String> {
        vec!["-m".to_string(), "m.gguf".into(), "-bs".into()]
    }

    /// Real server logs of the test bed at -lv 4 (tests/fixtures/llama-server/README.md): the
    /// chain ending `+dist` proves it; DRY's chain ends unmarked with no warning at all.
    #[test]
    fn a_chain_ending_on_the_device_proves_it_and_an_unmarked_one_does_not() {
        let engaged = prove(&bs(), &fixture("backend-sampling-lv4-engaged.log")).unwrap();
        assert_eq!(
            engaged,
            BackendSamplingProof { engaged: true, fallback: None, chains_on_device: Some(1), why: None }
        );
        let dry = prove(&bs(), &fixture("backend-sampling-lv4-dry.log")).unwrap();
        assert!(!dry.engaged && dry.fallback.is_none(), "{dry:?}");
        assert!(dry.reason().contains("1 of 1 requests' sampler chains ended on the CPU"), "{}", dry.reason());
        assert!(dry.reason().contains("-> dry ->"), "{}", dry.reason());
    }

    /// The log of an earlier capture at the default verbosity: no chain, so nothing proves it.
    #[test]
    fn a_log_without_a_chain_proves_nothing_and_says_how_to_get_one() {
        let p = prove(&bs(), &fixture("backend-sampling-engaged.log")).unwrap();
        assert!(!p.engaged);
        assert!(p.reason().contains("printed at -lv 4"), "{}", p.reason());
    }

    #[test]
    fn a_fallback_warning_is_caught_and_named() {
        let fell = prove(&bs(), &fixture("backend-sampling-grammar-fallback.log")).unwrap();
        assert!(!fell.engaged);
        assert!(fell.reason().contains("backend sampling is not compatible with grammar"), "{}", fell.reason());
        let long = vec!["--backend-sampling".to_string()];
        let draft = "0.01.2 W spec common_specu: backend offload failed for seq_id=0; using CPU sampler\n\
                     0.01.3 I slot launch_slot_: id  0 | task -1 | sampler chain: logits -> +top-k -> +dist";
        assert!(prove(&long, draft).is_some_and(|p| !p.engaged && p.reason().contains("backend offload failed")));
        assert_eq!(prove(&["-m".into()], &fixture("backend-sampling-grammar-fallback.log")), None, "not asked");
    }

    #[test]
    fn the_last_sampler_carries_the_mark() {
        assert!(ends_on_device("logits -> ?penalties -> +top-k -> +temp-ext -> +dist"));
        assert!(!ends_on_device("logits -> +temp -> mirostat-v2"), "a partial offload picks on the CPU");
        assert!(!ends_on_device("logits -> top-k -> dist"));
    }
}
