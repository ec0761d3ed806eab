//! What integration tests share: the real test bed (built by scripts/testbed, cached under
//! ~/.cache/abprof) and the real abprof binary.
#![allow(dead_code)]
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

pub mod pg_cluster;

pub struct Testbed {
    pub server: PathBuf,
    pub target: PathBuf,
    pub draft: PathBuf,
    pub smollm2: PathBuf,
    pub vars: HashMap<String, String>,
}

/// The test bed's paths: from the environment when scripts/test exported them, else by running
/// scripts/testbed (a warm run takes a second or two).
pub fn testbed() -> &'static Testbed {
    static TB: OnceLock<Testbed> = OnceLock::new();
    assert!(
        std::env::var("ABPROF_TEST_TIER").as_deref() != Ok("fast"),
        "this test needs the real test bed: its binary belongs to the testbed tier (.config/nextest.toml)"
    );
    TB.get_or_init(|| {
        let mut vars = HashMap::new();
        if std::env::var("LLAMA_SERVER").is_err() {
            let out = std::process::Command::new(concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/testbed"))
                .stderr(std::process::Stdio::inherit())
                .output()
                .expect("run scripts/testbed");
            assert!(out.status.success(), "scripts/testbed failed");
            for line in String::from_utf8_lossy(&out.stdout).lines() {
                if let Some((k, v)) = line.split_once('=') {
                    vars.insert(k.to_string(), v.to_string());
                }
            }
        }
        let get = |k: &str| -> PathBuf {
            std::env::var(k)
                .ok()
                .or_else(|| vars.get(k).cloned())
                .unwrap_or_else(|| panic!("test bed has no {k}"))
                .into()
        };
        Testbed {
            server: get("LLAMA_SERVER"),
            target: get("TARGET_MODEL"),
            draft: get("DRAFT_MODEL"),
            smollm2: get("SMOLLM2_MODEL"),
            vars,
        }
    })
}

/// Where the abprof of the tests keeps its results history unless a test passes `--history`: a
/// folder of this test binary's own, never the user's `~/.local/share/abprof/history.db`.
pub fn data_home() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| tempfile::tempdir().unwrap()).path()
}

pub fn abprof() -> assert_cmd::Command {
    let mut c = assert_cmd::Command::cargo_bin("abprof").expect("abprof binary");
    c.env("XDG_DATA_HOME", data_home()).env_remove("ABPROF_HISTORY");
    // libpq's TLS settings of the machine running the tests are not the tests'.
    c.env_remove("PGSSLMODE").env_remove("PGSSLROOTCERT");
    c
}

/// Server args every test-bed server gets: small context, both cores, one slot.
pub const COMMON: &str = "-c 4096 -t 2 -np 1";

/// A prompt calibrated to `tokens` for the random target, made once per test binary.
pub fn calibrated_prompt(tokens: u64) -> PathBuf {
    calibrated_prompt_for(&testbed().target, "target", tokens)
}

/// A prompt calibrated to `tokens` for `model` (tokenizers differ), made once per model file and
/// count: kept under the target's test folder, because nextest runs every test in a process of
/// its own and each would otherwise calibrate again (a server start a test).
pub fn calibrated_prompt_for(model: &Path, tag: &str, tokens: u64) -> PathBuf {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let meta = std::fs::metadata(model).unwrap_or_else(|e| panic!("{}: {e}", model.display()));
    let mtime =
        meta.modified().ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok()).map_or(0, |d| d.as_secs());
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("calibrated-prompts");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("prompt-{tag}-{}-{mtime}-{tokens}.txt", meta.len()));
    if !path.exists() {
        // Made in a folder of this process's own, then moved in sidecar first: the prompt's
        // presence is what says the pair is whole.
        let own = dir.join(format!("partial-{}", std::process::id()));
        std::fs::create_dir_all(&own).unwrap();
        let partial = own.join(path.file_name().unwrap());
        abprof()
            .args(["calibrate", "--server-bin"])
            .arg(&testbed().server)
            .arg("--model")
            .arg(model)
            .args(["--server-args", COMMON, "--prompt-tokens", &tokens.to_string(), "--out"])
            .arg(&partial)
            .assert()
            .success();
        let sidecar = |p: &Path| PathBuf::from(format!("{}.calibration.json", p.display()));
        std::fs::rename(sidecar(&partial), sidecar(&path)).unwrap();
        std::fs::rename(&partial, &path).unwrap();
        let _ = std::fs::remove_dir(&own);
    }
    path
}

/// SIGKILLs `child` (an `abprof ab` of a study in `root`) once its first sample's record exists:
/// a study killed mid-run, for the tests that no history row is left behind.
pub fn sigkill_after_first_sample(child: &mut std::process::Child, root: &Path) {
    let t0 = std::time::Instant::now();
    while !root.join("samples/001-f16/sample.json").exists() {
        assert!(t0.elapsed() < std::time::Duration::from_secs(120), "the first sample never finished");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(child.id() as i32), nix::sys::signal::Signal::SIGKILL).unwrap();
    child.wait().unwrap();
}

pub fn stderr_lines(out: &std::process::Output) -> Vec<String> {
    String::from_utf8_lossy(&out.stderr).lines().map(String::from).collect()
}

/// A study's progress line on stderr — one per sample taken (`abprof: sample 3/6 (b, block 2):
/// …`, docs/commands.md) and the idle gate's while it waits — never the error a test reads.
pub fn is_progress(line: &str) -> bool {
    let Some(rest) = line.strip_prefix("abprof: sample ") else { return false };
    let taken = rest.split_once(' ').is_some_and(|(n, _)| {
        n.split_once('/').is_some_and(|(a, b)| a.parse::<u32>().is_ok() && b.parse::<u32>().is_ok())
    });
    taken || rest.contains(" waits for other processes to quiet down")
}

/// The stderr lines that are not [`is_progress`] lines: what went wrong, if anything.
pub fn error_lines(out: &std::process::Output) -> Vec<String> {
    stderr_lines(out).into_iter().filter(|l| !is_progress(l)).collect()
}

pub fn read_json(p: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// Studies measure speed and judge samples by the host's foreign CPU: never two at once in one
/// test binary (each binary runs its tests on parallel threads).
pub fn serial() -> std::sync::MutexGuard<'static, ()> {
    static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// The `--foreign-cpu-max` of a test that is not about the other-workload rule: the tests pass
/// beside other work (a busy loop, other builds), which that rule would wait out or reject.
pub const SHARED_HOST: &str = "1000";

/// `abprof ab` flags for a study of `variants` on the test bed: a 300-token prompt, `tokens`
/// output tokens, `samples` per variant, `--json`, and the [`SHARED_HOST`] limit.
pub fn ab_args(root: &Path, tokens: u32, samples: u32, variants: &[String]) -> Vec<String> {
    let mut a: Vec<String> = vec![
        "ab".into(),
        "--root".into(),
        root.display().to_string(),
        "--model".into(),
        testbed().target.display().to_string(),
        "--server-args".into(),
        "-c 4096 -np 1".into(),
        "--prompt".into(),
        calibrated_prompt(300).display().to_string(),
        "--tokens".into(),
        tokens.to_string(),
        "--samples".into(),
        samples.to_string(),
        "--ignore-eos".into(),
        "--json".into(),
        "--foreign-cpu-max".into(),
        SHARED_HOST.into(),
    ];
    for v in variants {
        a.extend(["--variant".into(), v.clone()]);
    }
    a
}

/// `args` (an `abprof ab` command line of [`ab_args`] or [`small_study`]) as the same study in a
/// study file, written beside its `--root`: `ab --study FILE --root DIR` plus its output flags. A
/// study file may plan fewer than 3 samples a side or one variant (a quick run of the machinery,
/// no verdict), which the flags refuse (docs/commands.md). A flag it does not know stops the test.
pub fn study_file_of(args: &[String]) -> Vec<String> {
    assert_eq!(args.first().map(String::as_str), Some("ab"), "{args:?}");
    let mut doc = toml::Table::new();
    let (mut idle, mut isolation) = (toml::Table::new(), toml::Table::new());
    let (mut variants, mut out) = (Vec::new(), vec!["ab".to_string()]);
    let mut root = None;
    let mut it = args[1..].iter();
    while let Some(flag) = it.next() {
        let mut value = || it.next().unwrap_or_else(|| panic!("{flag} without its value")).clone();
        let int = |v: String| toml::Value::Integer(v.parse().unwrap());
        match flag.as_str() {
            "--root" => root = Some(value()),
            "--model" => {
                doc.insert("model".into(), value().into());
            }
            "--server-args" => {
                doc.insert("server_args".into(), value().into());
            }
            "--prompt" => {
                doc.insert("prompt".into(), value().into());
            }
            "--workload" => {
                doc.insert("workload".into(), value().into());
            }
            "--tokens" => {
                doc.insert("tokens".into(), int(value()));
            }
            "--samples" => {
                doc.insert("samples".into(), int(value()));
            }
            "--until-decided" => {
                doc.insert("until_decided".into(), true.into());
            }
            "--max-samples" => {
                doc.insert("max_samples".into(), int(value()));
            }
            "--ignore-eos" => {
                doc.insert("ignore_eos".into(), true.into());
            }
            "--foreign-cpu-max" => {
                idle.insert("foreign_cpu_max_pct".into(), value().parse::<f64>().unwrap().into());
            }
            "--variant" => variants.push(toml::Value::String(value())),
            "--before" | "--after" | "--verify" => {
                isolation.insert(flag[2..].into(), toml::Value::Array(vec![value().into()]));
            }
            "--json" => out.push(flag.clone()),
            other => panic!("study_file_of does not know {other}: give the study file its key"),
        }
    }
    doc.insert("variants".into(), toml::Value::Array(variants));
    doc.insert("idle".into(), idle.into());
    if !isolation.is_empty() {
        doc.insert("isolation".into(), isolation.into());
    }
    let root = root.expect("--root");
    let file = format!("{root}.study.toml");
    std::fs::write(&file, toml::to_string(&doc).unwrap()).unwrap();
    out.extend(["--study".into(), file, "--root".into(), root]);
    out
}

/// [`ab_args`] plus hooks that append to `markers/{before,after,verify}`.
pub fn small_study(root: &Path, markers: &Path, tokens: u32, samples: u32, variants: &[String]) -> Vec<String> {
    let mut a = ab_args(root, tokens, samples, variants);
    let sh = |phase: &str| format!("sh -c 'echo {phase} >> {}'", markers.join(phase).display());
    for phase in ["before", "after", "verify"] {
        a.extend([format!("--{phase}"), sh(phase)]);
    }
    a
}

/// Lines in a hook marker file (0 when it does not exist).
pub fn marker_lines(p: &Path) -> usize {
    std::fs::read_to_string(p).map(|s| s.lines().count()).unwrap_or(0)
}

/// Live (not zombie) processes whose command line names `needle`: what a study left running.
pub fn processes_naming(needle: &Path) -> Vec<u32> {
    let needle = needle.display().to_string();
    let me = std::process::id();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_string_lossy().parse::<u32>().ok())
        .filter(|&pid| pid != me && alive(pid))
        .filter(|pid| {
            let c = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            String::from_utf8_lossy(&c).replace('\0', " ").contains(&needle)
        })
        .collect()
}

/// Alive and not a zombie.
pub fn alive(pid: u32) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    !stat.is_empty() && stat.rsplit(')').next().and_then(|a| a.split_whitespace().next()) != Some("Z")
}

/// The llama-server of the study in `root` once sample `index` (1-based) is mid-request (its log
/// shows the slot launched and no timing block yet).
pub fn server_mid_request(root: &Path, index: usize) -> u32 {
    let t0 = std::time::Instant::now();
    loop {
        assert!(t0.elapsed() < std::time::Duration::from_secs(120), "sample {index} never reached its request");
        let log = std::fs::read_dir(root.join("samples"))
            .ok()
            .and_then(|d| {
                d.flatten().find(|e| e.file_name().to_string_lossy() == format!("{index:03}-{}", label_of(e)))
            })
            .and_then(|e| std::fs::read_to_string(e.path().join("server.log")).ok())
            .unwrap_or_default();
        if log.contains("launch_slot_") && !log.contains("print_timing") {
            for pid in processes_naming(root) {
                let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
                if stat.contains("(llama-server)") {
                    return pid;
                }
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

fn label_of(e: &std::fs::DirEntry) -> String {
    let name = e.file_name().to_string_lossy().to_string();
    if name.contains(".attempt-") {
        return String::new();
    }
    name.split_once('-').map(|(_, l)| l.to_string()).unwrap_or_default()
}

/// The real abprof in the background, its output piped.
pub fn spawn_abprof(args: &[String]) -> std::process::Child {
    std::process::Command::new(assert_cmd::cargo::cargo_bin("abprof"))
        .env("XDG_DATA_HOME", data_home())
        .env_remove("ABPROF_HISTORY")
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

/// A stand-in tracer, so a traced study runs on a GPU-less host: writes a rocprofv3 kernel trace
/// of a decode ([`stand_in_decode_trace`]) into its output folder, logs where like rocprofv3
/// does, then execs the server.
pub fn stand_in_tracer(dir: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let fixture = dir.join("stand-in-decode.csv");
    std::fs::write(&fixture, stand_in_decode_trace()).unwrap();
    let script = dir.join("stand-in-tracer");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nout=\"$1\"; shift\ncp '{}' \"$out/stand_in_kernel_trace.csv\"\necho \"E20261129 00:00:00.000000 1 output_stream.cpp:111] Opened result file: $out/stand_in_kernel_trace.csv\" >&2\nexec \"$@\"\n",
            fixture.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    script
}

/// A stand-in for `rocprofv3 --attach PID … -d OUT …`: notes the pid it attached to and the
/// server's ROCP_TOOL_ATTACH, waits for the newline that detaches it, then writes the same decode
/// trace as [`stand_in_tracer`] and logs where, like rocprofv3.
pub fn stand_in_attach_tracer(dir: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let fixture = dir.join("stand-in-decode.csv");
    std::fs::write(&fixture, stand_in_decode_trace()).unwrap();
    let script = dir.join("stand-in-attach-tracer");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh
pid=; out=
while [ $# -gt 0 ]; do case \"$1\" in --attach) pid=\"$2\"; shift;; -d) out=\"$2\"; shift;; esac; shift; done
             echo \"attached to $pid\"
             tr '\\0' '\\n' < /proc/$pid/environ | grep '^ROCP_TOOL_ATTACH=' > \"$out/server-env.txt\"
             read line
             cp '{}' \"$out/stand_in_kernel_trace.csv\"
             echo \"E20261204 00:00:00.000000 1 output_stream.cpp:111] Opened result file: $out/stand_in_kernel_trace.csv\" >&2
             echo \"detached from $pid\"
",
            fixture.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    script
}

/// The stand-in tracer's kernel trace: the nine kernels of the committed rocprofv3 CSV
/// (traces/kernel_trace.csv) as one step, 40 steps 1 ms apart, so a 32-token decode of the test
/// bed's 4-layer model finds its steps by their gaps and at least one kernel a layer in each, as
/// a complete trace holds (docs/methodology.md §10 "complete traces").
fn stand_in_decode_trace() -> String {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("traces/kernel_trace.csv")).unwrap();
    let mut lines = text.lines();
    let mut out = format!("{}\n", lines.next().unwrap());
    let rows: Vec<Vec<String>> = lines.map(|l| l.split(',').map(String::from).collect()).collect();
    // Columns: Dispatch_Id 5, Correlation_Id 8, Start_Timestamp 9, End_Timestamp 10 (the name,
    // column 7, holds commas inside quotes: counted from the end).
    let mut id = 0u64;
    for step in 0..40u64 {
        for (i, r) in rows.iter().enumerate() {
            id += 1;
            let start = 1_550_151_853_029_637 + step * 1_000_000 + i as u64 * 2_000;
            let mut r = r.clone();
            let n = r.len();
            r[5] = id.to_string();
            r[n - 14] = id.to_string();
            r[n - 13] = start.to_string();
            r[n - 12] = (start + 1_500).to_string();
            out += &(r.join(",") + "\n");
        }
    }
    out
}

/// `git -C dir ARGS` with a fixed identity and no signing; its stdout. Panics with git's stderr.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=abprof test", "-c", "user.email=test@abprof.invalid", "-c", "commit.gpgsign=false"])
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).to_string()
}

/// `abprof trace` of `variants` (full specs) on the test bed into `root`, with the tracer command
/// `tracer {out}`: a 300-token calibrated prompt, `tokens` output tokens (ignore_eos) and
/// `untraced` untraced samples per variant. Tests add their own flags before running it.
pub fn trace_cmd(root: &Path, tracer: &Path, variants: &[String], tokens: u32, untraced: u32) -> assert_cmd::Command {
    let mut c = abprof();
    c.args(trace_args(root, tracer, variants, tokens, untraced));
    c
}

/// The arguments of [`trace_cmd`], for a capture the test spawns and watches, with the
/// [`SHARED_HOST`] limit.
pub fn trace_args(root: &Path, tracer: &Path, variants: &[String], tokens: u32, untraced: u32) -> Vec<String> {
    let mut a: Vec<String> = vec!["trace".into(), "--root".into(), root.display().to_string()];
    for v in variants {
        a.extend(["--variant".into(), v.clone()]);
    }
    let tokens = tokens.to_string();
    let untraced = untraced.to_string();
    a.extend(["--tokens", &tokens, "--untraced", &untraced, "--ignore-eos", "--server-args", COMMON].map(String::from));
    a.extend(["--model".into(), testbed().target.display().to_string()]);
    a.extend(["--prompt".into(), calibrated_prompt(300).display().to_string()]);
    a.extend(["--foreign-cpu-max".into(), SHARED_HOST.into()]);
    // Last, so a test can cut the tracer's flags off and give its own.
    a.extend(["--tracer-cmd".into(), format!("{} {{out}}", tracer.display())]);
    a
}

/// Busy loops (`sh -c 'while :; do :; done'`), this test's own children, killed when dropped (an
/// assertion that fails included): another workload that really runs.
pub struct BusyLoops(Vec<std::process::Child>);
impl BusyLoops {
    /// Four loops a core: beside the server's threads and whatever else the host runs (the tests
    /// pass beside a busy loop), the loops' share of the CPU stays above [`foreign_limit`]'s
    /// margin over that background — one loop a core beside a 2-thread server and one outside
    /// loop takes only 3/5 of the host.
    pub fn crowding() -> BusyLoops {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        BusyLoops(
            (0..4 * cores)
                .map(|_| std::process::Command::new("sh").args(["-c", "while :; do :; done"]).spawn().unwrap())
                .collect(),
        )
    }
}
impl Drop for BusyLoops {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// The CPU every process on the host used over the last second, % of one core (`/proc/stat`):
/// the background a test's own load must stand out from.
pub fn host_cpu_pct() -> f64 {
    let read = || -> (u64, u64) {
        let stat = std::fs::read_to_string("/proc/stat").unwrap();
        let f: Vec<u64> = stat.lines().next().unwrap().split_whitespace().skip(1).map(|x| x.parse().unwrap()).collect();
        // user nice system idle iowait irq softirq steal (guest time is inside user).
        let idle = f[3] + f[4];
        (f[..8].iter().sum::<u64>() - idle, f[..8].iter().sum())
    };
    let (busy0, total0) = read();
    std::thread::sleep(std::time::Duration::from_secs(1));
    let (busy1, total1) = read();
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get()) as f64;
    100.0 * cores * (busy1 - busy0) as f64 / (total1 - total0).max(1) as f64
}

/// `args` (from [`ab_args`]) with `--foreign-cpu-max PCT` in place of [`SHARED_HOST`]'s.
pub fn set_foreign_limit(args: &mut [String], pct: f64) {
    let at = args.iter().position(|a| a == "--foreign-cpu-max").expect("--foreign-cpu-max") + 1;
    args[at] = format!("{pct:.0}");
}

/// A `--foreign-cpu-max` that the host's background passes (whatever else runs on it now, a
/// busy loop included) and [`BusyLoops::crowding`] exceeds: the background plus half a core.
/// Other processes' CPU cannot read above the host's cores, so a background within 3/4 of a core
/// of that (a build beside the tests) leaves no room to stand out: the test waits for it to drop
/// (at most 10 minutes, then fails naming it) rather than judge a gate it cannot load.
pub fn foreign_limit() -> f64 {
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get()) as f64;
    let t0 = std::time::Instant::now();
    loop {
        let background = host_cpu_pct();
        if background + 75.0 <= 100.0 * cores {
            return background + 50.0;
        }
        assert!(
            t0.elapsed() < std::time::Duration::from_secs(600),
            "the host's other processes used {background:.0}% of its {cores} cores for 10 minutes: no room for this test's own load to stand out (run it beside at most a core's worth of other work)"
        );
    }
}
