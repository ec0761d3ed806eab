//! The sample conditions `ab` and `pi` share: the idle gate, the isolation hooks and telemetry.
use clap::{ArgMatches, Args, Command, FromArgMatches};

use super::args::TelemetryArg;
use crate::study::file::{self, HookCommand, IdleGate, Isolation};
use crate::telemetry::SourceKind;

/// Run conditions: `--idle-samples`, `--before`/`--after`/`--verify` hooks, `--telemetry`,
/// `--telemetry-hz` (ab, pi).
#[derive(Args, Debug, Clone)]
pub struct RunConditions {
    /// Consecutive idle samples the idle gate needs before each request.
    #[arg(long, default_value_t = file::default_consecutive(), value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..))]
    pub idle_samples: u32,
    /// Isolation hook run before every sample (repeatable; no shell).
    #[arg(long, value_name = "CMD")]
    pub before: Vec<String>,
    /// Restore hook run once at exit, on every exit path (repeatable).
    #[arg(long, value_name = "CMD")]
    pub after: Vec<String>,
    /// Verification hook run after the restore (repeatable).
    #[arg(long, value_name = "CMD")]
    pub verify: Vec<String>,
    #[command(flatten)]
    pub telemetry: TelemetryArg,
    /// Telemetry samples per second during each request.
    #[arg(long, default_value_t = file::default_hz(), value_name = "HZ",
          value_parser = clap::value_parser!(u32).range(1..))]
    pub telemetry_hz: u32,
}

fn lines(v: &[String]) -> Vec<HookCommand> {
    v.iter().map(|s| HookCommand::Line(s.clone())).collect()
}

impl RunConditions {
    pub fn telemetry(&self) -> SourceKind {
        self.telemetry.telemetry
    }

    pub fn idle(&self) -> IdleGate {
        IdleGate { consecutive: self.idle_samples, ..IdleGate::default() }
    }

    pub fn isolation(&self) -> Isolation {
        Isolation {
            before: lines(&self.before),
            after: lines(&self.after),
            verify: lines(&self.verify),
            ..Isolation::default()
        }
    }
}

/// [`RunConditions`] in the shape `cli/ab.rs` and `cli/pi.rs` read today (telemetry as its study
/// file name). The flags are `RunConditions`'s; once those two flatten `RunConditions` itself,
/// this bridge goes.
#[derive(Debug, Clone)]
pub struct ConditionArgs {
    pub telemetry: String,
    pub telemetry_hz: u32,
    conditions: RunConditions,
}

impl ConditionArgs {
    pub fn idle(&self) -> IdleGate {
        self.conditions.idle()
    }

    pub fn isolation(&self) -> Isolation {
        self.conditions.isolation()
    }
}

impl From<RunConditions> for ConditionArgs {
    fn from(c: RunConditions) -> ConditionArgs {
        ConditionArgs { telemetry: c.telemetry().into(), telemetry_hz: c.telemetry_hz, conditions: c }
    }
}

impl FromArgMatches for ConditionArgs {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        RunConditions::from_arg_matches(m).map(ConditionArgs::from)
    }

    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        self.conditions.update_from_arg_matches(m)?;
        *self = ConditionArgs::from(self.conditions.clone());
        Ok(())
    }
}

impl Args for ConditionArgs {
    fn augment_args(cmd: Command) -> Command {
        RunConditions::augment_args(cmd)
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        RunConditions::augment_args_for_update(cmd)
    }
}
