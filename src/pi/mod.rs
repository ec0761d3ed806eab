//! The real Pi coding agent end to end (benchmark-qwen §2), the final realism gate: every
//! sample starts the variant's server cold, points a private Pi configuration at it, times the
//! whole `pi --offline --provider … --model … --no-session --mode json -p PROMPT` process,
//! requires exactly one server request and no tool call, and runs the answer's Python — fast
//! invalid code is a failed sample. Samples of several variants interleave like `abprof ab`.
mod agent_dir;
mod answer;
mod error;
mod process;
mod prompt;
mod python;
mod sample;
mod study;
mod transcript;

pub use agent_dir::{models_json, settings_json, write_agent_dir, AgentModel, MODEL_ID, PROVIDER};
pub use answer::{judge_answer, AnswerVerdict, CodeRun};
pub use error::PiError;
pub use process::{run_timed, TimedExit, TimedRun};
pub use prompt::{PiMode, DECODE_PROMPT};
pub use python::{check_python, extract_python, CodeCheck, CodeOutcome, PythonCode};
// The renderers live in `report::pi` now; these names stay until `cli/pi.rs` imports them from
// there (the only import here that points up a floor).
pub use crate::report::pi::{render_text, sample_line};
pub use sample::{run_pi_sample, sample_dir, PiSample, PiSampleFiles, PiSettings, PiSlot};
pub use study::{
    pi_version, run_pi_study, PiConditions, PiReport, PiStudy, PiVariant, PiVariantSummary, PI_REPORT_FILE,
};
pub use transcript::{parse_transcript, Transcript, TranscriptError};
