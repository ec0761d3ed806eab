//! HTML text: escaping and the report's tables as `<table>`.
use crate::report::study::tables::PageTable;
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

fn verdict_class(word: &str) -> &'static str {
    match word {
        "faster" => "faster",
        "slower" => "slower",
        "baseline" => "base",
        _ => "unclear",
    }
}

pub(crate) fn table(t: &PageTable) -> String {
    let mut o = String::from("<div class=\"scroll\"><table>\n<thead><tr>");
    for (i, h) in t.head.iter().enumerate() {
        let class = if t.numeric.contains(&i) { " class=\"num\"" } else { "" };
        let _ = write!(o, "<th{class}>{}</th>", esc(h));
    }
    o.push_str("</tr></thead>\n<tbody>\n");
    for r in &t.rows {
        o.push_str("<tr>");
        for (i, cell) in r.iter().enumerate() {
            let class = if t.verdict == Some(i) {
                format!(" class=\"verdict {}\"", verdict_class(cell))
            } else if t.numeric.contains(&i) {
                " class=\"num\"".into()
            } else {
                String::new()
            };
            let _ = write!(o, "<td{class}>{}</td>", esc(cell).replace('\n', "<br>"));
        }
        o.push_str("</tr>\n");
    }
    o.push_str("</tbody></table></div>\n");
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_cannot_become_markup() {
        assert_eq!(esc("<script>a&'b\"</script>"), "&lt;script&gt;a&amp;&#39;b&quot;&lt;/script&gt;");
        let t = PageTable {
            head: vec!["k".into(), "verdict".into()],
            rows: vec![vec!["flash_attn<64>".into(), "slower".into()]],
            numeric: vec![],
            verdict: Some(1),
        };
        let html = table(&t);
        assert!(html.contains("<td>flash_attn&lt;64&gt;</td>"), "{html}");
        assert!(html.contains("<td class=\"verdict slower\">slower</td>"), "{html}");
    }
}
