//! The request timing block of a llama-server log.
//!
//! The server prints one block per finished request (`server_slot::print_timings`). A cold-cache
//! sample is only trustworthy if its log holds exactly one: zero means the request never
//! completed, two mean something else (a retry, a client's second request, a warm-up) shared the
//! server. Every wording this llama.cpp generation and its predecessors print is accepted: text
//! logs with or without the `M.SS.mmm.uuu L` prefix, `--log-jsonl` lines, the 2024 one-call block
//! and `LOG_TEE` form, and the three draft-acceptance wordings.
use regex::Regex;
use serde::{Deserialize, Serialize};
use std::sync::LazyLock;
use thiserror::Error;

/// Speculative decoding's acceptance, as the server reports it for one request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct DraftAcceptance {
    /// Accepted draft tokens over drafted ("generated") tokens.
    pub(crate) rate: f64,
    pub(crate) accepted: u64,
    /// Tokens the draft proposed (llama.cpp calls them "generated").
    pub(crate) generated: u64,
    /// 1 + accepted / verification steps; printed by builds from 2026 on.
    pub(crate) mean_len: Option<f64>,
}

/// The per-implementation statistics line (`statistics draft-simple: #calls…`), printed at INFO
/// in 2025 builds and at TRACE (`-lv 4`) since.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct SpecStatistics {
    pub(crate) implementation: String,
    pub(crate) gen_drafts: u64,
    pub(crate) acc_drafts: u64,
    pub(crate) gen_tokens: u64,
    pub(crate) acc_tokens: u64,
}

/// One request's timing block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct TimingBlock {
    pub(crate) slot: Option<u32>,
    pub(crate) task: Option<i64>,
    /// Prompt tokens processed; excludes tokens reused from the prompt cache.
    pub(crate) prompt_tokens: u64,
    pub(crate) prompt_ms: f64,
    pub(crate) prompt_tps: f64,
    pub(crate) eval_tokens: u64,
    pub(crate) eval_ms: f64,
    pub(crate) eval_tps: f64,
    pub(crate) total_ms: Option<f64>,
    pub(crate) total_tokens: Option<u64>,
    pub(crate) graphs_reused: Option<u64>,
    pub(crate) draft: Option<DraftAcceptance>,
    pub(crate) spec_statistics: Vec<SpecStatistics>,
}

impl TimingBlock {
    /// Server decode TPS recomputed from the interval (N / eval seconds), not the rounded print.
    pub(crate) fn decode_tps(&self) -> f64 {
        per_second(self.eval_tokens as f64, self.eval_ms)
    }

    /// The standards-style (N−1)/eval-seconds estimate: llama-server's interval is not literally
    /// first-to-last token, so both are reported.
    pub(crate) fn decode_tps_n_minus_1(&self) -> f64 {
        per_second(self.eval_tokens.saturating_sub(1) as f64, self.eval_ms)
    }

    pub(crate) fn prefill_tps(&self) -> f64 {
        per_second(self.prompt_tokens as f64, self.prompt_ms)
    }

    pub(crate) fn decode_ms_per_token(&self) -> f64 {
        if self.eval_tokens == 0 {
            f64::NAN
        } else {
            self.eval_ms / self.eval_tokens as f64
        }
    }
}

fn per_second(n: f64, ms: f64) -> f64 {
    if ms > 0.0 {
        n / (ms / 1000.0)
    } else {
        f64::NAN
    }
}

#[derive(Debug, Error, PartialEq)]
pub(crate) enum LogError {
    #[error(
        "no request timing block in the server log: the request never completed (read the log's last lines for why)"
    )]
    NoTimingBlock,
    #[error("{count} request timing blocks in the server log (tasks {tasks}), expected exactly one: restart the server for every sample and send it one request")]
    SeveralTimingBlocks { count: usize, tasks: String },
    #[error("incomplete timing block for task {task}: a 'prompt eval time' line without its 'eval time' line (the log was cut short)")]
    IncompleteBlock { task: String },
}

static PROMPT_EVAL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"prompt eval time =\s*([0-9.]+) ms /\s*(\d+) tokens \(\s*[0-9.]+ ms per token,\s*([0-9.]+|inf|nan) tokens per second\)").unwrap()
});
// `runs` is the 2024 LOG_TEE wording of the same line.
static EVAL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:^|[|:]\s*|^\s*)eval time =\s*([0-9.]+) ms /\s*(\d+) (?:tokens|runs)\s*\(\s*[0-9.]+ ms per token,\s*([0-9.]+|inf|nan) tokens per second\)").unwrap()
});
static TOTAL: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"total time =\s*([0-9.]+) ms(?: /\s*(\d+) tokens)?").unwrap());
static GRAPHS: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"graphs reused =\s*(\d+)").unwrap());
static DRAFT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"draft acceptance(?: rate)? = ([0-9.]+) \(\s*(\d+) accepted /\s*(\d+) generated\)(?:, mean len =\s*([0-9.]+))?").unwrap()
});
static STATS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"statistics\s+(\S+?):.*#gen drafts =\s*(\d+), #acc drafts =\s*(\d+), #gen tokens =\s*(\d+), #acc tokens =\s*(\d+)").unwrap()
});
static SLOT_TASK: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"id\s+(\d+) \| task (-?\d+) \|").unwrap());
// `M.SS.mmm.uuu L ` from --log-timestamps/--log-prefix (the defaults of --log-file).
static PREFIX: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^(?:\d+\.\d{2}\.\d{3}\.\d{3} )?(?:[IWEDT] )?").unwrap());

/// The message of one log line: the text after the optional timestamp/level prefix, or the
/// `msg` of a `--log-jsonl` object. Non-log JSONL records yield `None`.
pub(crate) fn message(line: &str) -> Option<std::borrow::Cow<'_, str>> {
    let trimmed = line.trim_end_matches(['\r', '\n']);
    if trimmed.starts_with('{') {
        let v: serde_json::Value = serde_json::from_str(trimmed).ok()?;
        if v.get("type").and_then(|t| t.as_str()) != Some("log") {
            return None;
        }
        let msg = v.get("msg")?.as_str()?.trim_end_matches('\n').to_string();
        return Some(std::borrow::Cow::Owned(msg));
    }
    let skip = PREFIX.find(trimmed).map_or(0, |m| m.end());
    Some(std::borrow::Cow::Borrowed(&trimmed[skip..]))
}

fn num<T: std::str::FromStr>(c: &regex::Captures, i: usize) -> Option<T> {
    c.get(i).and_then(|m| m.as_str().parse().ok())
}

fn tps(c: &regex::Captures, i: usize) -> f64 {
    num::<f64>(c, i).unwrap_or(f64::NAN)
}

/// Every timing block in a log, in order.
pub(crate) fn timing_blocks(text: &str) -> Result<Vec<TimingBlock>, LogError> {
    let mut blocks: Vec<TimingBlock> = Vec::new();
    // A block is open from its prompt-eval line until its eval line arrives.
    let mut awaiting_eval = false;
    for line in text.lines() {
        let Some(msg) = message(line) else { continue };
        // llama-cli's perf print reuses the wording; it is not a request of the server.
        if msg.contains("llama_perf") || msg.contains("common_perf_print") {
            continue;
        }
        if let Some(c) = PROMPT_EVAL.captures(&msg) {
            if awaiting_eval {
                return Err(incomplete(blocks.last()));
            }
            let (slot, task) = SLOT_TASK.captures(&msg).map(|s| (num(&s, 1), num(&s, 2))).unwrap_or((None, None));
            blocks.push(TimingBlock {
                slot,
                task,
                prompt_ms: num(&c, 1).unwrap_or(f64::NAN),
                prompt_tokens: num(&c, 2).unwrap_or(0),
                prompt_tps: tps(&c, 3),
                eval_tokens: 0,
                eval_ms: f64::NAN,
                eval_tps: f64::NAN,
                total_ms: None,
                total_tokens: None,
                graphs_reused: None,
                draft: None,
                spec_statistics: Vec::new(),
            });
            awaiting_eval = true;
            continue;
        }
        let Some(block) = blocks.last_mut() else { continue };
        if awaiting_eval {
            if let Some(c) = EVAL.captures(&msg) {
                block.eval_ms = num(&c, 1).unwrap_or(f64::NAN);
                block.eval_tokens = num(&c, 2).unwrap_or(0);
                block.eval_tps = tps(&c, 3);
                awaiting_eval = false;
            }
            continue;
        }
        if let Some(c) = TOTAL.captures(&msg) {
            block.total_ms = num(&c, 1);
            block.total_tokens = num(&c, 2);
        } else if let Some(c) = GRAPHS.captures(&msg) {
            block.graphs_reused = num(&c, 1);
        } else if let Some(c) = DRAFT.captures(&msg) {
            block.draft = Some(DraftAcceptance {
                rate: num(&c, 1).unwrap_or(f64::NAN),
                accepted: num(&c, 2).unwrap_or(0),
                generated: num(&c, 3).unwrap_or(0),
                mean_len: num(&c, 4),
            });
        } else if let Some(c) = STATS.captures(&msg) {
            block.spec_statistics.push(SpecStatistics {
                implementation: c[1].to_string(),
                gen_drafts: num(&c, 2).unwrap_or(0),
                acc_drafts: num(&c, 3).unwrap_or(0),
                gen_tokens: num(&c, 4).unwrap_or(0),
                acc_tokens: num(&c, 5).unwrap_or(0),
            });
        }
    }
    if awaiting_eval {
        return Err(incomplete(blocks.last()));
    }
    Ok(blocks)
}

fn incomplete(block: Option<&TimingBlock>) -> LogError {
    let task = block.and_then(|b| b.task).map_or_else(|| "?".to_string(), |t| t.to_string());
    LogError::IncompleteBlock { task }
}

/// The one timing block of a single-request log; zero or several is an error saying how many.
pub(crate) fn single_timing_block(text: &str) -> Result<TimingBlock, LogError> {
    let mut blocks = timing_blocks(text)?;
    match blocks.len() {
        0 => Err(LogError::NoTimingBlock),
        1 => Ok(blocks.remove(0)),
        n => Err(LogError::SeveralTimingBlocks {
            count: n,
            tasks: blocks
                .iter()
                .map(|b| b.task.map_or_else(|| "?".into(), |t| t.to_string()))
                .collect::<Vec<_>>()
                .join(", "),
        }),
    }
}

/// The line that explains why a server died while loading: the first `GGML_ASSERT`, else the
/// first error-level line, else the first line mentioning an error.
pub(crate) fn first_error_line(text: &str) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let pick = |pred: &dyn Fn(&str, &str) -> bool| {
        lines.iter().find_map(|l| {
            let msg = message(l)?;
            pred(l, &msg).then(|| msg.trim().to_string())
        })
    };
    pick(&|_, m| m.contains("GGML_ASSERT"))
        .or_else(|| pick(&|raw, _| is_error_level(raw)))
        .or_else(|| pick(&|_, m| m.to_ascii_lowercase().contains("error")))
}

fn is_error_level(raw: &str) -> bool {
    if raw.starts_with('{') {
        return raw.contains(r#""level":"error""#);
    }
    static LEVEL_E: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^(?:\d+\.\d{2}\.\d{3}\.\d{3} )?E ").unwrap());
    LEVEL_E.is_match(raw)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Real outputs of the test bed's llama-server (scripts/capture-llama-fixtures).
    const TARGET_LOG: &str = include_str!("../../tests/fixtures/llama-server/target-300x32.log");
    const TARGET_JSONL: &str = include_str!("../../tests/fixtures/llama-server/target-300x32.jsonl");
    const DRAFT_LV4_LOG: &str = include_str!("../../tests/fixtures/llama-server/draft-lv4-300x32.log");
    const CORRUPT_LOG: &str = include_str!("../../tests/fixtures/llama-server/corrupt-gguf.log");

    const CURRENT: &str = "\
0.01.389.839 I slot launch_slot_: id  0 | task 0 | processing task, is_child = 0
0.03.846.521 I slot print_timing: id  0 | task 0 | prompt eval time =     407.90 ms /    37 tokens (   11.02 ms per token,    90.71 tokens per second)
0.03.846.536 I slot print_timing: id  0 | task 0 |        eval time =    2048.68 ms /    64 tokens (   32.52 ms per token,    30.75 tokens per second)
0.03.846.537 I slot print_timing: id  0 | task 0 |       total time =    2456.59 ms /   101 tokens
0.03.846.546 I slot print_timing: id  0 | task 0 |    graphs reused =         12
0.03.846.553 I slot print_timing: id  0 | task 0 | draft acceptance = 1.00000 (   50 accepted /    50 generated), mean len =  4.85
0.03.846.600 T spec common_specu: statistics     draft-simple: #calls(b,g,a) =    1     13     13, #gen drafts =     13, #acc drafts =    13, #gen tokens =     50, #acc tokens =    50, #mean acc len = 4.85
0.03.846.669 I slot      release: id  0 | task 0 | stop processing: n_tokens = 100, truncated = 0
";

    #[test]
    fn parses_the_current_block_with_draft_and_statistics() {
        let b = single_timing_block(CURRENT).unwrap();
        assert_eq!((b.slot, b.task), (Some(0), Some(0)));
        assert_eq!((b.prompt_tokens, b.eval_tokens), (37, 64));
        assert!((b.prompt_ms - 407.90).abs() < 1e-9 && (b.eval_ms - 2048.68).abs() < 1e-9);
        assert_eq!(b.total_tokens, Some(101));
        assert_eq!(b.graphs_reused, Some(12));
        let d = b.draft.clone().unwrap();
        assert_eq!((d.accepted, d.generated, d.mean_len), (50, 50, Some(4.85)));
        assert_eq!(b.spec_statistics[0].implementation, "draft-simple");
        assert_eq!(b.spec_statistics[0].acc_tokens, 50);
        assert!((b.decode_tps() - 64.0 / 2.04868).abs() < 1e-9);
        assert!((b.decode_tps_n_minus_1() - 63.0 / 2.04868).abs() < 1e-9);
    }

    #[test]
    fn accepts_the_older_wordings() {
        // 2025: the whole block in one SLT_INF call; acceptance as an SLT_CNT continuation line.
        let v2025 = "slot print_timing: id  0 | task 5 | \n\
prompt eval time =     123.45 ms /    42 tokens (    2.94 ms per token,   340.21 tokens per second)\n\
       eval time =    2345.67 ms /   128 tokens (   18.33 ms per token,    54.57 tokens per second)\n\
      total time =    2469.12 ms /   170 tokens\n\
draft acceptance rate = 0.57000 (   57 accepted /   100 generated)\n\
statistics draft: #calls = 40, #gen drafts = 40, #acc drafts = 30, #gen tokens = 100, #acc tokens = 57\n";
        let b = single_timing_block(v2025).unwrap();
        assert_eq!((b.prompt_tokens, b.eval_tokens), (42, 128));
        let d = b.draft.unwrap();
        assert_eq!((d.accepted, d.generated, d.mean_len), (57, 100, None));
        assert_eq!(b.spec_statistics[0].gen_tokens, 100);
        // Late 2025: acceptance on a slot line without `mean len`.
        let late = CURRENT.replace(", mean len =  4.85", "");
        assert_eq!(single_timing_block(&late).unwrap().draft.unwrap().mean_len, None);
        // Early 2024 LOG_TEE: `runs` and a total line without a token count.
        let tee = "print_timings: prompt eval time =      10.00 ms /     4 tokens (    2.50 ms per token,   400.00 tokens per second)\n\
print_timings:        eval time =     100.00 ms /    10 runs   (   10.00 ms per token,   100.00 tokens per second)\n\
print_timings:       total time =     110.00 ms\n";
        let b = single_timing_block(tee).unwrap();
        assert_eq!((b.prompt_tokens, b.eval_tokens, b.total_tokens), (4, 10, None));
    }

    #[test]
    fn jsonl_logs_parse_like_text_logs() {
        let jsonl: String = CURRENT
            .lines()
            .map(|l| {
                let msg = message(l).unwrap().to_string();
                serde_json::json!({"type":"log","time":1,"level":"info","msg":format!("{msg}\n")}).to_string() + "\n"
            })
            .collect();
        assert_eq!(single_timing_block(&jsonl).unwrap(), single_timing_block(CURRENT).unwrap());
    }

    #[test]
    fn zero_or_two_blocks_say_how_many() {
        assert_eq!(single_timing_block("nothing here\n"), Err(LogError::NoTimingBlock));
        let two = format!("{CURRENT}{}", CURRENT.replace("task 0", "task 3"));
        let err = single_timing_block(&two).unwrap_err();
        assert_eq!(err, LogError::SeveralTimingBlocks { count: 2, tasks: "0, 3".into() });
        assert!(err.to_string().starts_with("2 request timing blocks"));
        let cut = CURRENT.lines().take(2).collect::<Vec<_>>().join("\n");
        assert!(matches!(single_timing_block(&cut), Err(LogError::IncompleteBlock { .. })));
    }

    #[test]
    fn real_captured_logs() {
        let b = single_timing_block(TARGET_LOG).unwrap();
        assert_eq!((b.prompt_tokens, b.eval_tokens, b.draft.is_none()), (300, 32, true));
        // This build prints (N−1)/s for eval ("the first token is free").
        assert!((b.eval_tps - b.decode_tps_n_minus_1()).abs() < 0.02, "{} vs {}", b.eval_tps, b.decode_tps_n_minus_1());
        let j = single_timing_block(TARGET_JSONL).unwrap();
        assert_eq!((j.prompt_tokens, j.eval_tokens), (300, 32));
        let d = single_timing_block(DRAFT_LV4_LOG).unwrap();
        let acc = d.draft.clone().unwrap();
        assert!(acc.generated > 0 && acc.accepted <= acc.generated && acc.mean_len.is_some());
        assert_eq!(d.spec_statistics.len(), 1);
        assert_eq!(d.spec_statistics[0].implementation, "draft-simple");
        assert_eq!(d.spec_statistics[0].gen_tokens, acc.generated);
        assert_eq!(d.spec_statistics[0].acc_tokens, acc.accepted);
        assert_eq!(single_timing_block(CORRUPT_LOG), Err(LogError::NoTimingBlock));
    }

    #[test]
    fn first_error_line_prefers_asserts_then_error_level() {
        let log = "0.00.1 I srv load\n0.00.008.577 E gguf_init_from_file: failed to open GGUF file 'x.gguf' (No such file or directory)\n0.00.009.000 E later\n";
        assert_eq!(
            first_error_line(log).unwrap(),
            "gguf_init_from_file: failed to open GGUF file 'x.gguf' (No such file or directory)"
        );
        let assert_log =
            "0.00.001.000 E something\n/src/ggml/mmvq.cu:1061: GGML_ASSERT(!ids || dst->ne[2] == 1) failed\n";
        assert!(first_error_line(assert_log).unwrap().contains("GGML_ASSERT"));
        assert!(first_error_line(CORRUPT_LOG).unwrap().starts_with("gguf_init_from_reader:"));
    }
}
