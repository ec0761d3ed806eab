//! The argument groups several subcommands flatten, each flag defined once with its checks, so a
//! bad value is a usage error (exit 2) before anything is started or created.
mod output;
mod prompt;
mod server;
mod telemetry;
mod variants;

pub use output::OutputArgs;
pub use prompt::{prompt_tokens, PromptArgs};
pub use server::{LaunchArgs, ServerArgs};
pub use telemetry::TelemetryArg;
pub use variants::VariantArgs;
