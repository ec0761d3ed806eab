//! llama-server's lifecycle: spawn an exact argv in its own process group on loopback, wait for
//! `/health`, stop it with one SIGTERM. abprof only ever signals the process groups it created.
pub mod log;
mod process;

pub use process::{LaunchSpec, RunningServer, ServerError, StopReport, HEALTH_POLL};
