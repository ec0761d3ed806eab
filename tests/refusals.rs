//! Every way `abprof ab` refuses an input it can judge before it starts (issue #43 items 1 and 2,
//! docs/commands.md "Exit status"): on the real test bed's llama-server and models, each bad input
//! exits 2 with exactly one line on stderr (`abprof: error: …`, naming the cause and the fix),
//! nothing on stdout, nothing created under `--root` (a root that did not exist still does not; an
//! empty one stays empty; one that is a file or holds files is untouched), no server started, and
//! in well under two seconds.
mod common;
use common::*;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// An `abprof ab` command line: a study that would run (two variants of the test bed's server, its
/// target model, `-c 4096 -np 1`, a 300-token prompt and 8 output tokens), which each case spoils
/// in one place.
#[derive(Clone)]
struct Ab {
    flags: Vec<(String, Option<String>)>,
    variants: Vec<String>,
}

impl Ab {
    fn new() -> Ab {
        let tb = testbed();
        let flags = [
            ("--model", Some(tb.target.display().to_string())),
            ("--server-args", Some("-c 4096 -np 1".into())),
            ("--prompt-tokens", Some("300".into())),
            ("--tokens", Some("8".into())),
            ("--foreign-cpu-max", Some(SHARED_HOST.into())),
        ];
        Ab {
            flags: flags.into_iter().map(|(f, v)| (f.to_string(), v)).collect(),
            variants: vec![server_variant("a", ""), server_variant("b", "")],
        }
    }

    /// `flag` set to `value` (`None`: a flag without a value), replacing what the base gives.
    fn set(mut self, flag: &str, value: Option<&str>) -> Ab {
        self.flags.retain(|(f, _)| f != flag);
        self.flags.push((flag.into(), value.map(String::from)));
        self
    }

    fn with(self, flag: &str, value: &str) -> Ab {
        self.set(flag, Some(value))
    }

    fn without(mut self, flag: &str) -> Ab {
        self.flags.retain(|(f, _)| f != flag);
        self
    }

    fn variants(mut self, specs: &[String]) -> Ab {
        self.variants = specs.to_vec();
        self
    }

    fn args(&self, root: &Path) -> Vec<String> {
        let mut a = vec!["ab".to_string(), "--root".into(), root.display().to_string()];
        for (f, v) in &self.flags {
            a.push(f.clone());
            a.extend(v.clone());
        }
        for v in &self.variants {
            a.extend(["--variant".into(), v.clone()]);
        }
        a
    }
}

fn server_variant(label: &str, fields: &str) -> String {
    format!("{label}={}{fields}", testbed().server.display())
}

/// The files under `dir`, recursively, with their sizes: what a refusal must leave as it was.
fn listing(dir: &Path) -> Vec<(PathBuf, u64)> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else { return out };
    for e in entries.flatten() {
        let meta = e.metadata().unwrap();
        if meta.is_dir() {
            out.extend(listing(&e.path()));
        }
        out.push((e.path(), meta.len()));
    }
    out.sort();
    out
}

/// Runs `args` and checks the refusal: exit 2, one `abprof: error:` line naming `want`, nothing on
/// stdout, within 2 s. Returns its line, or what was wrong.
fn refused(name: &str, args: &[String], want: &str) -> Result<String, String> {
    let t0 = Instant::now();
    let out = abprof().args(args).output().unwrap();
    let took = t0.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    let wrong = |why: &str| Err(format!("{name}: {why}: {args:?}\n{stderr}"));
    if out.status.code() != Some(2) {
        return wrong(&format!("exit {:?}", out.status.code()));
    }
    if !out.stdout.is_empty() {
        return wrong(&format!("printed {}", String::from_utf8_lossy(&out.stdout)));
    }
    if stderr.lines().count() != 1 || !stderr.starts_with("abprof: error: ") {
        return wrong("not one `abprof: error:` line");
    }
    if !stderr.contains(want) {
        return wrong(&format!("{want:?} not named"));
    }
    if took >= Duration::from_secs(2) {
        return wrong(&format!("refused after {took:?}"));
    }
    eprintln!("{name} ({} ms): {}", took.as_millis(), stderr.trim_end());
    Ok(stderr.trim_end().to_string())
}

/// Each case twice: with a `--root` that does not exist (it must not exist afterwards) and with
/// an empty one (it must stay empty), in a folder nothing else writes to.
fn refused_creating_nothing(d: &Path, name: &str, ab: &Ab, want: &str) -> Result<(), String> {
    let roots = d.join("roots");
    std::fs::create_dir_all(&roots).unwrap();
    let before = listing(d);
    let root = roots.join("study");
    // A case that was not refused ran a study: its folder goes, so the next case starts clean.
    let first = refused(name, &ab.args(&root), want);
    if first.is_err() {
        let _ = std::fs::remove_dir_all(&root);
    }
    first?;
    if root.exists() || listing(d) != before {
        let _ = std::fs::remove_dir_all(&root);
        return Err(format!("{name}: created {} or wrote beside it", root.display()));
    }
    // The same case into an existing empty folder, which a study may use.
    std::fs::create_dir(&root).unwrap();
    let second = refused(name, &ab.args(&root), want);
    let left = listing(&root);
    let running = processes_naming(&root);
    std::fs::remove_dir_all(&root).unwrap();
    second?;
    if !left.is_empty() || !running.is_empty() {
        return Err(format!("{name}: wrote {left:?} into the empty root, or left {running:?} running"));
    }
    Ok(())
}

fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, format!("#!/bin/sh\n{body}")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

#[test]
fn every_refusal_of_ab_exits_2_in_one_line_and_creates_nothing() {
    let _g = serial();
    let d = tempfile::tempdir().unwrap();
    let files = tempfile::tempdir().unwrap();
    let f = files.path();
    let srv = testbed().server.display().to_string();
    let text_model = f.join("notes.gguf");
    std::fs::write(&text_model, "these are notes, not a model\n").unwrap();
    let empty_model = f.join("empty.gguf");
    std::fs::write(&empty_model, "").unwrap();
    let v1_model = f.join("v1.gguf");
    std::fs::write(&v1_model, [b"GGUF".as_slice(), &1u32.to_le_bytes(), &[0u8; 16]].concat()).unwrap();
    let model_dir = f.join("models");
    std::fs::create_dir(&model_dir).unwrap();
    let empty_prompt = f.join("empty-prompt.txt");
    std::fs::write(&empty_prompt, " \n").unwrap();
    let binary_prompt = f.join("binary-prompt.txt");
    std::fs::write(&binary_prompt, b"abc\0\x01").unwrap();
    let not_exec = f.join("not-executable");
    std::fs::write(&not_exec, "#!/bin/sh\n").unwrap();
    let echo = script(f, "echo-server", "echo \"$@\"\n");
    let held = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
    let busy_port = held.local_addr().unwrap().port().to_string();
    let study = |name: &str, body: &str| {
        let p = f.join(name);
        std::fs::write(&p, body).unwrap();
        p.display().to_string()
    };
    let model = testbed().target.display().to_string();
    let bad_key = study(
        "bad-key.toml",
        &format!("model = '{model}'\ntokens = 8\nprompt_tokens = 50\nvariants = ['a={srv}', 'b={srv}']\nbogus = 1\n"),
    );
    let trace_file = study("trace.toml", &format!("model = '{model}'\ntokens = 8\nsamples = 1\nprompt_tokens = 50\nvariants = ['a={srv}', 'b={srv}']\n[trace]\nfinalize_timeout_s = 1800\n[trace.tracer]\nkind = 'nsys'\nprogram = '/usr/bin/nsys'\n"));
    let one_sample = study("one-sample.toml", &format!("model = '{model}'\nserver_args = '-c 4096 -np 1'\ntokens = 8\nsamples = 1\nprompt_tokens = 50\nvariants = ['a={srv}', 'b={srv}']\n"));
    let one_variant = study("one-variant.toml", &format!("model = '{model}'\nserver_args = '-c 4096 -np 1'\ntokens = 8\nsamples = 3\nprompt_tokens = 50\nvariants = ['a={srv}']\n"));
    let ab = Ab::new();
    let v = |label: &str, fields: &str| server_variant(label, fields);
    let cases: Vec<(&str, Ab, String)> = vec![
        // Flags clap itself refuses.
        ("unknown flag", ab.clone().set("--sampels", Some("3")), "--sampels".into()),
        ("samples 0", ab.clone().with("--samples", "0"), "--samples".into()),
        ("samples above the bound", ab.clone().with("--samples", "4294967295"), "abprof's bound".into()),
        ("tokens 1", ab.clone().with("--tokens", "1"), "--tokens".into()),
        ("telemetry unknown", ab.clone().with("--telemetry", "bogus"), "--telemetry".into()),
        ("telemetry-hz 0", ab.clone().with("--telemetry-hz", "0"), "--telemetry-hz".into()),
        ("mei above 50%", ab.clone().set("--until-decided", None).with("--mei", "1e308"), "above 50%".into()),
        ("max-samples without a rule", ab.clone().with("--max-samples", "5"), "--until-decided".into()),
        ("metric without a gate", ab.clone().with("--metric", "ttft"), "--fail-on".into()),
        ("threshold below 0", ab.clone().with("--fail-on", "slower").set("--threshold=-1", None), "--threshold".into()),
        ("server-cpus not online", ab.clone().with("--server-cpus", "65000"), "is not online here".into()),
        ("thermal band without the gate", ab.clone().with("--thermal-band", "3"), "--thermal-gate".into()),
        ("study beside a variant", ab.clone().with("--study", &one_sample), "--study".into()),
        (
            "history and no-history",
            ab.clone().with("--history", "x.db").set("--no-history", None),
            "cannot be used with".into(),
        ),
        // The flags `ab` checks together.
        ("no model", ab.clone().without("--model"), "--model is required".into()),
        ("no tokens", ab.clone().without("--tokens"), "give --tokens N or --workload".into()),
        (
            "tokens beside a fixed workload",
            ab.clone().with("--workload", "screening"),
            "--workload screening means 128 output tokens: drop --tokens or --workload".into(),
        ),
        (
            "a prompt beside a workload's own",
            ab.clone().with("--workload", "speed-bench").without("--tokens"),
            "sends its own".into(),
        ),
        ("no prompt", ab.clone().without("--prompt-tokens"), "give --prompt FILE".into()),
        ("server-args quotes", ab.clone().with("--server-args", "-c '4096"), "like a shell would".into()),
        ("no variant", ab.clone().variants(&[]), "give at least one --variant".into()),
        ("one variant without --aa", ab.clone().variants(&[v("a", "")]), "nothing to compare".into()),
        ("--aa with two variants", ab.clone().set("--aa", None), "--aa runs one variant against itself".into()),
        ("samples 2", ab.clone().with("--samples", "2"), "--samples 2 gives each variant 2 values".into()),
        ("samples 1", ab.clone().with("--samples", "1"), "pass --samples 3 or more".into()),
        (
            "adaptive cap 2",
            ab.clone().set("--until-decided", None).with("--samples", "2").with("--max-samples", "2"),
            "--max-samples 2 gives each variant 2 values".into(),
        ),
        (
            "adaptive cap below samples",
            ab.clone().set("--until-decided", None).with("--max-samples", "2"),
            "max_samples = 2 is below samples = 3".into(),
        ),
        (
            "samples above max-samples",
            ab.clone().set("--until-ci", Some("2")).with("--samples", "9").with("--max-samples", "5"),
            "max_samples = 5 is below samples = 9".into(),
        ),
        (
            "a gate on 1 sample",
            ab.clone().with("--samples", "1").with("--fail-on", "slower"),
            "--fail-on needs an interval".into(),
        ),
        (
            "gate-rule interval with until-decided",
            ab.clone().with("--fail-on", "slower").with("--gate-rule", "interval").set("--until-decided", None),
            "--gate-rule interval".into(),
        ),
        (
            "a gate on a sweep",
            ab.clone().with("--sweep", "kv=f16,q8_0").with("--fail-on", "slower"),
            "cannot be used with".into(),
        ),
        ("unknown sweep axis", ab.clone().with("--sweep", "depth=1,2"), "unknown sweep axis".into()),
        ("sweep tokens beside --tokens", ab.clone().with("--sweep", "tokens=8,16"), "drop --tokens".into()),
        (
            "sweep kv beside kv=",
            ab.clone().with("--sweep", "kv=q8_0,q4_0").variants(&[v("a", "|kv=f16"), v("b", "")]),
            "sets kv= itself".into(),
        ),
        ("history is a folder", ab.clone().with("--history", &f.display().to_string()), "is a folder".into()),
        // Variant specs.
        ("spec without '='", ab.clone().variants(&["no-equals".into(), v("b", "")]), "has no '='".into()),
        (
            "spec with an unknown key",
            ab.clone().variants(&[v("a", "|colour=red"), v("b", "")]),
            "unknown key \"colour\"".into(),
        ),
        (
            "spec of a missing binary",
            ab.clone().variants(&["a=/no/such/llama-server".into(), v("b", "")]),
            "does not exist".into(),
        ),
        (
            "spec of a non-executable",
            ab.clone().variants(&[format!("a={}", not_exec.display()), v("b", "")]),
            "is not an executable file".into(),
        ),
        (
            "spec with a bad env name",
            ab.clone().variants(&[v("a", "|env=1X=2"), v("b", "")]),
            "not a valid environment variable name".into(),
        ),
        (
            "spec with unbalanced extra=",
            ab.clone().variants(&[v("a", "|extra=-t 'unclosed"), v("b", "")]),
            "cannot split extra=".into(),
        ),
        ("spec with a bad kv", ab.clone().variants(&[v("a", "|kv=q3_z"), v("b", "")]), "kv type \"q3_z\"".into()),
        (
            "spec with a bad expect=",
            ab.clone().variants(&[v("a", "|expect=(unclosed"), v("b", "")]),
            "expect= is not a valid regex".into(),
        ),
        ("spec with a bad label", ab.clone().variants(&[format!("a b={srv}"), v("b", "")]), "must be 1 to 64".into()),
        ("a label twice", ab.clone().variants(&[v("a", ""), v("a", "|kv=q8_0")]), "used twice".into()),
        ("a key twice", ab.clone().variants(&[v("a", "|kv=f16|kv=q8_0"), v("b", "")]), "kv= given twice".into()),
        (
            "spaces around |",
            ab.clone().variants(&[v("a", ""), format!("q8={srv} | kv=q8_0")]),
            format!("as \"q8={srv}|kv=q8_0\""),
        ),
        (
            "spaces before a | in extra=",
            ab.clone().variants(&[v("a", ""), v("b", "|extra=-t 2 |kv=q8_0")]),
            "|extra=-t 2|kv=q8_0\"".into(),
        ),
        (
            "spec model= missing",
            ab.clone().variants(&[v("a", ""), v("b", "|model=/no/such.gguf")]),
            "model /no/such.gguf does not exist".into(),
        ),
        (
            "spec model= a folder",
            ab.clone().variants(&[v("a", ""), v("b", &format!("|model={}", model_dir.display()))]),
            "is a directory".into(),
        ),
        // The models.
        (
            "model missing",
            ab.clone().with("--model", "/no/such/model.gguf"),
            "model /no/such/model.gguf does not exist".into(),
        ),
        (
            "model a folder",
            ab.clone().with("--model", &model_dir.display().to_string()),
            "is a directory: pass the GGUF file in it".into(),
        ),
        (
            "model a text file",
            ab.clone().with("--model", &text_model.display().to_string()),
            "is not a GGUF file: it begins \"thes\"".into(),
        ),
        ("model empty", ab.clone().with("--model", &empty_model.display().to_string()), "it is empty".into()),
        ("model GGUF v1", ab.clone().with("--model", &v1_model.display().to_string()), "GGUF version 1".into()),
        // The binaries, asked their --help before the folder exists.
        (
            "/bin/true as a variant",
            ab.clone().variants(&[v("a", ""), "b=/bin/true".into()]),
            "`/bin/true --help` printed".into(),
        ),
        (
            "a script that echoes",
            ab.clone().variants(&[v("a", ""), format!("b={}", echo.display())]),
            "printed \"--help\", where a llama-server lists its flags".into(),
        ),
        (
            "extra= flag the binary lacks",
            ab.clone().variants(&[v("a", ""), v("b", "|extra=--cache-type-kk q8_0")]),
            "did you mean --cache-type-k?".into(),
        ),
        (
            "server-args flag the binary lacks",
            ab.clone().with("--server-args", "-c 4096 --no-such-flag"),
            "--server-args gives --no-such-flag".into(),
        ),
        ("flag=value", ab.clone().with("--server-args", "--ctx-size=4096"), "write --ctx-size 4096".into()),
        (
            "a flag without its value",
            ab.clone().variants(&[v("a", ""), v("b", "|extra=-t 2 -c")]),
            "ends with -c, which takes a value".into(),
        ),
        ("a stray word", ab.clone().with("--server-args", "-c 4096 2"), "neither a flag".into()),
        ("an owned flag in extra=", ab.clone().variants(&[v("a", ""), v("b", "|extra=--port 9")]), "--port".into()),
        (
            "an owned flag in server-args",
            ab.clone().with("--server-args", "-c 4096 --log-file x.log"),
            "--log-file".into(),
        ),
        (
            "a device the binary does not list",
            ab.clone().variants(&[v("a", ""), v("b", "|extra=-dev CUDA3")]),
            "--device CUDA3 is not a device this llama-server sees".into(),
        ),
        (
            // Under it the binary refuses even --list-devices: the listing is taken without it.
            "a device in env= LLAMA_ARG_DEVICE the binary does not list",
            ab.clone().variants(&[v("a", ""), v("b", "|env=LLAMA_ARG_DEVICE=CUDA3")]),
            "LLAMA_ARG_DEVICE=CUDA3 is not a device this llama-server sees".into(),
        ),
        // The context each slot has.
        (
            "prompt and output over -c",
            ab.clone().with("--prompt-tokens", "4000").with("--tokens", "128"),
            "need 4128 tokens of context, and -c 4096 holds 4096".into(),
        ),
        ("prompt far over -c", ab.clone().with("--prompt-tokens", "100000"), "raise -c to 100008 or more".into()),
        (
            "context split by -np",
            ab.clone().with("--server-args", "-c 4096 -np 4").with("--prompt-tokens", "2000"),
            "over -np 4 slots holds 1024 a slot".into(),
        ),
        (
            "context from extra=",
            ab.clone().variants(&[v("a", ""), v("b", "|extra=-c 256")]),
            "variant b: a 300-token prompt".into(),
        ),
        (
            "context from env=",
            ab.clone().with("--server-args", "-np 1").variants(&[v("a", "|env=LLAMA_ARG_CTX_SIZE=128"), v("b", "")]),
            "-c 128 holds 128".into(),
        ),
        // The prompt file.
        (
            "prompt file missing",
            ab.clone().without("--prompt-tokens").with("--prompt", "/no/such/prompt.txt"),
            "cannot be read".into(),
        ),
        (
            "prompt file empty",
            ab.clone().without("--prompt-tokens").with("--prompt", &empty_prompt.display().to_string()),
            "is empty".into(),
        ),
        (
            "prompt file binary",
            ab.clone().without("--prompt-tokens").with("--prompt", &binary_prompt.display().to_string()),
            "NUL bytes".into(),
        ),
        // The host: telemetry and the port.
        (
            "telemetry rate above the source's",
            ab.clone().with("--telemetry", "cpu").with("--telemetry-hz", "1000"),
            "the fastest".into(),
        ),
        (
            "thermal gate without a temperature",
            ab.clone().with("--telemetry", "none").set("--thermal-gate", None),
            "the thermal gate needs a device temperature".into(),
        ),
        (
            "a busy --port",
            ab.clone().with("--port", &busy_port),
            format!("port {busy_port} on 127.0.0.1 is already in use"),
        ),
        // Study files.
        (
            "study file missing",
            Ab { flags: vec![("--study".into(), Some("/no/such/study.toml".into()))], variants: vec![] },
            "/no/such/study.toml".into(),
        ),
        (
            "study file with an unknown key",
            Ab { flags: vec![("--study".into(), Some(bad_key))], variants: vec![] },
            "bogus".into(),
        ),
        (
            "study file of another kind",
            Ab { flags: vec![("--study".into(), Some(trace_file))], variants: vec![] },
            "`abprof trace` runs it".into(),
        ),
        (
            "a gate on a 1-sample study file",
            Ab {
                flags: vec![("--study".into(), Some(one_sample)), ("--fail-on".into(), Some("slower".into()))],
                variants: vec![],
            },
            "plans 1 sample per variant".into(),
        ),
        (
            "a gate on a 1-variant study file",
            Ab {
                flags: vec![("--study".into(), Some(one_variant)), ("--fail-on".into(), Some("slower".into()))],
                variants: vec![],
            },
            "this study has one variant".into(),
        ),
    ];
    let mut failed: Vec<String> =
        cases.iter().filter_map(|(name, ab, want)| refused_creating_nothing(d.path(), name, ab, want).err()).collect();
    // A --root that cannot hold a new study is left as it was.
    let file_root = d.path().join("a-file");
    std::fs::write(&file_root, "mine").unwrap();
    failed.extend(refused("root is a file", &ab.args(&file_root), "is a file, not a folder").err());
    assert_eq!(std::fs::read_to_string(&file_root).unwrap(), "mine");
    let full_root = d.path().join("full");
    std::fs::create_dir(&full_root).unwrap();
    std::fs::write(full_root.join("notes.txt"), "mine").unwrap();
    let before = listing(&full_root);
    failed.extend(refused("root holds files", &ab.args(&full_root), "already holds files").err());
    assert_eq!(listing(&full_root), before);
    drop(held);
    assert!(failed.is_empty(), "{} of {} refusals failed:\n{}", failed.len(), cases.len() + 2, failed.join("\n"));
}

/// `trace --dispatch-reference` names a variant that is not there, or stands alone: both refused
/// in one line before the folder exists (methodology §10 "complete traces").
#[test]
fn trace_refuses_a_dispatch_reference_it_cannot_use() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("t");
    let tb = testbed();
    let args = |variants: &[&str], reference: &str| -> Vec<String> {
        let mut a: Vec<String> = ["trace", "--root"].iter().map(|s| s.to_string()).collect();
        a.push(root.display().to_string());
        a.extend(["--tracer-cmd".into(), "env {out}".into(), "--prompt-tokens".into(), "100".into()]);
        a.extend(["--model".into(), tb.target.display().to_string()]);
        for v in variants {
            a.extend(["--variant".into(), format!("{v}={}", tb.server.display())]);
        }
        a.extend(["--dispatch-reference".into(), reference.into()]);
        a
    };
    let mut failed = Vec::new();
    failed.extend(refused("no such label", &args(&["on", "off"], "nope"), "no variant is labelled so").err());
    failed.extend(refused("alone", &args(&["off"], "off"), "needs another variant").err());
    assert!(failed.is_empty(), "{}", failed.join("\n"));
    assert!(!root.exists(), "nothing created");
}
