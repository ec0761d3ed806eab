//! The wordings of a timing block's lines, every one printed since early 2024.
use regex::Regex;
use std::sync::LazyLock;

// `prompt eval time     =` is the padded 2024 wording (server-text-2024-08.log). A negative time is
// read so that it can be refused by name (parse.rs), not taken for a missing block.
pub(super) static PROMPT_EVAL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"prompt eval time\s*=\s*(-?[0-9.]+) ms /\s*(\d+) tokens \(\s*-?[0-9.]+ ms per token,\s*(-?[0-9.]+|inf|nan) tokens per second\)").unwrap()
});
// `runs` is the 2024 LOG_TEE wording of the same line; `generation eval time` the 2024 server's.
pub(super) static EVAL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:^\s*|[|:]\s*|generation\s+)eval time\s*=\s*(-?[0-9.]+) ms /\s*(\d+) (?:tokens|runs)\s*\(\s*-?[0-9.]+ ms per token,\s*(-?[0-9.]+|inf|nan) tokens per second\)").unwrap()
});
pub(super) static TOTAL: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"total time\s*=\s*([0-9.]+) ms(?: /\s*(\d+) tokens)?").unwrap());
pub(super) static GRAPHS: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"graphs reused =\s*(\d+)").unwrap());
// `mean len` (early 2026) became `mean acceptance length` (mean-acceptance-length-2026-06.log).
pub(super) static DRAFT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"draft acceptance(?: rate)? = ([0-9.]+) \(\s*(\d+) accepted /\s*(\d+) generated\)(?:, mean (?:len|acceptance length) =\s*([0-9.]+))?").unwrap()
});
// Per-position acceptance: inline in the 2026-06 acceptance line, alone on the next line (`acc per
// pos`, the pinned 0c1e57098 at TRACE) and in the statistics line (`#acc rate/pos`, `()` when nothing
// was accepted).
pub(super) static DRAFT_PER_POS_INLINE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"acceptance rate per position = \(([0-9., ]*)\)").unwrap());
pub(super) static DRAFT_PER_POS_LINE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?:^|\|)\s*acc per pos = \(([0-9., ]*)\)").unwrap());
pub(super) static STATS_PER_POS: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"#acc rate/pos = \(([0-9., ]*)\)").unwrap());
pub(super) static STATS_MEAN: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"#mean acc len =\s*([0-9.]+)").unwrap());
pub(super) static STATS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"statistics\s+(\S+?):.*#gen drafts =\s*(\d+), #acc drafts =\s*(\d+), #gen tokens =\s*(\d+), #acc tokens =\s*(\d+)").unwrap()
});
pub(super) static SLOT_TASK: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"id\s+(\d+) \| task (-?\d+) \|").unwrap());
// The one-call block's header alone on its line; the block's own lines follow without it.
pub(super) static BARE_HEADER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"id\s+(\d+) \| task (-?\d+) \|\s*$").unwrap());
