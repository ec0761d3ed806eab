//! The parser against the pinned server's real draft-mtp logs (tests/fixtures/llama-server-mtp,
//! scripts/capture-mtp-fixtures): the qwen35moe test-bed pair of scripts/make_model.py, whose
//! predictable twin's MTP head always agrees with its trunk and whose random one never does.
use super::*;

macro_rules! mtp {
    ($name:literal) => {
        include_str!(concat!("../../../tests/fixtures/llama-server-mtp/", $name))
    };
}

#[test]
fn draft_mtp_acceptance_of_both_regimes() {
    // Default verbosity: the acceptance line with `mean len`, no per-position line.
    let p = single_timing_block(mtp!("predictable-mtp-300x32.log")).unwrap();
    assert_eq!((p.prompt_tokens, p.eval_tokens), (300, 32));
    let d = p.draft.unwrap();
    assert_eq!((d.accepted, d.generated, d.mean_len, d.per_position), (23, 23, Some(3.88), None));
    assert_eq!(d.rate, 1.0);
    assert!(p.spec_statistics.is_empty());
    let r = single_timing_block(mtp!("random-mtp-300x32.log")).unwrap();
    let d = r.draft.unwrap();
    assert_eq!((d.accepted, d.generated, d.mean_len, d.rate), (0, 87, Some(1.0), 0.0));
    // Without --spec-type draft-mtp there is no acceptance line at all.
    for log in [mtp!("predictable-plain-300x32.log"), mtp!("random-plain-300x32.log")] {
        let b = single_timing_block(log).unwrap();
        assert_eq!((b.eval_tokens, b.draft.is_none()), (32, true));
    }
}

#[test]
fn draft_mtp_per_position_and_statistics_at_trace_level() {
    // -lv 4 adds `acc per pos = (…)` after the acceptance line and the `statistics draft-mtp:` line.
    let p = single_timing_block(mtp!("predictable-mtp-lv4-300x32.log")).unwrap();
    let d = p.draft.unwrap();
    assert_eq!((d.accepted, d.generated), (23, 23));
    assert_eq!(d.per_position, Some(vec![1.0, 1.0, 0.875]));
    let s = &p.spec_statistics[..];
    assert_eq!(s.len(), 1);
    assert_eq!(s[0].implementation, "draft-mtp");
    assert_eq!((s[0].gen_drafts, s[0].acc_drafts, s[0].gen_tokens, s[0].acc_tokens), (8, 8, 23, 23));
    assert_eq!((s[0].mean_acc_len, s[0].acc_rate_per_pos.clone()), (Some(3.88), Some(vec![1.0, 1.0, 0.875])));
    // Nothing accepted: the acceptance line's rates are zeros, the statistics line's list is empty.
    let r = single_timing_block(mtp!("random-mtp-lv4-300x32.log")).unwrap();
    assert_eq!(r.draft.unwrap().per_position, Some(vec![0.0, 0.0, 0.0]));
    let s = &r.spec_statistics[0];
    assert_eq!((s.gen_drafts, s.acc_drafts, s.gen_tokens, s.acc_tokens), (30, 0, 87, 0));
    assert_eq!((s.mean_acc_len, s.acc_rate_per_pos.clone()), (Some(1.0), Some(vec![])));
}

#[test]
fn draft_mtp_on_a_model_without_an_mtp_block() {
    // The server exits while loading; its cause is the warning just before the first error line,
    // and the one line abprof reports says both.
    let log = mtp!("no-mtp-block.log");
    assert_eq!(single_timing_block(log), Err(LogError::NoTimingBlock));
    assert_eq!(
        first_error_line(log).unwrap(),
        "llama_init_from_model: context type MTP requested but model doesn't contain MTP layers: common_speculative_init_result: failed to create MTP context"
    );
    assert!(log.contains("W llama_init_from_model: context type MTP requested but model doesn't contain MTP layers"));
}

#[test]
fn older_wordings_keep_their_per_position_rates() {
    // 2026-06: inline `acceptance rate per position` and the statistics line's `#acc rate/pos`.
    let b = single_timing_block(include_str!(
        "../../../tests/fixtures/llama-server-wild/mean-acceptance-length-2026-06.log"
    ))
    .unwrap();
    assert_eq!(b.draft.unwrap().per_position, Some(vec![0.805, 0.632, 0.483]));
    assert_eq!(b.spec_statistics[0].acc_rate_per_pos, Some(vec![0.805, 0.632, 0.483]));
    assert_eq!(b.spec_statistics[0].mean_acc_len, Some(2.92));
}
