//! Bad flags are usage errors: exit 2 and one line naming the flag, before anything starts. No
//! server is needed; the values are refused while parsing.
use assert_cmd::Command;

fn abprof(args: &[&str]) -> std::process::Output {
    Command::cargo_bin("abprof").unwrap().args(args).output().unwrap()
}

/// Exit 2, nothing on stdout, one line on stderr that names `flag`.
fn usage_error(args: &[&str], flag: &str) -> String {
    let out = abprof(args);
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    assert!(out.stdout.is_empty(), "{args:?} printed {}", String::from_utf8_lossy(&out.stdout));
    assert_eq!(stderr.lines().count(), 1, "{args:?}: not one line:\n{stderr}");
    assert!(stderr.starts_with("abprof: error: "), "{stderr}");
    assert!(stderr.contains(flag), "{args:?}: {flag} not named in {stderr}");
    stderr
}

/// `abprof doctor` refuses a missing binary, a file for --root and a bad port before it looks.
#[test]
fn doctor_refuses_bad_input_with_one_line() {
    let line = usage_error(&["doctor", "--server-bin", "/nonexistent/llama-server"], "--server-bin");
    assert!(line.contains("no such llama-server"), "{line}");
    let line = usage_error(&["doctor", "--root", "/etc/passwd"], "--root");
    assert!(line.contains("is a file, not a folder"), "{line}");
    usage_error(&["doctor", "--port", "70000"], "--port");
}

/// A misspelt flag or subcommand keeps clap's "did you mean" in the one line.
#[test]
fn a_misspelling_is_refused_with_the_fix() {
    let line = usage_error(&["ab", "--sampels", "3"], "--sampels");
    assert_eq!(line, "abprof: error: unexpected argument '--sampels' found; did you mean '--samples'? (see --help)\n");
    let line = usage_error(&["summarise", "dir"], "summarise");
    assert!(line.contains("did you mean 'summarize'?"), "{line}");
}

#[test]
fn monitor_refuses_a_zero_rate() {
    usage_error(&["monitor", "--hz", "0"], "--hz");
}

#[test]
fn calibrate_refuses_zero_prompt_tokens() {
    usage_error(
        &["calibrate", "--prompt-tokens", "0", "--url", "http://127.0.0.1:9", "--out", "p.txt"],
        "--prompt-tokens",
    );
}

#[test]
fn an_unknown_telemetry_backend_lists_the_choices() {
    let line = usage_error(&["monitor", "--telemetry", "bogus"], "--telemetry");
    assert!(line.contains("choose one of auto, amd-smi, rocm-smi, amdgpu-sysfs, nvml, cpu, none"), "{line}");
    usage_error(&["ab", "--root", "r", "--telemetry", "bogus"], "--telemetry");
}

#[test]
fn run_condition_ranges_are_checked() {
    usage_error(&["ab", "--root", "r", "--telemetry-hz", "0"], "--telemetry-hz");
    usage_error(&["pi", "--variant", "a=b", "--idle-samples", "0"], "--idle-samples");
}

#[test]
fn bench_needs_two_output_tokens_and_a_health_wait() {
    let base = ["bench", "--server-bin", "s", "--model", "m", "--prompt", "p"];
    usage_error(&[&base[..], &["--tokens", "1"]].concat(), "--tokens");
    usage_error(&[&base[..], &["--tokens", "8", "--health-timeout", "0"]].concat(), "--health-timeout");
    usage_error(&["bench", "--server-bin", "s", "--model", "m", "--tokens", "8"], "--prompt");
}

#[test]
fn calibrate_still_takes_its_old_tokens_flag() {
    // Parsing succeeds; the run then fails (exit 1) because nothing listens on port 9.
    let out = abprof(&["calibrate", "--tokens", "5", "--url", "http://127.0.0.1:9", "--out", "p.txt"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("cannot reach the server"), "{stderr}");
    let help = String::from_utf8_lossy(&abprof(&["calibrate", "--help"]).stdout).to_string();
    assert!(help.contains("--prompt-tokens") && !help.contains("--tokens"), "{help}");
}

#[test]
fn help_and_version_still_exit_0() {
    assert_eq!(abprof(&["--version"]).status.code(), Some(0));
    assert_eq!(abprof(&["monitor", "--help"]).status.code(), Some(0));
}

/// The whole study is checked before its evidence folder exists: each of these is refused as a
/// usage error and leaves nothing on disk, so the same --root can be used again.
#[test]
fn a_study_refused_for_a_bad_value_creates_nothing() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("study");
    let r = root.to_str().unwrap();
    let base =
        ["ab", "--root", r, "--model", "m.gguf", "--variant", "a=/bin/true", "--tokens", "8", "--prompt-tokens", "50"];
    for (bad, flag) in [
        (&["--telemetry-hz", "0"][..], "--telemetry-hz"),
        (&["--telemetry", "bogus"][..], "--telemetry"),
        (&["--samples", "0"][..], "--samples"),
    ] {
        usage_error(&[&base[..], bad].concat(), flag);
        assert!(!root.exists(), "{bad:?} created {}", root.display());
    }
    let study = d.path().join("study.toml");
    std::fs::write(
        &study,
        "model = 'm.gguf'\ntokens = 8\nsamples = 1\nvariants = ['a=/bin/true']\nprompt_tokens = 50\nbogus = 1\n",
    )
    .unwrap();
    usage_error(&["ab", "--root", r, "--study", study.to_str().unwrap()], "bogus");
    assert!(!root.exists(), "a study file with an unknown key created {}", root.display());
}

/// `--resume DIR` reads the whole study from DIR: a study-defining flag beside it is refused as a
/// usage error instead of being silently ignored; output flags are still allowed.
#[test]
fn resume_refuses_flags_that_would_be_ignored() {
    usage_error(&["ab", "--resume", "r", "--tokens", "8"], "--tokens");
    usage_error(&["ab", "--resume", "r", "--telemetry-hz", "50"], "--telemetry-hz");
    usage_error(&["pi", "--resume", "r", "--samples", "2"], "--samples");
    usage_error(&["trace", "--resume", "r", "--untraced", "2"], "--untraced");
    let out = abprof(&["ab", "--resume", "/nonexistent/abprof-study", "--json"]);
    assert_eq!(out.status.code(), Some(1), "--json is not study-defining: the error is the missing folder");
}

#[test]
fn server_cpus_must_name_online_cpus_before_anything_is_created() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("study");
    let root = root.to_str().unwrap();
    let line = usage_error(&["ab", "--root", root, "--server-cpus", "0-x"], "--server-cpus");
    assert!(line.contains("like 0-7,16, or node:N"), "{line}");
    let line = usage_error(&["ab", "--root", root, "--server-cpus", "65000"], "--server-cpus");
    assert!(line.contains("CPU 65000 is not online here"), "{line}");
    usage_error(&["pi", "--variant", "a=b", "--server-cpus", "node:4096"], "--server-cpus");
    assert!(!dir.path().join("study").exists());
}

/// The thermal gate's flags (docs/methodology.md §9.9): a band or ceiling without the gate, or
/// out of range, is a usage error; the gate on a host without a GPU temperature is refused in one
/// line before the study folder exists.
#[test]
fn thermal_gate_flags_are_checked_before_anything_is_created() {
    usage_error(&["ab", "--root", "r", "--thermal-band", "3"], "--thermal-gate");
    usage_error(&["ab", "--root", "r", "--thermal-gate", "--thermal-ceiling", "900"], "--thermal-ceiling");
    let d = tempfile::tempdir().unwrap();
    let model = d.path().join("m.gguf");
    std::fs::write(&model, b"GGUF").unwrap();
    let root = d.path().join("study");
    let out = abprof(&[
        "ab",
        "--root",
        root.to_str().unwrap(),
        "--model",
        model.to_str().unwrap(),
        "--variant",
        "a=/bin/true",
        "--aa",
        "--tokens",
        "8",
        "--prompt-tokens",
        "50",
        "--telemetry",
        "none",
        "--thermal-gate",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("the thermal gate needs a device temperature") && stderr.contains("--telemetry nvml"),
        "{stderr}"
    );
    assert!(!root.exists(), "the refused study created {}", root.display());
}

/// A flag a command's own code refuses (a missing --prompt, a missing model file, `--aa` beside two
/// variants, a bisect patch that is not there) is a usage error like clap's: exit 2, one line,
/// nothing created (src/refusal.rs).
#[test]
fn flags_the_commands_own_code_refuses_exit_2_before_anything_is_created() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("r");
    let r = root.to_str().unwrap();
    let model = d.path().join("m.gguf");
    std::fs::write(&model, b"GGUF").unwrap();
    let m = model.to_str().unwrap();
    let line = usage_error(&["ab", "--root", r, "--model", m, "--tokens", "8", "--variant", "a=/bin/true"], "--prompt");
    assert!(line.contains("give --prompt FILE"), "{line}");
    let line =
        usage_error(&["ab", "--root", r, "--model", m, "--tokens", "8", "--prompt-tokens", "10", "--aa"], "--variant");
    assert!(line.contains("give at least one --variant"), "{line}");
    let line = usage_error(
        &["trace", "--root", r, "--model", "/nonexistent/m.gguf", "--variant", "a=/bin/true", "--prompt-tokens", "10"],
        "model",
    );
    assert!(line.contains("/nonexistent/m.gguf does not exist"), "{line}");
    // Bisect builds llama-server alone: a study of llama-bench samples is refused in one line.
    let study = d.path().join("lb.toml");
    std::fs::write(
        &study,
        format!("model = {m:?}\nsamples = 3\nvariants = ['build=']\n[llama_bench]\nargs = '-p 64'\n"),
    )
    .unwrap();
    let s = study.to_str().unwrap();
    let args = ["bisect", "--root", r, "--repo", r, "--good", "a", "--bad", "b", "--study", s];
    let line = usage_error(&args, "[llama_bench]");
    assert!(line.contains("bisect builds llama-server alone"), "{line}");
    assert!(!root.exists(), "nothing created");
}

/// Every command that measures ends its `--help` with its exit statuses (docs/commands.md "Exit
/// status"): 2 for a usage error and 128+N for a signal everywhere, and `ab`'s gate, 3.
#[test]
fn every_measuring_command_lists_its_exit_statuses_in_its_help() {
    for cmd in ["ab", "trace", "pi", "bench", "calibrate", "exactness", "bisect", "build"] {
        let out = abprof(&[cmd, "--help"]);
        let help = String::from_utf8_lossy(&out.stdout).split_whitespace().collect::<Vec<_>>().join(" ");
        let at = help.find("Exit status:").unwrap_or_else(|| panic!("{cmd} --help lists no exit status:\n{help}"));
        let statuses = &help[at..];
        for want in ["0 ", "1 ", "2 usage", "128+N stopped by signal N"] {
            assert!(statuses.contains(want), "{cmd}: {want:?} not in {statuses}");
        }
    }
    let help =
        String::from_utf8_lossy(&abprof(&["ab", "--help"]).stdout).split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(help.contains("3 the --fail-on gate failed"), "{help}");
}
