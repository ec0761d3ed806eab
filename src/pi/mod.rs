//! The real Pi coding agent end to end (docs/methodology.md §11), the final realism gate: a Pi
//! study is the study loop with the Pi agent as every sample's load (`measure::pi`), interleaved
//! like `abprof ab`, under the same hooks, idle gate and telemetry, resumable; its report is
//! `summary::pi`.
mod error;
mod prompt;
mod study;

pub use crate::measure::pi::{
    check_python, extract_python, judge_answer, models_json, parse_transcript, run_timed, settings_json,
    write_agent_dir, AgentModel, AnswerVerdict, CodeCheck, CodeOutcome, CodeRun, PythonCode, TimedExit, TimedRun,
    Transcript, TranscriptError, MODEL_ID, PROVIDER,
};
pub use error::PiError;
pub use prompt::{PiMode, DECODE_PROMPT};
pub use study::{pi_version, OnSample, PiStudy};
