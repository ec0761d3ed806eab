//! A usage error as one line, like every other abprof error, still exiting 2.
use clap::error::{ContextKind, ContextValue, ErrorKind};

/// Clap's message without its usage block, on one line; a rejected choice lists the choices, and
/// clap's suggestion (a misspelt flag's "did you mean") ends the line.
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
        // A flag given no value is an InvalidValue too, with no choices to list.
        if let Some(ContextValue::Strings(choices)) = e.get(ContextKind::ValidValue) {
            if !choices.is_empty() {
                line = format!("{line}: choose one of {}", choices.join(", "));
            }
        }
    }
    // Clap's "did you mean" sits in the paragraph cut above: kept, it is the fix.
    for tip in suggestions(e) {
        line = format!("{line}; {tip}");
    }
    line
}

/// Clap's suggestions for the mistyped flag, subcommand or value (`--sampels` → `--samples`),
/// each as one clause.
fn suggestions(e: &clap::Error) -> Vec<String> {
    let quoted = |v: &ContextValue| match v {
        ContextValue::String(s) => Some(format!("'{s}'")),
        ContextValue::Strings(v) if !v.is_empty() => {
            Some(v.iter().map(|s| format!("'{s}'")).collect::<Vec<_>>().join(" or "))
        }
        _ => None,
    };
    let mut out: Vec<String> =
        [ContextKind::SuggestedSubcommand, ContextKind::SuggestedArg, ContextKind::SuggestedValue]
            .into_iter()
            .filter_map(|k| e.get(k).and_then(quoted))
            .map(|s| format!("did you mean {s}?"))
            .collect();
    // Other tips (a flag of a subcommand, `--` before a value that starts with a dash).
    if let Some(ContextValue::StyledStrs(tips)) = e.get(ContextKind::Suggested) {
        out.extend(tips.iter().map(|t| t.to_string()));
    }
    out
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

    /// Clap's "did you mean" survives the one line: a misspelt flag, subcommand or choice.
    #[test]
    fn a_misspelling_keeps_its_suggestion() {
        let flag = usage_line(&["abprof", "ab", "--sampels", "3"]);
        assert_eq!(flag, "unexpected argument '--sampels' found; did you mean '--samples'?");
        let sub = usage_line(&["abprof", "summarise", "dir"]);
        assert!(sub.contains("did you mean 'summarize'?") && !sub.contains('\n'), "{sub}");
        let none = usage_line(&["abprof", "ab", "--root"]);
        assert_eq!(none, "a value is required for '--root <DIR>' but none was supplied");
        let value = usage_line(&["abprof", "completions", "bsh"]);
        assert!(value.contains("did you mean 'bash'?") && !value.contains('\n'), "{value}");
    }
}
