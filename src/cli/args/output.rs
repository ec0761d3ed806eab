//! `--format` (and its old spelling `--json`): how a command prints its result.
use crate::report::Format;
use clap::{Args, ValueEnum};

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FormatArg {
    /// For people.
    Text,
    /// The whole result, one JSON document.
    Json,
    /// The result's table, one JSON object per row.
    Jsonl,
    /// The result's table as CSV.
    Csv,
    /// The result's table in Markdown, ready for a pull request.
    Md,
}

/// Output: every printing command prints through one of these.
#[derive(Args, Debug, Clone)]
pub(crate) struct OutputArgs {
    /// How to print the result: text, json (every document carries schema_version), or the
    /// result's table as jsonl, csv or md.
    #[arg(long, value_enum, default_value_t = FormatArg::Text)]
    pub(crate) format: FormatArg,
    /// Same as --format json.
    #[arg(long, conflicts_with = "format")]
    pub(crate) json: bool,
}

impl OutputArgs {
    pub(crate) fn format(&self) -> Format {
        if self.json {
            return Format::Json;
        }
        match self.format {
            FormatArg::Text => Format::Text,
            FormatArg::Json => Format::Json,
            FormatArg::Jsonl => Format::Jsonl,
            FormatArg::Csv => Format::Csv,
            FormatArg::Md => Format::Md,
        }
    }
}
