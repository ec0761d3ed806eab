//! Timing prints that are not llama-server's per-request block.
//!
//! libllama and llama-cli print the same "prompt eval time / eval time" wording for a whole
//! process (tests/fixtures/llama-server-wild/llama-cli-print-2024-09.log); taken for a request it
//! would time the wrong thing, so such lines are never read as a block.

/// What kind of non-server print this message is, if it is one.
pub(super) fn kind(msg: &str) -> Option<&'static str> {
    const KINDS: [(&str, &str); 3] = [
        (
            "llama_print_timings",
            "a `llama_print_timings` summary (llama-cli/main or libllama's own print, up to late 2024)",
        ),
        ("llama_perf", "a `llama_perf_context_print` summary (llama-cli or libllama, since late 2024)"),
        ("common_perf_print", "a `common_perf_print` summary (llama-cli)"),
    ];
    KINDS.iter().find(|(marker, _)| msg.contains(marker)).map(|(_, what)| *what)
}
