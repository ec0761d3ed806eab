//! Why a server log yields no usable timing block; each message is one line naming the cause and
//! the fix.
use thiserror::Error;

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
    #[error("the log holds {what}, not a llama-server request timing block: pass llama-server's own log (--log-file or its stderr)")]
    NotServerPrint { what: &'static str },
    #[error("the timing block of task {task} reports 0 {which} tokens, so it has no rate: time a request with a non-empty prompt that generates tokens (max_tokens > 0)")]
    ZeroTokens { task: String, which: &'static str },
    #[error("the timing block of task {task} reports a negative {which} time ({ms} ms), which llama-server never prints: the log is damaged or was edited; take the sample again")]
    NegativeTime { task: String, which: &'static str, ms: f64 },
    #[error("the timing block of task {task} reports 0 ms of {which} time, so it has no rate: time a request that generates more than one token (a one-token decode has no eval time), or take the sample again if the log was edited")]
    ZeroTime { task: String, which: &'static str },
}
