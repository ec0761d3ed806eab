//! The parser against real logs from public threads (tests/fixtures/llama-server-wild/README.md
//! names each one's source): every number asserted is the one printed in that log.
use super::*;

macro_rules! wild {
    ($file:literal) => {
        include_str!(concat!("../../../tests/fixtures/llama-server-wild/", $file))
    };
}

/// What a log prints for its request: (tokens, ms, tokens/s as printed) for prompt and eval.
struct Printed {
    slot: Option<u32>,
    task: Option<i64>,
    prompt: (u64, f64, f64),
    eval: (u64, f64, f64),
    total: (f64, Option<u64>),
}

fn check(log: &str, want: Printed) -> TimingBlock {
    let b = single_timing_block(log).unwrap();
    assert_eq!((b.slot, b.task), (want.slot, want.task));
    assert_eq!((b.prompt_tokens, b.prompt_ms, b.prompt_tps), want.prompt);
    assert_eq!((b.eval_tokens, b.eval_ms, b.eval_tps), want.eval);
    assert_eq!((b.total_ms, b.total_tokens), (Some(want.total.0), want.total.1));
    b
}

#[test]
fn server_text_log_of_2024() {
    let b = check(
        wild!("server-text-2024-08.log"),
        Printed {
            slot: Some(0),
            task: Some(0),
            prompt: (12, 15.62, 768.49),
            eval: (783, 3194.22, 245.13),
            total: (3209.84, None),
        },
    );
    // Builds of 2024 printed N/s (README, "What the numbers mean").
    assert!((b.eval_tps - b.decode_tps()).abs() < 0.01, "{} vs {}", b.eval_tps, b.decode_tps());
    assert!(b.draft.is_none());
}

#[test]
fn server_json_log_of_2024() {
    let b = check(
        wild!("server-json-2024-05.log"),
        Printed {
            slot: Some(0),
            task: Some(19),
            prompt: (27, 2684.39, 10.06),
            eval: (25, 3559.27, 7.02),
            total: (6243.66, None),
        },
    );
    assert!((b.eval_tps - b.decode_tps()).abs() < 0.01, "{} vs {}", b.eval_tps, b.decode_tps());
}

#[test]
fn router_log_with_the_header_on_its_own_line() {
    let log = wild!("router-one-call-2026.log");
    let b = check(
        log,
        Printed {
            slot: Some(0),
            task: Some(388),
            prompt: (27, 789.03, 34.22),
            eval: (192, 16112.50, 11.92),
            total: (16901.53, Some(219)),
        },
    );
    assert!(b.draft.is_none());
    assert_eq!(b.spec_statistics.len(), 1);
    assert_eq!(b.spec_statistics[0].implementation, "ngram-map-k");
    assert_eq!((b.spec_statistics[0].gen_tokens, b.spec_statistics[0].acc_tokens), (0, 0));
    // Two requests name their tasks, not "?, ?".
    let err = single_timing_block(&format!("{log}{log}")).unwrap_err();
    assert_eq!(err, LogError::SeveralTimingBlocks { count: 2, tasks: "388, 388".into() });
}

#[test]
fn one_call_block_without_timestamps() {
    let b = check(
        wild!("one-call-block.log"),
        Printed {
            slot: Some(0),
            task: Some(124),
            prompt: (1360, 5093.47, 267.01),
            eval: (10, 319.58, 31.29),
            total: (5413.05, Some(1370)),
        },
    );
    assert!(b.draft.is_none() && b.spec_statistics.is_empty());
}

#[test]
fn mean_acceptance_length_wording_of_2026() {
    let b = check(
        wild!("mean-acceptance-length-2026-06.log"),
        Printed {
            slot: Some(1),
            task: Some(0),
            prompt: (20, 300.11, 66.64),
            eval: (256, 2296.72, 111.46),
            total: (2596.83, Some(276)),
        },
    );
    assert_eq!(b.graphs_reused, Some(85));
    let d = b.draft.clone().unwrap();
    assert_eq!((d.rate, d.accepted, d.generated, d.mean_len), (0.64479, 167, 259, Some(2.92)));
    let s = &b.spec_statistics[0];
    assert_eq!(s.implementation, "draft-eagle3");
    assert_eq!((s.gen_drafts, s.acc_drafts, s.gen_tokens, s.acc_tokens), (87, 70, 259, 167));
}

#[test]
fn mean_len_wording_of_2026() {
    let b = check(
        wild!("mean-len-2026.log"),
        Printed {
            slot: Some(0),
            task: Some(160),
            prompt: (4, 252.01, 15.87),
            eval: (96, 5729.20, 16.58),
            total: (5981.21, Some(100)),
        },
    );
    assert_eq!(b.graphs_reused, Some(0));
    let d = b.draft.unwrap();
    assert_eq!((d.rate, d.accepted, d.generated, d.mean_len), (0.46218, 55, 119, Some(2.38)));
}

#[test]
fn a_llama_cli_print_is_refused_as_what_it_is() {
    let err = single_timing_block(wild!("llama-cli-print-2024-09.log")).unwrap_err();
    assert!(matches!(err, LogError::NotServerPrint { .. }), "{err:?}");
    let line = err.to_string();
    assert!(line.contains("`llama_print_timings` summary") && line.contains("llama-server's own log"), "{line}");
    assert!(!line.contains('\n'));
    // Beside a real server block it is ignored, never counted as a second request.
    let both = format!("{}{}", wild!("llama-cli-print-2024-09.log"), wild!("mean-len-2026.log"));
    assert_eq!(single_timing_block(&both).unwrap().task, Some(160));
}

#[test]
fn a_block_of_zero_tokens_is_refused_without_nan() {
    let log = wild!("mean-len-2026.log");
    let no_eval = log.replace("/    96 tokens", "/     0 tokens");
    let err = single_timing_block(&no_eval).unwrap_err();
    assert_eq!(err, LogError::ZeroTokens { task: "160".into(), which: "generated" });
    let no_prompt = log.replace("/     4 tokens", "/     0 tokens");
    let err = single_timing_block(&no_prompt).unwrap_err();
    assert_eq!(err, LogError::ZeroTokens { task: "160".into(), which: "prompt" });
    assert!(!err.to_string().contains("NaN"));
}

#[test]
fn invalid_utf8_is_read_lossily() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("server.log");
    let mut bytes = b"0.00.001.000 I main: caf\xc3 \xff loading\n".to_vec();
    bytes.extend_from_slice(wild!("mean-len-2026.log").as_bytes());
    std::fs::write(&path, &bytes).unwrap();
    let text = read_lossy(&path).unwrap();
    assert_eq!(single_timing_block(&text).unwrap().eval_tokens, 96);
}

#[test]
fn forms_without_a_public_log_read_like_their_neighbours() {
    // Router mode in front of slot-prefixed lines (no public log of it was found): the same block.
    let plain = wild!("mean-acceptance-length-2026-06.log");
    let routed: String = plain.lines().map(|l| format!("[8080] {l}\n")).collect();
    assert_eq!(single_timing_block(&routed).unwrap(), single_timing_block(plain).unwrap());
    // Ollama's bundled server named the JSON fields slot_id/task_id (ollama/ollama#3949, whose
    // pasted log lacks the prompt line, so it is not kept as a fixture).
    let json = wild!("server-json-2024-05.log");
    let renamed = json.replace("\"id_slot\"", "\"slot_id\"").replace("\"id_task\"", "\"task_id\"");
    assert_eq!(single_timing_block(&renamed).unwrap(), single_timing_block(json).unwrap());
}
