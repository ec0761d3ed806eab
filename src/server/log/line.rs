//! One log line reduced to its message, whatever wrapper the server put around it.
use regex::Regex;
use std::borrow::Cow;
use std::sync::LazyLock;

/// A line's message, and the slot and task when the wrapper itself names them (the 2024 JSON
/// fields and text tail) rather than the message.
pub(super) struct Line<'a> {
    pub(super) msg: Cow<'a, str>,
    /// The log level the line carries (`E`, `W`, `I`, `D`, `T`), when it carries one.
    pub(super) level: Option<char>,
    pub(super) slot: Option<u32>,
    pub(super) task: Option<i64>,
}

// Router mode prints each child's lines behind `[PORT] ` (router-one-call-2026.log).
static ROUTER: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^\[\d+\] ").unwrap());
// `M.SS.mmm.uuu L ` from --log-timestamps/--log-prefix (the defaults of --log-file).
static PREFIX: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(?:\d+\.\d{2}\.\d{3}\.\d{3} )?(?:([IWEDT]) )?").unwrap());
// The 2024 text log's `INFO [           print_timings] ` (server-text-2024-08.log).
static FUNCTION_TAG: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(?:INFO|WARN|WARNING|ERR|ERROR|VERB|DEBUG)\s*\[\s*\w+\] ").unwrap());
// ... and its ` | tid="…" timestamp=… id_slot=0 id_task=0 …` tail.
const KV_TAIL: &str = " | tid=\"";

/// The message of one log line: the text after the optional router, timestamp/level and 2024
/// function prefixes, or the `msg` of a JSON log object. Non-log JSON records yield `None`.
pub(crate) fn message(line: &str) -> Option<Cow<'_, str>> {
    read_line(line).map(|l| l.msg)
}

pub(super) fn read_line(line: &str) -> Option<Line<'_>> {
    let mut s = line.trim_end_matches(['\r', '\n']);
    if let Some(m) = ROUTER.find(s) {
        s = &s[m.end()..];
    }
    if s.starts_with('{') {
        return json_line(s);
    }
    let prefix = PREFIX.captures(s);
    let level = prefix.as_ref().and_then(|c| c.get(1)).and_then(|m| m.as_str().chars().next());
    s = &s[prefix.and_then(|c| c.get(0)).map_or(0, |m| m.end())..];
    if let Some(m) = FUNCTION_TAG.find(s) {
        s = &s[m.end()..];
    }
    let (mut slot, mut task) = (None, None);
    if let Some(i) = s.find(KV_TAIL) {
        slot = tail_field(&s[i..], "id_slot=");
        task = tail_field(&s[i..], "id_task=");
        s = &s[..i];
    }
    Some(Line { msg: Cow::Borrowed(s), level, slot, task })
}

fn tail_field<T: std::str::FromStr>(tail: &str, key: &str) -> Option<T> {
    tail.split_whitespace().find_map(|t| t.strip_prefix(key)).and_then(|v| v.parse().ok())
}

/// `--log-jsonl` (2025 on) marks log records `"type":"log"`; the 2024 `--log-format json` (still
/// printed by Ollama's bundled server and ik_llama.cpp) has no `type` but a `function`, and names
/// slot and task in fields (`id_slot`/`id_task`, earlier `slot_id`/`task_id`).
fn json_line(s: &str) -> Option<Line<'static>> {
    let v: serde_json::Value = serde_json::from_str(s).ok()?;
    match v.get("type").and_then(|t| t.as_str()) {
        Some("log") => {}
        None if v.get("function").is_some() => {}
        _ => return None,
    }
    let msg = v.get("msg")?.as_str()?.trim_end_matches('\n').to_string();
    let int = |keys: [&str; 2]| keys.iter().find_map(|k| v.get(*k).and_then(|x| x.as_i64()));
    let level = match v.get("level").and_then(|l| l.as_str()) {
        Some("error") => Some('E'),
        Some("warn" | "warning") => Some('W'),
        Some("info") => Some('I'),
        Some("debug") => Some('D'),
        _ => None,
    };
    Some(Line {
        msg: Cow::Owned(msg),
        level,
        slot: int(["id_slot", "slot_id"]).and_then(|n| u32::try_from(n).ok()),
        task: int(["id_task", "task_id"]),
    })
}
