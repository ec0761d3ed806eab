//! docs/ci-example.yml, the documented CI job (docs/methodology.md §15): it parses as YAML (PyYAML,
//! the Python of the test bed's tier; scripts/system-deps installs Debian's python3-yaml), has the
//! parts the issue asks of it, and every `abprof` flag it names exists (`abprof CMD --help`).
mod common;
use common::abprof;
use serde_json::Value;
use std::path::Path;

fn yaml_as_json(path: &Path) -> Value {
    let script = "import json, sys, yaml; json.dump(yaml.safe_load(open(sys.argv[1])), sys.stdout)";
    for python in ["python3", "/usr/bin/python3"] {
        let Ok(out) = std::process::Command::new(python).args(["-c", script]).arg(path).output() else { continue };
        if out.status.success() {
            return serde_json::from_slice(&out.stdout).unwrap();
        }
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("No module named 'yaml'"), "{path:?} is not valid YAML: {err}");
    }
    panic!("no Python with PyYAML: run scripts/system-deps (Debian's python3-yaml)");
}

/// Every `abprof [history] SUBCOMMAND --flag` in a shell script, joined across `\` continuations.
fn abprof_flags(script: &str) -> Vec<(Vec<String>, String)> {
    let joined = script.replace("\\\n", " ");
    let mut out = Vec::new();
    for line in joined.lines() {
        for part in line.split("abprof ").skip(1) {
            let words: Vec<&str> = part.split_whitespace().collect();
            let mut cmd: Vec<String> = Vec::new();
            for w in &words {
                if w.starts_with('-') || w.contains(['"', '$', '/', '|', ')', ';']) || cmd.len() == 2 {
                    break;
                }
                cmd.push(w.to_string());
            }
            let end = words.iter().position(|w| ["|", "||", "&&", ">>", ";"].contains(w)).unwrap_or(words.len());
            for w in &words[..end] {
                if let Some(flag) = w.strip_prefix("--") {
                    let flag = flag.split('=').next().unwrap();
                    out.push((cmd.clone(), format!("--{flag}")));
                }
            }
        }
    }
    out
}

#[test]
fn the_ci_example_parses_and_names_only_flags_that_exist() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/ci-example.yml");
    let doc = yaml_as_json(&path);
    let job = &doc["jobs"]["ab"];
    let runs_on = job["runs-on"].as_array().expect("runs-on is a list of labels");
    assert!(runs_on.iter().any(|l| l == "self-hosted"), "{runs_on:?}");
    assert!(runs_on.iter().any(|l| l.as_str().is_some_and(|s| s.contains("matrix.gpu"))), "a label per GPU kind");
    assert!(job["env"]["PGPASSWORD"].as_str().unwrap().contains("secrets."), "the password from a secret");
    let url = job["env"]["ABPROF_HISTORY"].as_str().unwrap();
    assert!(url.contains("secrets."), "{url}");
    let steps = job["steps"].as_array().unwrap();
    let runs: Vec<&str> = steps.iter().filter_map(|s| s["run"].as_str()).collect();
    let all = runs.join("\n");
    assert!(all.contains("--fail-on") && all.contains("--study ci/"), "{all}");
    assert!(all.contains("GITHUB_STEP_SUMMARY") && all.contains("--format md"), "{all}");
    assert!(steps.iter().any(|s| s["uses"].as_str().is_some_and(|u| u.starts_with("actions/upload-artifact"))));

    let flags = abprof_flags(&all);
    assert!(flags.len() >= 8, "{flags:?}");
    let mut checked = std::collections::BTreeMap::new();
    for (cmd, flag) in flags {
        let help = checked.entry(cmd.clone()).or_insert_with(|| {
            let out = abprof().args(&cmd).arg("--help").output().unwrap();
            assert!(out.status.success(), "abprof {cmd:?} --help: {}", String::from_utf8_lossy(&out.stderr));
            String::from_utf8(out.stdout).unwrap()
        });
        assert!(
            help.contains(&format!("{flag} ")) || help.contains(&format!("{flag}\n")),
            "abprof {cmd:?} has no {flag}"
        );
    }
}
