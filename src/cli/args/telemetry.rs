//! `--telemetry KIND`: which telemetry backend to read.
use crate::telemetry::SourceKind;
use clap::Args;

/// Telemetry: `--telemetry KIND`, a [`SourceKind`] (monitor; the run conditions of ab and pi).
#[derive(Args, Debug, Clone)]
pub(crate) struct TelemetryArg {
    /// Telemetry backend; auto says which it chose and why.
    #[arg(long, value_enum, default_value_t = SourceKind::Auto, value_name = "KIND")]
    pub(crate) telemetry: SourceKind,
}
