//! Renderers: typed results in, text or JSON out. Nothing here measures or decides. Every result
//! type abprof prints implements [`Render`] here, and `cli/` prints through [`emit`] alone.
pub(crate) mod artifact;
pub(crate) mod bisect;
pub(crate) mod calibration;
pub(crate) mod exactness;
pub(crate) mod monitor;
pub(crate) mod pi;
pub(crate) mod sample;
pub(crate) mod summary;
pub(crate) mod timing_block;
pub(crate) mod trace;

use serde::Serialize;

/// How a result is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Format {
    #[default]
    Text,
    Json,
}

impl Format {
    /// The `--json` switch every printing subcommand has.
    pub(crate) fn from_json_flag(json: bool) -> Format {
        if json {
            Format::Json
        } else {
            Format::Text
        }
    }
}

/// A result a person reads (text) or a program reads (its serde form, pretty JSON).
pub(crate) trait Render: Serialize {
    fn text(&self) -> String;
}

/// The one way a result becomes output.
pub(crate) fn render<T: Render + ?Sized>(value: &T, format: Format) -> String {
    match format {
        Format::Text => value.text(),
        Format::Json => serde_json::to_string_pretty(value).expect("results always serialize") + "\n",
    }
}

/// Prints a result on stdout.
pub(crate) fn emit<T: Render + ?Sized>(value: &T, format: Format) {
    print!("{}", render(value, format));
}
