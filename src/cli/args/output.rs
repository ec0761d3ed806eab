//! `--json`: how a command prints its result.
use crate::report::Format;
use clap::Args;

/// Output: `--json` prints the result's JSON instead of text (every printing command).
#[derive(Args, Debug, Clone)]
pub(crate) struct OutputArgs {
    /// Print the result as JSON instead of text.
    #[arg(long)]
    pub(crate) json: bool,
}

impl OutputArgs {
    pub(crate) fn format(&self) -> Format {
        Format::from_json_flag(self.json)
    }
}
