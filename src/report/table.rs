//! A result's table: named columns, typed cells, written as JSON Lines, CSV (RFC 4180) or a
//! Markdown table ready to paste into a pull request.
use serde_json::Value;

/// Rows of typed cells under named columns.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Table {
    pub(crate) columns: Vec<String>,
    pub(crate) rows: Vec<Vec<Value>>,
}

impl Table {
    pub(crate) fn new(columns: &[&str]) -> Table {
        Table { columns: columns.iter().map(|c| c.to_string()).collect(), rows: Vec::new() }
    }

    pub(crate) fn push(&mut self, row: Vec<Value>) {
        debug_assert_eq!(row.len(), self.columns.len(), "a row has one cell per column");
        self.rows.push(row);
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
        let mut t = Table::new(&["field", "value"]);
        walk("", doc, &mut t);
        t
    }

    /// One JSON object per row, each with `schema_version` first.
    pub(crate) fn jsonl(&self) -> String {
        let mut out = String::new();
        for row in &self.rows {
            out.push_str(&crate::schema::to_json_line(&Row { columns: &self.columns, cells: row }));
            out.push('\n');
        }
        out
    }

    pub(crate) fn csv(&self) -> String {
        let mut w = csv::Writer::from_writer(Vec::new());
        w.write_record(&self.columns).expect("writing to memory");
        for row in &self.rows {
            w.write_record(row.iter().map(plain)).expect("writing to memory");
        }
        String::from_utf8(w.into_inner().expect("writing to memory")).expect("cells are UTF-8")
    }

    pub(crate) fn markdown(&self) -> String {
        let rows: Vec<Vec<String>> = self.rows.iter().map(|r| r.iter().map(readable).collect()).collect();
        markdown_table(&self.columns, &rows, &[])
    }
}

/// A GitHub-flavoured Markdown table, `numeric` columns right-aligned: every table abprof writes
/// in Markdown (a result's `--format md`, the study report) goes through here.
pub(crate) fn markdown_table(columns: &[String], rows: &[Vec<String>], numeric: &[usize]) -> String {
    let line = |cells: &[String]| format!("| {} |\n", cells.iter().map(|c| md_cell(c)).collect::<Vec<_>>().join(" | "));
    let mut out = line(columns);
    let rule: Vec<&str> = (0..columns.len()).map(|i| if numeric.contains(&i) { "---:" } else { "---" }).collect();
    out.push_str(&format!("|{}|\n", rule.join("|")));
    for r in rows {
        out.push_str(&line(r));
    }
    out
}

/// A cell as Markdown: a `|` would end it and a newline would end the row.
pub(crate) fn md_cell(s: &str) -> String {
    s.replace('\\', "\\\\").replace('|', "\\|").replace('\r', "").replace('\n', "<br>")
}

/// A row as an object in the columns' order (a `serde_json::Map` would sort its keys).
struct Row<'a> {
    columns: &'a [String],
    cells: &'a [Value],
}

impl serde::Serialize for Row<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(self.columns.len()))?;
        for (k, v) in self.columns.iter().zip(self.cells) {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

/// A cell for people: a fraction to two decimals, the rest as [`plain`].
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
        let mut t = Table::new(&["variant", "median", "note"]);
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
        assert_eq!(lines[0], r#"{"schema_version":2,"variant":"f16","median":12.5,"note":"a, \"quoted\" | piped"}"#);
        assert_eq!(lines[1], r#"{"schema_version":2,"variant":"q8_0","median":null,"note":""}"#);
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
}
