//! The README is the front page (issue #35): at most 10,000 bytes, and every `abprof …` command
//! line in its fenced code blocks — and in docs/commands.md's — names a subcommand that exists
//! (`abprof SUB --help` exits 0) and only flags that subcommand has. docs/commands.md names every
//! subcommand, so nothing moved out of the README is lost.
mod common;
use common::abprof;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// One `abprof` invocation in a document: the line it is on and its words after `abprof`.
#[derive(Debug)]
struct Invocation {
    line: String,
    words: Vec<String>,
}

/// The info strings of a fence that holds shell commands (a `text` fence holds a layout or prose).
const SHELL_FENCES: [&str; 4] = ["sh", "bash", "shell", "console"];

/// The lines inside the document's shell fences (```sh), each backslash continuation joined to its
/// line.
fn fenced_lines(doc: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let (mut inside, mut shell, mut pending) = (false, false, String::new());
    for line in doc.lines() {
        if let Some(info) = line.trim_start().strip_prefix("```") {
            inside = !inside;
            shell = inside && SHELL_FENCES.contains(&info.trim());
            continue;
        }
        if !shell {
            continue;
        }
        match line.strip_suffix('\\') {
            Some(head) => pending.push_str(head),
            None => {
                pending.push_str(line);
                lines.push(std::mem::take(&mut pending));
            }
        }
    }
    assert!(!inside, "an unclosed ``` fence");
    lines
}

/// Words that end one command of a shell line.
const SEPARATORS: [&str; 8] = ["|", "||", "&&", ";", ">", ">>", "<", "2>"];

/// Every `abprof` invocation on the document's fenced lines, split as the shell would (quotes
/// kept together, `# comments` dropped); lines where `abprof` is not a word are not commands.
fn invocations(doc: &str) -> Vec<Invocation> {
    let mut out = Vec::new();
    for line in fenced_lines(doc) {
        if !line.split_whitespace().any(|w| w == "abprof") {
            continue;
        }
        let words = shlex::split(&line).unwrap_or_else(|| panic!("unbalanced quotes in a command line: {line}"));
        let mut current: Option<Vec<String>> = None;
        for w in words {
            if w == "abprof" {
                out.extend(current.take().map(|words| Invocation { line: line.clone(), words }));
                current = Some(Vec::new());
            } else if SEPARATORS.contains(&w.as_str()) {
                out.extend(current.take().map(|words| Invocation { line: line.clone(), words }));
            } else if let Some(c) = current.as_mut() {
                c.push(w);
            }
        }
        out.extend(current.take().map(|words| Invocation { line: line.clone(), words }));
    }
    out
}

/// A word as a flag: `[--format` and `--json]` are optional flags written in brackets, and
/// `--history=URL` is `--history`.
fn flag(word: &str) -> Option<&str> {
    let w = word.trim_start_matches('[').trim_end_matches(']');
    let w = w.split('=').next().unwrap_or(w);
    (w.starts_with("--") && w.len() > 2).then_some(w)
}

/// The names of the subcommands a `--help` text lists under "Commands:".
fn subcommands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next().map(String::from))
        .collect()
}

/// The long flags a `--help` text defines: its option lines, `  -h, --help` or `      --root <DIR>`
/// (clap's two indentations), never a flag a description merely mentions.
fn defined_flags(help: &str) -> BTreeSet<String> {
    help.lines()
        .filter(|l| {
            (l.starts_with("  -") && !l.starts_with("  --")) || (l.starts_with("      --") && !l.starts_with("       "))
        })
        .filter_map(|l| l.split_whitespace().find(|w| w.starts_with("--")))
        .map(|w| w.trim_end_matches(',').split('=').next().unwrap_or(w).to_string())
        .collect()
}

/// `abprof [CMD…] --help`, asked once per command path.
struct Helps(BTreeMap<Vec<String>, String>);

impl Helps {
    fn of(&mut self, cmd: &[String], line: &str) -> &str {
        self.0.entry(cmd.to_vec()).or_insert_with(|| {
            let out = abprof().args(cmd).arg("--help").output().unwrap();
            assert!(
                out.status.success(),
                "`abprof {} --help` exits {:?} (from the line: {line}): {}",
                cmd.join(" "),
                out.status.code(),
                String::from_utf8_lossy(&out.stderr)
            );
            String::from_utf8(out.stdout).unwrap()
        })
    }
}

/// Checks every invocation of `doc_path` against `--help`; returns the command paths it named.
fn check_document(doc_path: &str, helps: &mut Helps) -> Vec<Vec<String>> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(doc_path);
    let doc = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut named = Vec::new();
    for inv in invocations(&doc) {
        // The command path: the subcommand, then a nested one where its --help lists it
        // (`history import`); none when the line passes abprof's own flags.
        let mut cmd: Vec<String> = Vec::new();
        for w in &inv.words {
            if w.starts_with('-') || w.starts_with('[') {
                break;
            }
            let nested = subcommands(helps.of(&cmd, &inv.line));
            if !nested.contains(w) {
                assert!(!cmd.is_empty(), "{doc_path}: `abprof {w}` is no subcommand (line: {})", inv.line);
                break;
            }
            cmd.push(w.clone());
        }
        let defined = defined_flags(helps.of(&cmd, &inv.line));
        // After a bare `--` come the CMake arguments of build and bisect, not abprof's flags.
        for f in inv.words.iter().take_while(|w| *w != "--").filter_map(|w| flag(w)) {
            assert!(defined.contains(f), "{doc_path}: `abprof {}` has no {f} (line: {})", cmd.join(" "), inv.line);
        }
        named.push(cmd);
    }
    named
}

#[test]
fn the_readme_is_a_front_page_and_every_command_line_in_it_and_in_the_commands_page_parses() {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    assert!(
        readme.len() <= 10_000,
        "README.md is {} bytes: keep it at most 10,000, move the rest to docs/",
        readme.len()
    );

    let mut helps = Helps(BTreeMap::new());
    let in_readme = check_document("README.md", &mut helps);
    assert!(in_readme.iter().any(|c| c == &["ab"]), "the README's quick start runs abprof ab: {in_readme:?}");

    let in_commands = check_document("docs/commands.md", &mut helps);
    assert!(in_commands.len() >= 30, "docs/commands.md's examples: {in_commands:?}");

    // Every subcommand is documented in docs/commands.md: by an example, or at least by name.
    let page = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/commands.md")).unwrap();
    let top = helps.of(&[], "abprof --help").to_string();
    for sub in subcommands(&top).into_iter().filter(|s| s != "help") {
        assert!(
            in_commands.iter().any(|c| c.first() == Some(&sub)) || page.contains(&format!("abprof {sub}")),
            "docs/commands.md does not name `abprof {sub}`"
        );
    }
}

#[test]
fn command_lines_are_found_in_fences_joined_and_split_like_a_shell() {
    let doc = "text abprof ab --not-code\n```text\nsrc/ the real abprof (most of it)\n```\n```sh\nabprof ab --root /tmp/x \\\n  --variant \"a=B|extra=--spec-type x\" [--format md]  # abprof's --comment\nX=1 abprof history import /d && abprof man > abprof.1\nscripts/demo   # builds abprof\n```\n";
    let got: Vec<Vec<String>> = invocations(doc).into_iter().map(|i| i.words).collect();
    assert_eq!(
        got,
        [
            vec!["ab", "--root", "/tmp/x", "--variant", "a=B|extra=--spec-type x", "[--format", "md]"],
            vec!["history", "import", "/d"],
            vec!["man"],
        ]
    );
    let flags: Vec<&str> = got[0].iter().filter_map(|w| flag(w)).collect();
    assert_eq!(flags, ["--root", "--variant", "--format"]);
    assert_eq!(flag("--history=postgres://h/db"), Some("--history"));
    assert_eq!(flag("--"), None);

    let help = "Usage: abprof x [OPTIONS]\n\nOptions:\n      --root <DIR>\n          Evidence folder; see also\n          --not-a-flag of another\n      --ignore-eos  Send ignore_eos\n  -h, --help\n          Print help\n";
    let defined: Vec<String> = defined_flags(help).into_iter().collect();
    assert_eq!(defined, ["--help", "--ignore-eos", "--root"]);
}
