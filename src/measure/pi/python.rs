//! The decode workload's validity check (docs/methodology.md §11): the answer's fenced Python
//! is extracted and executed in a temporary folder with a timeout. Fast invalid code is a failed
//! sample, however good its speed.
use crate::child::{run_timed, TimedExit};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// The Python of an answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct PythonCode {
    /// Every ```python block, in order, joined: a model that puts its tests in a second block
    /// still has them run (§11 of docs/methodology.md asks for no particular number of blocks).
    pub(crate) code: String,
    pub(crate) blocks: usize,
    /// The last block had no closing fence (the answer was cut off); it runs to the end of text.
    pub(crate) unterminated: bool,
}

fn fence(line: &str) -> Option<&str> {
    let t = line.trim_start();
    (line.len() - t.len() <= 3 && t.starts_with("```")).then(|| t.trim_start_matches('`').trim())
}

fn is_python(info: &str) -> bool {
    let lang = info.split_whitespace().next().unwrap_or("").to_ascii_lowercase();
    matches!(lang.as_str(), "python" | "py" | "python3")
}

/// The fenced Python blocks of `text`, or `None` when it has none.
pub(crate) fn extract_python(text: &str) -> Option<PythonCode> {
    let mut blocks: Vec<String> = Vec::new();
    let mut current: Option<(bool, String)> = None; // (is python, body)
    for line in text.lines() {
        match (&mut current, fence(line)) {
            (None, Some(info)) => current = Some((is_python(info), String::new())),
            (Some(_), Some("")) => {
                let (py, body) = current.take().expect("inside a block");
                if py {
                    blocks.push(body);
                }
            }
            (Some((_, body)), _) => {
                body.push_str(line);
                body.push('\n');
            }
            (None, None) => {}
        }
    }
    let unterminated = matches!(&current, Some((true, _)));
    if let Some((true, body)) = current {
        blocks.push(body);
    }
    (!blocks.is_empty()).then(|| PythonCode { blocks: blocks.len(), code: blocks.join("\n"), unterminated })
}

/// How the extracted program did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum CodeOutcome {
    /// It ran and exited 0 within the timeout.
    Passed,
    /// The answer had no ```python block.
    NoCode,
    Failed {
        exit: String,
        stderr_tail: String,
    },
    TimedOut {
        secs: u64,
    },
    /// The interpreter could not be started at all.
    NotRun {
        reason: String,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CodeCheck {
    #[serde(flatten)]
    pub outcome: CodeOutcome,
    pub blocks: usize,
    pub unterminated: bool,
    pub(crate) lines: usize,
    pub(crate) run_ms: Option<f64>,
}

impl CodeCheck {
    /// It ran clean and is complete: a block cut off by the token limit is an incomplete answer
    /// even when what was written so far (imports, say) happens to run.
    pub fn passed(&self) -> bool {
        self.outcome == CodeOutcome::Passed && !self.unterminated
    }

    /// One line for a failed sample's reasons.
    pub(crate) fn failure(&self) -> Option<String> {
        match &self.outcome {
            CodeOutcome::Passed if self.unterminated => {
                Some("the extracted Python is cut off (its ```python block never closes): an incomplete answer".into())
            }
            CodeOutcome::Passed => None,
            CodeOutcome::NoCode => Some("the answer has no ```python block".into()),
            CodeOutcome::Failed { exit, stderr_tail } => {
                let last = stderr_tail.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("").trim();
                Some(format!(
                    "the extracted Python {exit}{}",
                    if last.is_empty() { String::new() } else { format!(": {last}") }
                ))
            }
            CodeOutcome::TimedOut { secs } => Some(format!("the extracted Python ran past its {secs} s timeout")),
            CodeOutcome::NotRun { reason } => Some(format!("the extracted Python could not be run: {reason}")),
        }
    }
}

fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// Where and how the answer's Python runs (`None` in `judge_answer` skips the code check).
#[derive(Debug, Clone)]
pub struct CodeRun<'a> {
    pub python: &'a Path,
    pub timeout: Duration,
    /// Where the answer's program is kept (the sample's `answer.py`).
    pub code: PathBuf,
    /// Where what it printed is kept (the sample's `answer.out`).
    pub output: PathBuf,
}

/// Extracts the Python of `answer` and runs it with `python -I answer.py` in a fresh temporary
/// folder (isolated mode: no user site-packages, no PYTHON* variables). The program and its
/// output are kept where `run` says (a sample's `answer.py` and `answer.out`).
pub(crate) fn check_python(answer: &str, run: &CodeRun<'_>) -> CodeCheck {
    let (python, timeout) = (run.python, run.timeout);
    let Some(code) = extract_python(answer) else {
        return CodeCheck { outcome: CodeOutcome::NoCode, blocks: 0, unterminated: false, lines: 0, run_ms: None };
    };
    let mut check = CodeCheck {
        outcome: CodeOutcome::Passed,
        blocks: code.blocks,
        unterminated: code.unterminated,
        lines: code.code.lines().count(),
        run_ms: None,
    };
    let not_run = |reason: String| CodeOutcome::NotRun { reason };
    let _ = std::fs::write(&run.code, &code.code);
    let work = match tempfile::tempdir() {
        Ok(d) => d,
        Err(e) => {
            check.outcome = not_run(format!("no temporary folder: {e}"));
            return check;
        }
    };
    // The program runs under the name it is kept by, so a traceback names the kept file.
    let script = work.path().join(run.code.file_name().unwrap_or_default());
    let out_path = &run.output;
    let opened = std::fs::write(&script, &code.code).and_then(|_| std::fs::File::create(out_path));
    let out = match opened.and_then(|f| Ok((f.try_clone()?, f))) {
        Ok(pair) => pair,
        Err(e) => {
            check.outcome = not_run(format!("cannot write {}: {e}", out_path.display()));
            return check;
        }
    };
    let mut cmd = Command::new(python);
    cmd.arg("-I").arg(&script).current_dir(work.path()).stdin(Stdio::null()).stdout(out.0).stderr(out.1);
    // The answer's code is short and bounded by its timeout: no cancel.
    check.outcome = match run_timed(&mut cmd, timeout, &std::sync::atomic::AtomicBool::new(false)) {
        Err(e) => not_run(format!("{}: {e}", python.display())),
        Ok(run) => {
            check.run_ms = Some(run.wall_ms);
            match run.exit {
                TimedExit::TimedOut => CodeOutcome::TimedOut { secs: timeout.as_secs() },
                TimedExit::Exited(0) => CodeOutcome::Passed,
                other => CodeOutcome::Failed {
                    exit: other.describe(),
                    stderr_tail: tail(&std::fs::read_to_string(out_path).unwrap_or_default(), 5),
                },
            }
        }
    };
    check
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_blocks_are_joined_and_others_skipped() {
        let text =
            "Intro\n```python\ndef f():\n    return 1\n```\nsome text\n```bash\nls\n```\n```py\nassert f() == 1\n```\n";
        let c = extract_python(text).unwrap();
        assert_eq!(c.blocks, 2);
        assert_eq!(c.code, "def f():\n    return 1\n\nassert f() == 1\n");
        assert!(!c.unterminated);
        assert_eq!(extract_python("no code here\n```\nplain\n```\n"), None);
    }

    /// The check with its program and output kept in `ev`.
    fn check(answer: &str, python: &Path, timeout: Duration, ev: &Path) -> CodeCheck {
        let run = CodeRun { python, timeout, code: ev.join("answer.py"), output: ev.join("answer.out") };
        check_python(answer, &run)
    }

    #[test]
    fn a_cut_off_block_runs_to_the_end_and_fails_even_if_it_runs() {
        let c = extract_python("```python\nx = [1,\n").unwrap();
        assert!(c.unterminated);
        assert_eq!(c.code, "x = [1,\n");
        let ev = tempfile::tempdir().unwrap();
        let imports_only = check("```python\nimport math\n", Path::new("python3"), Duration::from_secs(20), ev.path());
        assert_eq!(imports_only.outcome, CodeOutcome::Passed);
        assert!(!imports_only.passed());
        assert!(imports_only.failure().unwrap().contains("cut off"));
    }

    #[test]
    fn programs_pass_fail_and_time_out() {
        let ev = tempfile::tempdir().unwrap();
        let py = Path::new("python3");
        let t = Duration::from_secs(20);
        assert!(check("```python\nassert sorted([2, 1]) == [1, 2]\n```", py, t, ev.path()).passed());
        let bad = check("```python\nassert 1 == 2, 'nope'\n```", py, t, ev.path());
        assert!(matches!(bad.outcome, CodeOutcome::Failed { .. }), "{bad:?}");
        assert!(bad.failure().unwrap().contains("AssertionError: nope"), "{:?}", bad.failure());
        let syntax = check("```python\ndef broken(:\n```", py, t, ev.path());
        assert!(syntax.failure().unwrap().contains("SyntaxError"), "{:?}", syntax.failure());
        let slow = check("```python\nimport time\ntime.sleep(30)\n```", py, Duration::from_millis(500), ev.path());
        assert!(matches!(slow.outcome, CodeOutcome::TimedOut { .. }), "{slow:?}");
        assert_eq!(check("just prose", py, t, ev.path()).outcome, CodeOutcome::NoCode);
    }
}
