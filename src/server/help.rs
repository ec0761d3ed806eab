//! What a llama-server build accepts, read from its own `--help`: every flag it lists (short and
//! long forms and the `--no-` forms, as llama.cpp's `common_arg::to_string` prints them), how many
//! values each takes and its default, so that a flag the build does not have is refused before a
//! study folder exists instead of failing the variant's first sample ("invalid argument").
//!
//! llama.cpp's parser (common/arg.cpp, `common_params_parse_ex`) reads the command line a word at
//! a time: each word must be a listed flag (a `--` flag with `_` read as `-`), followed by as many
//! words as the flag has value hints, whatever those words look like (`--prio -1`). There are no
//! `--flag=value` forms and no positional words. The walk here is the same.
use std::collections::HashMap;

/// The flags one build lists, parsed from its `--help`.
#[derive(Debug, Clone, Default)]
pub(crate) struct ServerHelp {
    options: Vec<Opt>,
    /// Every listed name → its option in `options`.
    names: HashMap<String, usize>,
}

/// One option: its names (`-c`, `--ctx-size`), the words after it, and what `--help` says of it.
#[derive(Debug, Clone)]
struct Opt {
    names: Vec<String>,
    values: usize,
    /// The names and value hints as printed (`-c,    --ctx-size N`).
    usage: String,
    /// Its description, continuation lines joined.
    about: String,
}

/// One flag of a command line: its option, the word that named it, and its values.
type Given<'h, 'w> = (&'h Opt, &'w str, &'w [String]);

/// Why a word of a server command line is not one llama-server takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum BadWord {
    /// A flag the build does not list, with the listed flag closest to it when one is close.
    Unknown { word: String, near: Option<String> },
    /// `--flag=value`: llama.cpp takes the value as the next word.
    Joined { flag: String, value: String },
    /// A flag that takes values, at the end of the words.
    NoValue { flag: String, usage: String },
    /// A word that is neither a flag nor a flag's value.
    Stray { word: String },
}

impl ServerHelp {
    /// The flags `text` (a build's `--help`, stdout and stderr together) lists. Lines of another
    /// layout (llama.cpp before its `common_arg` table, autumn 2024) give none: see
    /// [`ServerHelp::understood`].
    pub(crate) fn parse(text: &str) -> ServerHelp {
        let mut help = ServerHelp::default();
        for line in text.lines() {
            if let Some(opt) = option_line(line) {
                let at = help.options.len();
                for n in &opt.names {
                    help.names.entry(n.clone()).or_insert(at);
                }
                help.options.push(opt);
            } else if let Some(last) = help.options.last_mut().filter(|_| line.starts_with(' ')) {
                // A description continued on the next lines, indented to its column.
                last.about.push(' ');
                last.about.push_str(line.trim());
            }
        }
        help
    }

    /// Whether the table is llama-server's: it lists `--port` (every server abprof starts is
    /// given one). Only then are a command line's words checked against it.
    pub(crate) fn understood(&self) -> bool {
        self.names.contains_key("--port")
    }

    fn option(&self, word: &str) -> Option<&Opt> {
        // common/arg.cpp: "--" flags are matched with '_' replaced by '-'.
        let key = if word.starts_with("--") { word.replace('_', "-") } else { word.to_string() };
        self.names.get(&key).map(|&i| &self.options[i])
    }

    /// The first word of `words` llama-server would refuse, walking them as its parser does.
    pub(crate) fn check(&self, words: &[String]) -> Result<(), BadWord> {
        self.walk(words).map(|_| ())
    }

    /// The flags of `words` (each as written) with their values, in order; the first bad word
    /// otherwise.
    fn walk<'w>(&self, words: &'w [String]) -> Result<Vec<Given<'_, 'w>>, BadWord> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < words.len() {
            let w = &words[i];
            let Some(opt) = self.option(w) else { return Err(self.bad(w)) };
            let values = words
                .get(i + 1..i + 1 + opt.values)
                .ok_or_else(|| BadWord::NoValue { flag: w.clone(), usage: opt.usage.clone() })?;
            out.push((opt, w.as_str(), values));
            i += 1 + opt.values;
        }
        Ok(out)
    }

    fn bad(&self, w: &str) -> BadWord {
        if let Some((flag, value)) = w.split_once('=').filter(|(f, _)| self.option(f).is_some()) {
            return BadWord::Joined { flag: flag.into(), value: value.into() };
        }
        // A number is a value whatever its sign (`-1`), never a flag.
        if !w.starts_with('-') || w.len() < 2 || w.parse::<f64>().is_ok() {
            return BadWord::Stray { word: w.into() };
        }
        BadWord::Unknown { word: w.into(), near: self.nearest(w) }
    }

    /// The listed flag of the same kind (`-x` or `--xx`) closest to `word`, if it is close: a
    /// typo's, not another flag's.
    fn nearest(&self, word: &str) -> Option<String> {
        let long = word.starts_with("--");
        let limit = (word.len() / 4).clamp(1, 3);
        self.names
            .keys()
            .filter(|n| n.starts_with("--") == long)
            .map(|n| (edit_distance(word, n), n))
            .filter(|(d, _)| *d <= limit)
            .min()
            .map(|(_, n)| n.clone())
    }

    /// The last value `words` gives the option named `name` (any of its names), as llama.cpp
    /// keeps the last of a repeated flag; `None` when not given or the words do not parse.
    pub(crate) fn last_value(&self, words: &[String], name: &str) -> Option<String> {
        let target = self.option(name)?;
        let walked = self.walk(words).ok()?;
        walked.iter().rev().find(|(o, _, _)| std::ptr::eq(*o, target)).and_then(|(_, _, v)| v.first().cloned())
    }

    /// The last flag of `names` that `words` gives (a boolean's `--x` or `--no-x`), as written.
    pub(crate) fn last_flag<'w>(&self, words: &'w [String], names: &[&str]) -> Option<&'w str> {
        self.walk(words).ok()?.into_iter().rev().map(|(_, flag, _)| flag).find(|f| names.contains(f))
    }

    /// The default `--help` prints for the option named `name` (`default: 0`), when a number.
    pub(crate) fn default_number(&self, name: &str) -> Option<i64> {
        let about = &self.option(name)?.about;
        let after = &about[about.find("default: ")? + "default: ".len()..];
        let end = after.find(|c: char| !(c.is_ascii_digit() || c == '-')).unwrap_or(after.len());
        after[..end].parse().ok()
    }
}

/// Whether `help` (a binary's `--help`) is llama-server's, in any layout: it names `--port`.
pub(crate) fn names_port(help: &str) -> bool {
    help.contains("--port")
}

/// One option line of the `common_arg` layout: the names and value hints start the line and run
/// to column 40 where they fit in 37 characters (the description follows there), else fill it.
fn option_line(line: &str) -> Option<Opt> {
    if !line.starts_with('-') || line.starts_with("-----") {
        return None;
    }
    let (head, about) = match line.get(37..40) {
        Some("   ") => (&line[..40], line[40..].trim()),
        _ => (line, ""),
    };
    let mut names = Vec::new();
    let mut rest = head;
    loop {
        let s = rest.trim_start();
        let end = s.find(' ').unwrap_or(s.len());
        let word = &s[..end];
        match word.strip_suffix(',') {
            Some(name) if name.starts_with('-') => names.push(name.to_string()),
            _ if word.starts_with('-') => {
                names.push(word.to_string());
                rest = &s[end..];
                break;
            }
            _ => {
                rest = s;
                break;
            }
        }
        rest = &s[end..];
    }
    if names.is_empty() {
        return None;
    }
    Some(Opt { names, values: hint_count(rest.trim()), usage: head.trim_end().to_string(), about: about.into() })
}

/// The value hints after the names (`N`, `FNAME SCALE`, `<tensor name pattern>=<buffer type>,...`):
/// words, a bracketed group with spaces inside counting as one.
fn hint_count(hints: &str) -> usize {
    let (mut n, mut depth, mut in_word) = (0, 0i32, false);
    for c in hints.chars() {
        match c {
            '<' | '{' | '[' | '(' => depth += 1,
            '>' | '}' | ']' | ')' => depth -= 1,
            _ => {}
        }
        if c.is_whitespace() && depth <= 0 {
            in_word = false;
        } else if !in_word {
            in_word = true;
            n += 1;
        }
    }
    n
}

/// Levenshtein distance (characters inserted, deleted or replaced).
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let keep = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(row[j + 1] + 1);
            prev = keep;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pinned test bed's llama-server (0c1e57098) `--help`, as it printed.
    const PINNED: &str = include_str!("../../tests/fixtures/llama-server/help.txt");

    fn words(s: &str) -> Vec<String> {
        shlex::split(s).unwrap()
    }

    #[test]
    fn the_pinned_help_lists_short_long_and_no_forms_with_their_values() {
        let h = ServerHelp::parse(PINNED);
        assert!(h.understood());
        for flag in ["-c", "--ctx-size", "-np", "--port", "-m", "--no-kv-unified", "-no-kvu", "-nkvo", "--no-warmup"] {
            assert!(h.option(flag).is_some(), "{flag}");
        }
        assert_eq!(h.option("-c").unwrap().values, 1);
        assert_eq!(h.option("--no-warmup").unwrap().values, 0);
        assert_eq!(h.option("-ot").unwrap().values, 1, "a hint with spaces inside its brackets is one value");
        assert_eq!(h.option("--control-vector-layer-range").unwrap().values, 2);
        assert_eq!(h.option("--spec-draft-backend-sampling").unwrap().values, 0, "a line without a description");
        assert_eq!(h.default_number("-c"), Some(0));
        assert_eq!(h.default_number("--parallel"), Some(-1));
        assert!(h.option("-----").is_none() && h.option("--cache-type-kk").is_none());
        assert!(h.options.len() > 200, "{}", h.options.len());
    }

    #[test]
    fn a_command_line_is_walked_as_llama_cpp_parses_it() {
        let h = ServerHelp::parse(PINNED);
        assert_eq!(h.check(&words("-c 4096 -t 2 -np 1 --prio -1 -ot 'exps=CPU' --no-warmup --ctx_size 8")), Ok(()));
        assert_eq!(
            h.check(&words("-c 4096 --cache-type-kk q8_0")),
            Err(BadWord::Unknown { word: "--cache-type-kk".into(), near: Some("--cache-type-k".into()) })
        );
        assert_eq!(
            h.check(&words("--ctx-size=4096")),
            Err(BadWord::Joined { flag: "--ctx-size".into(), value: "4096".into() })
        );
        assert!(
            matches!(h.check(&words("-t 2 -c")), Err(BadWord::NoValue { flag, usage }) if flag == "-c" && usage.contains("--ctx-size N"))
        );
        assert_eq!(h.check(&words("-t 2 4")), Err(BadWord::Stray { word: "4".into() }));
        assert_eq!(h.check(&words("-1")), Err(BadWord::Stray { word: "-1".into() }));
        assert!(matches!(h.check(&words("--frobnicate")), Err(BadWord::Unknown { near: None, .. })));
    }

    #[test]
    fn values_are_read_where_the_parser_reads_them() {
        let h = ServerHelp::parse(PINNED);
        let w = words("-c 4096 -np 2 --ctx-size 8192 -kvu -no-kvu");
        assert_eq!(h.last_value(&w, "--ctx-size").as_deref(), Some("8192"));
        assert_eq!(h.last_value(&w, "-np").as_deref(), Some("2"));
        assert_eq!(h.last_flag(&w, &["-kvu", "--kv-unified", "-no-kvu", "--no-kv-unified"]), Some("-no-kvu"));
        // `-c` as the value of another flag is no context size.
        assert_eq!(h.last_value(&words("--alias -c"), "-c"), None);
    }

    #[test]
    fn another_layout_is_not_understood_but_still_names_its_port() {
        let old = "usage: llama-server [options]\n\n  -c N, --ctx-size N        size of the prompt context\n  --port PORT               port to listen\n";
        assert!(!ServerHelp::parse(old).understood());
        assert!(names_port(old));
        assert!(!names_port(""));
    }

    #[test]
    fn edit_distance_counts_single_changes() {
        assert_eq!(edit_distance("--cache-type-kk", "--cache-type-k"), 1);
        assert_eq!(edit_distance("abc", "abc"), 0);
        assert_eq!(edit_distance("", "ab"), 2);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }
}
