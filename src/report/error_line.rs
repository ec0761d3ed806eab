//! An error as the one line a user reads.

/// Joins an error chain into one line: "outer: inner: root". Typed errors often quote their
/// source already; a cause whose text is already in the line is not repeated.
pub(crate) fn one_line(e: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        let text = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join(" ");
        if line.contains(&text) {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&text);
    }
    line
}
