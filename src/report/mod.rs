//! Renderers: typed results in, text or JSON out. Nothing here measures or decides. Every result
//! type abprof prints implements [`Render`] here, and `cli/` prints through [`emit`] alone.
pub mod exactness;
pub mod monitor;
pub mod pi;
pub mod sample;
pub mod summary;
pub mod timing_block;
pub mod trace;

use serde::Serialize;

/// How a result is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    #[default]
    Text,
    Json,
}

impl Format {
    /// The `--json` switch every printing subcommand has.
    pub fn from_json_flag(json: bool) -> Format {
        if json {
            Format::Json
        } else {
            Format::Text
        }
    }
}

/// A result a person reads (text) or a program reads (its serde form, pretty JSON).
pub trait Render: Serialize {
    fn text(&self) -> String;
}

/// The one way a result becomes output.
pub fn render<T: Render + ?Sized>(value: &T, format: Format) -> String {
    match format {
        Format::Text => value.text(),
        Format::Json => serde_json::to_string_pretty(value).expect("results always serialize") + "\n",
    }
}

/// Prints a result on stdout.
pub fn emit<T: Render + ?Sized>(value: &T, format: Format) {
    print!("{}", render(value, format));
}
