//! The real Pi coding agent as a sample's load (docs/methodology.md §11): a private Pi
//! configuration pointed at the sample's server, the whole `pi … --mode json -p PROMPT` process
//! timed, its JSONL read and its answer's Python run.
pub(super) mod agent_dir;
mod answer;
mod python;
mod transcript;

pub(crate) use crate::child::TimedExit;
pub(crate) use agent_dir::AgentModel;
pub use answer::judge_answer;
pub(crate) use python::CodeCheck;
pub use python::CodeOutcome;
pub use python::CodeRun;
pub use transcript::parse_transcript;
