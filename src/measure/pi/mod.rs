//! The real Pi coding agent as a sample's load (docs/methodology.md §11): a private Pi
//! configuration pointed at the sample's server, the whole `pi … --mode json -p PROMPT` process
//! timed, its JSONL read and its answer's Python run.
mod agent_dir;
mod answer;
mod load;
mod process;
mod python;
mod transcript;

pub use agent_dir::{models_json, settings_json, write_agent_dir, AgentModel, MODEL_ID, PROVIDER};
pub use answer::{judge_answer, AnswerVerdict, CodeRun};
pub use load::{PiLoad, PiSettings};
pub use process::{run_timed, TimedExit, TimedRun};
pub use python::{check_python, extract_python, CodeCheck, CodeOutcome, PythonCode};
pub use transcript::{parse_transcript, Transcript, TranscriptError};
