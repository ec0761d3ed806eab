//! The one table model: typed columns (a key, a header, a kind that sets the alignment, the
//! decimals and unit a number prints with) and rows of typed cells, built from a `Serialize` row
//! struct or cell by cell. Each output is a small renderer of it ([`Markup`]: a header, one row,
//! an end): aligned text, GitHub-flavoured Markdown, CSV (RFC 4180), JSON Lines, and HTML
//! (`html::markup::Html`).
use serde::Serialize;
use serde_json::Value;

/// What a column holds: it decides the alignment (numbers right) and, on the page, the colour
/// of a verdict word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Text,
    Number,
    Verdict,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Column {
    /// The name in JSON Lines and CSV, and the field of a row struct.
    pub(crate) key: String,
    /// What people read above it (text, Markdown, HTML).
    pub(crate) header: String,
    pub(crate) kind: Kind,
    /// Decimals of a number cell for people, then `unit`; a null cell then reads [`NONE`].
    pub(crate) digits: Option<usize>,
    pub(crate) unit: &'static str,
}

use super::number::NONE;

impl Column {
    fn new(header: &str, kind: Kind) -> Column {
        Column { key: header.into(), header: header.into(), kind, digits: None, unit: "" }
    }

    pub(crate) fn text(header: &str) -> Column {
        Column::new(header, Kind::Text)
    }

    pub(crate) fn number(header: &str) -> Column {
        Column::new(header, Kind::Number)
    }

    pub(crate) fn verdict(header: &str) -> Column {
        Column::new(header, Kind::Verdict)
    }

    /// The column under another key than its header (JSON Lines, CSV, a row struct's field).
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) fn key(mut self, key: &str) -> Column {
        self.key = key.into();
        self
    }

    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) fn digits(mut self, digits: usize, unit: &'static str) -> Column {
        self.digits = Some(digits);
        self.unit = unit;
        self
    }

    /// A cell for people.
    pub(crate) fn show(&self, v: &Value) -> String {
        match (v, self.digits) {
            (Value::String(s), _) => s.clone(),
            (Value::Null, Some(_)) => NONE.into(),
            (v, Some(d)) => v.as_f64().map_or_else(|| plain(v), |x| format!("{x:.d$}{}", self.unit)),
            (v, None) => readable(v),
        }
    }
}

/// Rows of typed cells under typed columns.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Table {
    pub(crate) columns: Vec<Column>,
    pub(crate) rows: Vec<Vec<Value>>,
}

impl Table {
    pub(crate) fn new(columns: Vec<Column>) -> Table {
        Table { columns, rows: Vec::new() }
    }

    /// Display text cells under `head`, those in `numeric` right-aligned.
    pub(crate) fn of_cells(head: &[&str], numeric: &[usize]) -> Table {
        Table::new(
            head.iter()
                .enumerate()
                .map(|(i, h)| if numeric.contains(&i) { Column::number(h) } else { Column::text(h) })
                .collect(),
        )
    }

    /// Machine columns, each a text column whose key is its header.
    pub(crate) fn named(keys: &[&str]) -> Table {
        Table::new(keys.iter().map(|k| Column::text(k)).collect())
    }

    pub(crate) fn push(&mut self, row: Vec<Value>) {
        debug_assert_eq!(row.len(), self.columns.len(), "a row has one cell per column");
        self.rows.push(row);
    }

    /// Display text cells, one per column.
    pub(crate) fn push_text(&mut self, row: Vec<String>) {
        self.push(row.into_iter().map(Value::String).collect());
    }

    /// A row from a struct: each column's cell is the field named by its key.
    pub(crate) fn push_row<T: Serialize>(&mut self, row: &T) {
        let Value::Object(fields) = serde_json::to_value(row).expect("rows serialize") else {
            panic!("a table row serializes to an object")
        };
        let cells = self
            .columns
            .iter()
            .map(|c| {
                debug_assert!(fields.contains_key(&c.key), "the row has no field {}", c.key);
                fields.get(&c.key).cloned().unwrap_or(Value::Null)
            })
            .collect();
        self.rows.push(cells);
    }

    /// The column keyed `key` given other cells, one per row (a machine cell shown another way
    /// for people).
    pub(crate) fn set_column(&mut self, key: &str, cells: impl IntoIterator<Item = Value>) {
        let i = self.columns.iter().position(|c| c.key == key).expect("the table has the column");
        for (row, cell) in self.rows.iter_mut().zip(cells) {
            row[i] = cell;
        }
    }

    /// A row's cells for people.
    pub(crate) fn shown(&self, row: &[Value]) -> Vec<String> {
        self.columns.iter().zip(row).map(|(c, v)| c.show(v)).collect()
    }

    /// Every leaf of a JSON document as a (field, value) row, the field a dotted path
    /// (`variants.0.label`).
    pub(crate) fn leaves(doc: &Value) -> Table {
        fn walk(path: &str, v: &Value, t: &mut Table) {
            let join = |k: &str| if path.is_empty() { k.to_string() } else { format!("{path}.{k}") };
            match v {
                Value::Object(m) => m.iter().for_each(|(k, x)| walk(&join(k), x, t)),
                Value::Array(a) if !a.is_empty() => {
                    a.iter().enumerate().for_each(|(i, x)| walk(&join(&i.to_string()), x, t))
                }
                _ => t.push(vec![Value::String(path.to_string()), v.clone()]),
            }
        }
        let mut t = Table::named(&["field", "value"]);
        walk("", doc, &mut t);
        t
    }

    /// The whole table through one renderer.
    pub(crate) fn render(&self, m: &dyn Markup) -> String {
        let mut out = m.table_header(self);
        for row in &self.rows {
            out.push_str(&m.table_row(self, row));
        }
        out.push_str(&m.table_end(self));
        out
    }

    pub(crate) fn jsonl(&self) -> String {
        self.render(&JsonLines)
    }

    pub(crate) fn csv(&self) -> String {
        self.render(&Csv)
    }

    pub(crate) fn markdown(&self) -> String {
        self.render(&Markdown)
    }
}

/// One output format of a [`Table`]: its header, one row, and what closes it.
pub(crate) trait Markup {
    fn table_header(&self, t: &Table) -> String;
    fn table_row(&self, t: &Table, row: &[Value]) -> String;
    fn table_end(&self, _t: &Table) -> String {
        String::new()
    }
}

/// Aligned plain text for the terminal: each column padded (text left, numbers right), two
/// spaces between columns.
pub(crate) struct Text {
    widths: Vec<usize>,
    indent: &'static str,
    gap: &'static str,
    trim: bool,
    header: bool,
}

impl Text {
    /// Widths for `t`'s cells as they are now; `indent` starts each line; `trim` drops a line's
    /// trailing padding.
    pub(crate) fn of(t: &Table, indent: &'static str, trim: bool) -> Text {
        // Every column as wide as its widest cell, the header included: no width is set by hand.
        let width = |i: usize, c: &Column| {
            std::iter::once(c.header.chars().count())
                .chain(t.rows.iter().map(|r| c.show(&r[i]).chars().count()))
                .max()
                .unwrap_or(0)
        };
        Text {
            widths: t.columns.iter().enumerate().map(|(i, c)| width(i, c)).collect(),
            indent,
            gap: "  ",
            trim,
            header: true,
        }
    }

    /// Rows alone, for a list of labelled lines: the columns' headers are neither shown nor
    /// counted in their widths.
    pub(crate) fn rows(t: &Table, indent: &'static str) -> Text {
        let width = |i: usize, c: &Column| t.rows.iter().map(|r| c.show(&r[i]).chars().count()).max().unwrap_or(0);
        Text {
            widths: t.columns.iter().enumerate().map(|(i, c)| width(i, c)).collect(),
            indent,
            gap: "  ",
            trim: true,
            header: false,
        }
    }

    /// The same, with `gap` between columns instead of two spaces.
    pub(crate) fn gap(mut self, gap: &'static str) -> Text {
        self.gap = gap;
        self
    }

    fn line(&self, t: &Table, cells: &[String]) -> String {
        let mut line = String::from(self.indent);
        for (i, (c, cell)) in t.columns.iter().zip(cells).enumerate() {
            if i > 0 {
                line.push_str(self.gap);
            }
            let pad = " ".repeat(self.widths[i].saturating_sub(cell.chars().count()));
            if c.kind == Kind::Number {
                line.push_str(&pad);
                line.push_str(cell);
            } else {
                line.push_str(cell);
                if i + 1 < cells.len() || self.trim {
                    line.push_str(&pad);
                }
            }
        }
        if self.trim {
            line.truncate(line.trim_end().len());
        }
        line.push('\n');
        line
    }
}

impl Markup for Text {
    fn table_header(&self, t: &Table) -> String {
        if !self.header {
            return String::new();
        }
        let head: Vec<String> = t.columns.iter().map(|c| c.header.clone()).collect();
        self.line(t, &head)
    }

    fn table_row(&self, t: &Table, row: &[Value]) -> String {
        self.line(t, &t.shown(row))
    }
}

/// A GitHub-flavoured Markdown table, number columns right-aligned.
pub(crate) struct Markdown;

fn md_line(cells: &[String]) -> String {
    format!("| {} |\n", cells.iter().map(|c| md_cell(c)).collect::<Vec<_>>().join(" | "))
}

impl Markup for Markdown {
    fn table_header(&self, t: &Table) -> String {
        let head: Vec<String> = t.columns.iter().map(|c| c.header.clone()).collect();
        let rule: Vec<&str> = t.columns.iter().map(|c| if c.kind == Kind::Number { "---:" } else { "---" }).collect();
        format!("{}|{}|\n", md_line(&head), rule.join("|"))
    }

    fn table_row(&self, t: &Table, row: &[Value]) -> String {
        md_line(&t.shown(row))
    }
}

/// A cell as Markdown: a `|` would end it and a newline would end the row.
pub(crate) fn md_cell(s: &str) -> String {
    s.replace('\\', "\\\\").replace('|', "\\|").replace('\r', "").replace('\n', "<br>")
}

/// CSV (RFC 4180) under the columns' keys.
pub(crate) struct Csv;

fn csv_record<I: IntoIterator<Item = String>>(cells: I) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(cells).expect("writing to memory");
    String::from_utf8(w.into_inner().expect("writing to memory")).expect("cells are UTF-8")
}

impl Markup for Csv {
    fn table_header(&self, t: &Table) -> String {
        csv_record(t.columns.iter().map(|c| c.key.clone()))
    }

    fn table_row(&self, _t: &Table, row: &[Value]) -> String {
        csv_record(row.iter().map(plain))
    }
}

/// One JSON object per row, `schema_version` first, then the cells under the columns' keys in
/// the columns' order.
pub(crate) struct JsonLines;

impl Markup for JsonLines {
    fn table_header(&self, _t: &Table) -> String {
        String::new()
    }

    fn table_row(&self, t: &Table, row: &[Value]) -> String {
        crate::schema::to_json_line(&Row { columns: &t.columns, cells: row }) + "\n"
    }
}

/// A row as an object in the columns' order (a `serde_json::Map` would sort its keys).
struct Row<'a> {
    columns: &'a [Column],
    cells: &'a [Value],
}

impl Serialize for Row<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(self.columns.len()))?;
        for (c, v) in self.columns.iter().zip(self.cells) {
            m.serialize_entry(&c.key, v)?;
        }
        m.end()
    }
}

/// A machine cell for people: a fraction to two decimals, the rest as [`plain`].
fn readable(v: &Value) -> String {
    match v.as_f64() {
        Some(x) if v.is_f64() && x.fract() != 0.0 => format!("{x:.2}"),
        _ => plain(v),
    }
}

/// A cell as text: strings bare, null empty, anything else as JSON.
fn plain(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sample() -> Table {
        let mut t = Table::named(&["variant", "median", "note"]);
        t.push(vec![json!("f16"), json!(12.5), json!("a, \"quoted\" | piped")]);
        t.push(vec![json!("q8_0"), Value::Null, json!("")]);
        t
    }

    #[test]
    fn csv_quotes_what_needs_quoting() {
        assert_eq!(sample().csv(), "variant,median,note\nf16,12.5,\"a, \"\"quoted\"\" | piped\"\nq8_0,,\n");
    }

    #[test]
    fn jsonl_keeps_the_column_order_and_the_types() {
        let lines: Vec<String> = sample().jsonl().lines().map(String::from).collect();
        assert_eq!(lines[0], r#"{"schema_version":3,"variant":"f16","median":12.5,"note":"a, \"quoted\" | piped"}"#);
        assert_eq!(lines[1], r#"{"schema_version":3,"variant":"q8_0","median":null,"note":""}"#);
    }

    #[test]
    fn markdown_escapes_pipes() {
        let md = sample().markdown();
        assert_eq!(md.lines().nth(1), Some("|---|---|---|"));
        assert_eq!(md.lines().nth(2), Some("| f16 | 12.50 | a, \"quoted\" \\| piped |"));
    }

    #[test]
    fn leaves_name_every_field_by_its_path() {
        let t = Table::leaves(&json!({"a": {"b": [1, 2]}, "c": "x"}));
        let fields: Vec<&str> = t.rows.iter().map(|r| r[0].as_str().unwrap()).collect();
        assert_eq!(fields, ["a.b.0", "a.b.1", "c"]);
    }

    #[derive(Serialize)]
    struct Line {
        label: &'static str,
        ms: Option<f64>,
    }

    #[test]
    fn a_row_struct_fills_its_columns_by_name_and_numbers_print_with_their_unit() {
        let mut t =
            Table::new(vec![Column::text("variant").key("label"), Column::number("time").key("ms").digits(1, " ms")]);
        t.push_row(&Line { label: "f16", ms: Some(12.34) });
        t.push_row(&Line { label: "q8_0", ms: None });
        assert_eq!(t.render(&Text::of(&t, "", true)), "variant     time\nf16      12.3 ms\nq8_0           —\n");
        assert_eq!(t.csv(), "label,ms\nf16,12.34\nq8_0,\n");
    }
}
