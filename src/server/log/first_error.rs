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
        .or_else(|| first_error_level(&lines))
        .or_else(|| pick(&|_, m| m.to_ascii_lowercase().contains("error")))
}

/// The first error-level line, after the warning-level line just before it when there is one: the
/// server often warns of the cause and then errors on its consequence (`context type MTP
/// requested but model doesn't contain MTP layers`, then `failed to create MTP context`).
fn first_error_level(lines: &[&str]) -> Option<String> {
    let at = lines.iter().position(|l| is_error_level(l) && message(l).is_some())?;
    let error = message(lines[at])?.trim().to_string();
    let warning = at.checked_sub(1).map(|i| lines[i]).filter(|l| is_warning_level(l)).and_then(message);
    Some(match warning {
        Some(w) => format!("{}: {error}", w.trim()),
        None => error,
    })
}

fn is_warning_level(raw: &str) -> bool {
    if raw.starts_with('{') {
        return raw.contains(r#""level":"warn"#);
    }
    static LEVEL_W: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^(?:\d+\.\d{2}\.\d{3}\.\d{3} )?W ").unwrap());
    LEVEL_W.is_match(raw)
}

fn is_error_level(raw: &str) -> bool {
    if raw.starts_with('{') {
        return raw.contains(r#""level":"error""#);
    }
    static LEVEL_E: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^(?:\d+\.\d{2}\.\d{3}\.\d{3} )?E ").unwrap());
    LEVEL_E.is_match(raw)
}
