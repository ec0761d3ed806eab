//! The line that explains why a server died while loading.
use super::line::message;
use regex::Regex;
use std::sync::LazyLock;

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
        .or_else(|| pick(&|raw, _| is_error_level(raw)))
        .or_else(|| pick(&|_, m| m.to_ascii_lowercase().contains("error")))
}

fn is_error_level(raw: &str) -> bool {
    if raw.starts_with('{') {
        return raw.contains(r#""level":"error""#);
    }
    static LEVEL_E: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^(?:\d+\.\d{2}\.\d{3}\.\d{3} )?E ").unwrap());
    LEVEL_E.is_match(raw)
}
