//! A usage error as one line, like every other abprof error, still exiting 2.
use clap::error::{ContextKind, ContextValue, ErrorKind};

/// Clap's message without its usage block and tips, on one line; a rejected choice lists the
/// choices.
pub(crate) fn one_line(e: &clap::Error) -> String {
    let rendered = e.render().to_string();
    let paragraph: Vec<&str> = rendered
        .lines()
        .take_while(|l| !l.trim().is_empty())
        .map(str::trim)
        .filter(|l| !l.starts_with("[possible values"))
        .collect();
    let mut line = paragraph.join(" ");
    if let Some(rest) = line.strip_prefix("error: ") {
        line = rest.to_string();
    }
    if e.kind() == ErrorKind::InvalidValue {
        if let Some(ContextValue::Strings(choices)) = e.get(ContextKind::ValidValue) {
            line = format!("{line}: choose one of {}", choices.join(", "));
        }
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn usage_line(args: &[&str]) -> String {
        one_line(&super::super::Cli::try_parse_from(args).unwrap_err())
    }

    #[test]
    fn choices_and_missing_flags_fit_one_line() {
        let bad = usage_line(&["abprof", "monitor", "--telemetry", "gpu"]);
        assert!(bad.starts_with("invalid value 'gpu' for '--telemetry <KIND>': choose one of auto,"), "{bad}");
        let missing = usage_line(&["abprof", "bench", "--tokens", "8"]);
        assert!(
            !missing.contains('\n') && missing.contains("--server-bin <BIN>") && missing.contains("--prompt <FILE>")
        );
    }
}
