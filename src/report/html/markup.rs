//! HTML text: escaping, the report's tables as `<table>` and its charts as `<figure>`.
use super::chart::ChartError;
use crate::report::table::{Kind, Markup, Table};
use serde_json::Value;
use std::fmt::Write;

/// Text made safe for an element's content or a quoted attribute.
pub(crate) fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

/// An HTML `<table>` in a scrolling box: numbers right-aligned, verdict words coloured.
pub(crate) struct Html;

fn verdict_class(word: &str) -> &'static str {
    match word {
        "faster" => "faster",
        "slower" => "slower",
        "baseline" => "base",
        _ => "unclear",
    }
}

impl Markup for Html {
    fn table_header(&self, t: &Table) -> String {
        let mut o = String::from("<div class=\"scroll\"><table>\n<thead><tr>");
        for c in &t.columns {
            let class = if c.kind == Kind::Number { " class=\"num\"" } else { "" };
            o.push_str(&format!("<th{class}>{}</th>", esc(&c.header)));
        }
        o.push_str("</tr></thead>\n<tbody>\n");
        o
    }

    fn table_row(&self, t: &Table, row: &[Value]) -> String {
        let mut o = String::from("<tr>");
        for (c, cell) in t.columns.iter().zip(t.shown(row)) {
            let class = match c.kind {
                Kind::Verdict => format!(" class=\"verdict {}\"", verdict_class(&cell)),
                Kind::Number => " class=\"num\"".into(),
                Kind::Text => String::new(),
            };
            o.push_str(&format!("<td{class}>{}</td>", esc(&cell).replace('\n', "<br>")));
        }
        o.push_str("</tr>\n");
        o
    }

    fn table_end(&self, _t: &Table) -> String {
        "</tbody></table></div>\n".into()
    }
}

/// A report table as `<table>`.
pub(crate) fn table(t: &Table) -> String {
    t.render(&Html)
}

/// A drawn chart as a figure with its caption (markup), or the page's error line in its place.
pub(crate) fn figure(o: &mut String, drawn: Result<String, ChartError>, caption: &str) {
    match drawn {
        Ok(svg) if caption.is_empty() => {
            let _ = write!(o, "<figure>\n{svg}\n</figure>\n");
        }
        Ok(svg) => {
            let _ = write!(o, "<figure>\n{svg}\n<figcaption>{caption}</figcaption></figure>\n");
        }
        Err(e) => {
            let _ = writeln!(o, "<p class=\"problem\">{}</p>", esc(&e.to_string()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_cannot_become_markup() {
        assert_eq!(esc("<script>a&'b\"</script>"), "&lt;script&gt;a&amp;&#39;b&quot;&lt;/script&gt;");
        let mut t =
            Table::new(vec![crate::report::table::Column::text("k"), crate::report::table::Column::verdict("verdict")]);
        t.push_text(vec!["flash_attn<64>".into(), "slower".into()]);
        let html = table(&t);
        assert!(html.contains("<td>flash_attn&lt;64&gt;</td>"), "{html}");
        assert!(html.contains("<td class=\"verdict slower\">slower</td>"), "{html}");
    }
}
