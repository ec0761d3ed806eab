//! The parser against the test bed's captured logs and hand-written blocks of each wording.
use super::line::message;
use super::*;

/// Real outputs of the test bed's llama-server (scripts/capture-llama-fixtures).
const TARGET_LOG: &str = include_str!("../../../tests/fixtures/llama-server/target-300x32.log");
const TARGET_JSONL: &str = include_str!("../../../tests/fixtures/llama-server/target-300x32.jsonl");
const DRAFT_LV4_LOG: &str = include_str!("../../../tests/fixtures/llama-server/draft-lv4-300x32.log");
const CORRUPT_LOG: &str = include_str!("../../../tests/fixtures/llama-server/corrupt-gguf.log");

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
    let assert_log = "0.00.001.000 E something\n/src/ggml/mmvq.cu:1061: GGML_ASSERT(!ids || dst->ne[2] == 1) failed\n";
    assert!(first_error_line(assert_log).unwrap().contains("GGML_ASSERT"));
    assert!(first_error_line(CORRUPT_LOG).unwrap().starts_with("gguf_init_from_reader:"));
}

#[test]
fn a_negative_time_is_named_not_taken_for_a_missing_block() {
    let edited = CURRENT.replace("eval time =    2048.68 ms", "eval time =   -2048.68 ms");
    let err = single_timing_block(&edited).unwrap_err();
    assert_eq!(err, LogError::NegativeTime { task: "0".into(), which: "eval", ms: -2048.68 });
    assert!(err.to_string().contains("negative eval time (-2048.68 ms)"), "{err}");
    let edited = CURRENT.replace("prompt eval time =     407.90 ms", "prompt eval time =    -407.90 ms");
    let err = single_timing_block(&edited).unwrap_err();
    assert!(matches!(err, LogError::NegativeTime { which: "prompt eval", .. }), "{err}");
}

/// An eval time of 0.00 ms (or −0.00) is no rate: refused in one line, never `NaN tok/s`.
#[test]
fn a_zero_eval_time_is_refused_not_printed_as_nan() {
    for eval in ["0.00", "-0.00"] {
        let log = format!(
            "prompt eval time =     100.00 ms /    10 tokens (   10.00 ms per token,   100.00 tokens per second)\n       eval time =       {eval} ms /    8 tokens (    0.00 ms per token,      inf tokens per second)\n      total time =     100.00 ms /    18 tokens\n"
        );
        let err = single_timing_block(&log).unwrap_err();
        assert!(matches!(err, LogError::ZeroTime { which: "eval", .. }), "{eval}: {err}");
        assert!(err.to_string().contains("0 ms of eval time, so it has no rate"), "{err}");
    }
}
