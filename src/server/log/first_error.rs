//! The line that explains why a server died while loading.
use super::line::{message, read_line, Line};

/// The first `GGML_ASSERT`, else the first error-level line, else the first line mentioning an
/// error.
pub(crate) fn first_error_line(text: &str) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let pick = |pred: &dyn Fn(&str, &str) -> bool| {
        lines.iter().find_map(|l| {
            let msg = message(l)?;
            pred(l, &msg).then(|| msg.trim().to_string())
        })
    };
    pick(&|_, m| m.contains("GGML_ASSERT"))
        .or_else(|| first_error_level(&lines))
        .or_else(|| pick(&|_, m| m.to_ascii_lowercase().contains("error")))
}

/// The first error-level line, after the warning-level line just before it when there is one: the
/// server often warns of the cause and then errors on its consequence (`context type MTP
/// requested but model doesn't contain MTP layers`, then `failed to create MTP context`).
fn first_error_level(lines: &[&str]) -> Option<String> {
    let mut before: Option<Line<'_>> = None;
    for l in lines {
        let Some(line) = read_line(l) else { continue };
        if line.level == Some('E') {
            let error = line.msg.trim();
            return Some(match before.filter(|b| b.level == Some('W')) {
                Some(w) => format!("{}: {error}", w.msg.trim()),
                None => error.to_string(),
            });
        }
        before = Some(line);
    }
    None
}
