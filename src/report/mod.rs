//! Renderers: typed results in, text, JSON, Markdown or HTML out. Nothing here measures or decides. Every result
//! type abprof prints implements [`Render`] here, and `cli/` prints through [`emit`] alone.
pub(crate) mod artifact;
pub(crate) mod bisect;
pub(crate) mod calibration;
pub(crate) mod doctor;
pub(crate) mod error_line;
#[cfg(test)]
mod every_format;
pub(crate) mod exactness;
pub(crate) mod history;
pub(crate) mod html;
pub(crate) mod monitor;
pub(crate) mod pages;
pub(crate) mod pi;
pub(crate) mod roofline;
pub(crate) mod sample;
pub(crate) mod section;
pub(crate) mod sections;
pub(crate) mod study;
pub(crate) mod summary;
pub(crate) mod sweep;
pub(crate) mod timeline;
pub(crate) mod timing_block;
pub(crate) mod trace;

pub(crate) mod number;
pub(crate) mod table;

pub(crate) use error_line::one_line;
pub(crate) use number::{ci_pct, clock_range, cv_pct, num, p_value, runs, signed_pct, NONE};
use serde::Serialize;
pub(crate) use table::{md_cell, Table};

/// How a result is printed (`--format`): the whole document as text or JSON, or its table as
/// JSON Lines, CSV or Markdown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Format {
    #[default]
    Text,
    Json,
    Jsonl,
    Csv,
    Md,
}

/// A result a person reads (text), a program reads (its serde form), or a spreadsheet or a pull
/// request takes (its table).
pub(crate) trait Render: Serialize {
    fn text(&self) -> String;

    /// The result as rows, for `jsonl`, `csv` and `md`. By default every leaf of the JSON document
    /// is one (field, value) row; results with a natural table (a summary's verdicts) say so.
    fn table(&self) -> Table {
        Table::leaves(&serde_json::to_value(self).expect("results always serialize"))
    }

    /// `--format md`: the table, unless the result is better read as several (one per host).
    fn markdown(&self) -> String {
        self.table().markdown()
    }
}

/// The one way a result becomes output. JSON carries `schema_version` (src/schema.rs).
pub(crate) fn render<T: Render + ?Sized>(value: &T, format: Format) -> String {
    match format {
        Format::Text => value.text(),
        Format::Json => crate::schema::to_json_pretty(value) + "\n",
        Format::Jsonl => value.table().jsonl(),
        Format::Csv => value.table().csv(),
        Format::Md => value.markdown(),
    }
}

/// Prints a result on stdout. A reader that went away (a closed pipe, a terminal that hung up)
/// loses the output; it is no reason to panic once the work is done and saved.
pub(crate) fn emit<T: Render + ?Sized>(value: &T, format: Format) {
    let _ = emit_bytes(render(value, format).as_bytes());
}

/// Writes generated output (completions, the man page) to stdout whole. A reader that stopped
/// reading (`| head -1`) is no error, as for `cat`; any other failed write is.
pub(crate) fn emit_bytes(bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        // The reader went away: Rust ignores SIGPIPE, so the write returns EPIPE instead of
        // ending the process.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        written => written,
    }
}
