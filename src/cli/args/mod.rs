//! The argument groups several subcommands flatten, each flag defined once with its checks, so a
//! bad value is a usage error (exit 2) before anything is started or created.
mod adaptive;
mod history;
mod output;
mod prompt;
mod server;
mod source;
mod sweep;
mod telemetry;
mod variants;
mod verdict;
mod workload;

pub(crate) use adaptive::{AdaptiveArgs, MaxSamplesArg};
pub(crate) use history::{HistoryArgs, HistoryDb};
pub(crate) use output::OutputArgs;
pub(crate) use prompt::{prompt_tokens, PromptArgs};
pub(crate) use server::{LaunchArgs, ServerArgs};
pub(crate) use source::SourceArgs;
pub(crate) use sweep::SweepArgs;
pub(crate) use telemetry::TelemetryArg;
pub(crate) use variants::VariantArgs;
pub(crate) use verdict::JudgementArgs;
pub(crate) use workload::{WorkloadArgs, WORKLOADS};

/// The shared flags that define a study (written into its study.toml). `--resume DIR` reads them
/// all from the folder, so giving one beside it is a usage error rather than silently ignored.
pub(crate) const STUDY_FLAGS: [&str; 18] = [
    "variants",
    "model",
    "port",
    "server_cpus",
    "server_args",
    "health_timeout",
    "stall_timeout",
    "idle_samples",
    "foreign_cpu_max",
    "thermal_gate",
    "thermal_band",
    "thermal_ceiling",
    "thermal_timeout",
    "before",
    "after",
    "verify",
    "telemetry",
    "telemetry_hz",
];
