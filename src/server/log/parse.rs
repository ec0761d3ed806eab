//! A log's timing blocks, in order.
use super::block::{DraftAcceptance, SpecStatistics, TimingBlock};
use super::error::LogError;
use super::foreign;
use super::line::read_line;
use super::patterns::{
    BARE_HEADER, DRAFT, DRAFT_PER_POS_INLINE, DRAFT_PER_POS_LINE, EVAL, GRAPHS, PROMPT_EVAL, SLOT_TASK, STATS,
    STATS_MEAN, STATS_PER_POS, TOTAL,
};

type SlotTask = (Option<u32>, Option<i64>);

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
    // The slot/task of a header printed alone on the line before (the one-call block).
    let mut header: Option<SlotTask> = None;
    let mut foreign_print: Option<&'static str> = None;
    for raw in text.lines() {
        let Some(line) = read_line(raw) else { continue };
        let wrapper = (line.slot.is_some() || line.task.is_some()).then_some((line.slot, line.task));
        // A --log-jsonl message may itself hold the whole one-call block.
        for msg in line.msg.lines() {
            if let Some(what) = foreign::kind(msg) {
                foreign_print.get_or_insert(what);
                header = None;
                continue;
            }
            let bare = BARE_HEADER.captures(msg).map(|c| (num(&c, 1), num(&c, 2)));
            let previous_header = std::mem::replace(&mut header, bare);
            if let Some(c) = PROMPT_EVAL.captures(msg) {
                if awaiting_eval {
                    return Err(incomplete(blocks.last()));
                }
                let own = SLOT_TASK.captures(msg).map(|s| (num(&s, 1), num(&s, 2)));
                let (slot, task) = own.or(wrapper).or(previous_header).unwrap_or((None, None));
                blocks.push(new_block(slot, task, &c));
                awaiting_eval = true;
                continue;
            }
            let Some(block) = blocks.last_mut() else { continue };
            if awaiting_eval {
                if let Some(c) = EVAL.captures(msg) {
                    block.eval_ms = num(&c, 1).unwrap_or(f64::NAN);
                    block.eval_tokens = num(&c, 2).unwrap_or(0);
                    block.eval_tps = tps(&c, 3);
                    awaiting_eval = false;
                }
                continue;
            }
            read_trailer(block, msg);
        }
    }
    if awaiting_eval {
        return Err(incomplete(blocks.last()));
    }
    if blocks.is_empty() {
        if let Some(what) = foreign_print {
            return Err(LogError::NotServerPrint { what });
        }
    }
    if let Some(err) = blocks.iter().find_map(negative_time).or_else(|| blocks.iter().find_map(zero_tokens)) {
        return Err(err);
    }
    Ok(blocks)
}

fn new_block(slot: Option<u32>, task: Option<i64>, c: &regex::Captures) -> TimingBlock {
    TimingBlock {
        slot,
        task,
        prompt_ms: num(c, 1).unwrap_or(f64::NAN),
        prompt_tokens: num(c, 2).unwrap_or(0),
        prompt_tps: tps(c, 3),
        eval_tokens: 0,
        eval_ms: f64::NAN,
        eval_tps: f64::NAN,
        total_ms: None,
        total_tokens: None,
        graphs_reused: None,
        draft: None,
        spec_statistics: Vec::new(),
    }
}

/// `0.805, 0.632, 0.483` (or nothing) as numbers.
fn rates(c: Option<regex::Captures>) -> Option<Vec<f64>> {
    let list = c?.get(1)?.as_str();
    list.split(',').map(str::trim).filter(|r| !r.is_empty()).map(|r| r.parse().ok()).collect()
}

/// The lines after the eval line: total, graphs reused, draft acceptance (and its per-position
/// line), statistics.
fn read_trailer(block: &mut TimingBlock, msg: &str) {
    if let Some(c) = TOTAL.captures(msg) {
        block.total_ms = num(&c, 1);
        block.total_tokens = num(&c, 2);
    } else if let Some(c) = GRAPHS.captures(msg) {
        block.graphs_reused = num(&c, 1);
    } else if let Some(c) = DRAFT.captures(msg) {
        block.draft = Some(DraftAcceptance {
            rate: num(&c, 1).unwrap_or(f64::NAN),
            accepted: num(&c, 2).unwrap_or(0),
            generated: num(&c, 3).unwrap_or(0),
            mean_len: num(&c, 4),
            per_position: rates(DRAFT_PER_POS_INLINE.captures(msg)),
        });
    } else if let Some(per_pos) = rates(DRAFT_PER_POS_LINE.captures(msg)) {
        if let Some(d) = block.draft.as_mut() {
            d.per_position.get_or_insert(per_pos);
        }
    } else if let Some(c) = STATS.captures(msg) {
        block.spec_statistics.push(SpecStatistics {
            implementation: c[1].to_string(),
            gen_drafts: num(&c, 2).unwrap_or(0),
            acc_drafts: num(&c, 3).unwrap_or(0),
            gen_tokens: num(&c, 4).unwrap_or(0),
            acc_tokens: num(&c, 5).unwrap_or(0),
            mean_acc_len: STATS_MEAN.captures(msg).and_then(|m| num(&m, 1)),
            acc_rate_per_pos: rates(STATS_PER_POS.captures(msg)),
        });
    }
}

fn task_label(block: Option<&TimingBlock>) -> String {
    block.and_then(|b| b.task).map_or_else(|| "?".to_string(), |t| t.to_string())
}

fn incomplete(block: Option<&TimingBlock>) -> LogError {
    LogError::IncompleteBlock { task: task_label(block) }
}

/// A block with no prompt or no generated token has no rate (every one would be 0/0 or NaN).
fn negative_time(b: &TimingBlock) -> Option<LogError> {
    let (which, ms) = if b.prompt_ms < 0.0 {
        ("prompt eval", b.prompt_ms)
    } else if b.eval_ms < 0.0 {
        ("eval", b.eval_ms)
    } else {
        return None;
    };
    Some(LogError::NegativeTime { task: task_label(Some(b)), which, ms })
}

fn zero_tokens(b: &TimingBlock) -> Option<LogError> {
    let which = if b.eval_tokens == 0 {
        "generated"
    } else if b.prompt_tokens == 0 {
        "prompt"
    } else {
        return None;
    };
    Some(LogError::ZeroTokens { task: task_label(Some(b)), which })
}

/// A block whose time is 0 (or −0.00) has no rate: N ÷ 0 is no figure to print or compare. Only
/// the timed block is held to it: a pure-decode study's warm-up request (one token) logs 0 ms of
/// eval time before it (docs/methodology.md §4).
fn zero_time(b: &TimingBlock) -> Option<LogError> {
    let which = if b.eval_ms == 0.0 {
        "eval"
    } else if b.prompt_ms == 0.0 {
        "prompt eval"
    } else {
        return None;
    };
    Some(LogError::ZeroTime { task: task_label(Some(b)), which })
}

/// The one timing block of a single-request log; zero or several is an error saying how many.
pub(crate) fn single_timing_block(text: &str) -> Result<TimingBlock, LogError> {
    let mut blocks = timing_blocks(text)?;
    match blocks.len() {
        0 => Err(LogError::NoTimingBlock),
        1 => {
            let b = blocks.remove(0);
            zero_time(&b).map_or(Ok(b), Err)
        }
        n => Err(LogError::SeveralTimingBlocks {
            count: n,
            tasks: blocks.iter().map(|b| task_label(Some(b))).collect::<Vec<_>>().join(", "),
        }),
    }
}
