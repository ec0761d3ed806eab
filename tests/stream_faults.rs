//! Faults of the one server abprof talks to (issue #11): a server that stops answering
//! mid-stream, Ctrl-C while a command's server starts or serves, a binary whose `--version` never
//! returns. Each runs the real abprof against the real llama-server of the test bed, through a
//! small wrapper script that `exec`s the server and records its pid, so the test can inject the
//! fault into that one process (its own grandchild) and check that nothing of it is left.
mod common;
use common::*;
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// `dir/server`: writes its pid to `dir/server.pid`, then becomes the real llama-server.
fn wrapper(dir: &Path) -> PathBuf {
    let script = dir.join("server");
    let body = format!(
        "#!/bin/sh\necho $$ > {}\nexec {} \"$@\"\n",
        dir.join("server.pid").display(),
        testbed().server.display()
    );
    std::fs::write(&script, body).unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    script
}

fn wait_for(what: &str, limit: Duration, mut ready: impl FnMut() -> bool) {
    let t0 = Instant::now();
    while !ready() {
        assert!(t0.elapsed() < limit, "{what} did not happen within {limit:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn server_pid(dir: &Path) -> Option<i32> {
    std::fs::read_to_string(dir.join("server.pid")).ok()?.trim().parse().ok()
}

/// Is `pid` still a live (not zombie) process running the test bed's server binary?
fn is_our_server(pid: i32) -> bool {
    let exe = std::fs::read_link(format!("/proc/{pid}/exe")).ok();
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let state = stat.rfind(')').and_then(|i| stat[i + 1..].split_whitespace().next().map(String::from));
    exe.as_deref() == Some(testbed().server.canonicalize().unwrap().as_path()) && state.as_deref() != Some("Z")
}

/// Waits for the child at most `limit`; kills it (the test's own child) if it outlives that.
fn wait_output(mut child: Child, limit: Duration) -> (Output, Duration) {
    let t0 = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            return (child.wait_with_output().unwrap(), t0.elapsed());
        }
        if t0.elapsed() > limit {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!("abprof still running after {limit:?}; stderr: {}", String::from_utf8_lossy(&out.stderr));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Leaves nothing behind: a server the test injected a fault into is continued and killed.
struct Reap(PathBuf);
impl Drop for Reap {
    fn drop(&mut self) {
        if let Some(pid) = server_pid(&self.0).filter(|p| is_our_server(*p)) {
            let _ = kill(Pid::from_raw(pid), Signal::SIGCONT);
            let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
        }
    }
}

fn abprof_cmd() -> Command {
    let mut c = Command::new(assert_cmd::cargo::cargo_bin("abprof"));
    c.env("XDG_DATA_HOME", data_home());
    c
}

#[test]
fn a_server_that_stops_mid_stream_ends_the_request_at_the_stall_timeout() {
    let _s = serial();
    let dir = tempfile::tempdir().unwrap();
    let _reap = Reap(dir.path().to_path_buf());
    let prompt = calibrated_prompt(300);
    let evidence = dir.path().join("ev");
    let child = abprof_cmd()
        .args(["bench", "--server-bin"])
        .arg(wrapper(dir.path()))
        .arg("--model")
        .arg(&testbed().target)
        .args(["--server-args", COMMON, "--prompt"])
        .arg(&prompt)
        .args(["--tokens", "1024", "--ignore-eos", "--stall-timeout", "3", "--evidence"])
        .arg(&evidence)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The request has reached the server once its slot starts the task. 2 s later it streams
    // (300 prompt tokens take 0.4 s on 2 idle cores, 1,024 output tokens more than 6 s).
    let log = evidence.join("server.log");
    wait_for("the request", Duration::from_secs(120), || {
        std::fs::read_to_string(&log).unwrap_or_default().contains("processing task")
    });
    std::thread::sleep(Duration::from_secs(2));
    let pid = server_pid(dir.path()).expect("the wrapper wrote its pid");
    kill(Pid::from_raw(pid), Signal::SIGSTOP).unwrap();
    let (out, after_stop) = wait_output(child, Duration::from_secs(60));
    let stderr = String::from_utf8_lossy(&out.stderr);
    eprintln!("abprof gave up {:.1} s after the SIGSTOP: {stderr}", after_stop.as_secs_f64());
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let lines = stderr_lines(&out);
    assert_eq!(lines.len(), 1, "one line: {stderr}");
    assert!(lines[0].contains("sent nothing for 3 s") && lines[0].contains("--stall-timeout"), "{stderr}");
    // 3 s of silence, then one SIGTERM that the stopped server handles once continued.
    assert!(after_stop < Duration::from_secs(15), "took {after_stop:?}");
    let sse = std::fs::read(evidence.join("response.sse")).unwrap();
    assert!(!sse.is_empty(), "the partial stream is kept");
    assert!(!String::from_utf8_lossy(&sse).contains("[DONE]"));
    assert!(!is_our_server(pid), "the stalled server is gone");
}

/// Sends SIGINT to abprof (the test's child) once `ready`, and checks it stops its server.
fn interrupt_when(mut cmd: Command, dir: &Path, what: &str, ready: impl FnMut() -> bool) {
    let child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    wait_for(what, Duration::from_secs(120), ready);
    let pid = server_pid(dir).expect("the wrapper wrote its pid");
    assert!(is_our_server(pid), "the server runs before the SIGINT");
    kill(Pid::from_raw(child.id() as i32), Signal::SIGINT).unwrap();
    let (out, took) = wait_output(child, Duration::from_secs(30));
    let stderr = String::from_utf8_lossy(&out.stderr);
    eprintln!("{what}: abprof exited {:.2} s after SIGINT: {stderr}", took.as_secs_f64());
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    let lines = stderr_lines(&out);
    assert_eq!(lines.len(), 1, "one line: {stderr}");
    assert!(lines[0].contains("interrupted by signal 2"), "{stderr}");
    assert!(!is_our_server(pid), "{what}: the server is gone");
}

#[test]
fn sigint_while_calibration_starts_its_server_stops_it() {
    let _s = serial();
    let dir = tempfile::tempdir().unwrap();
    let _reap = Reap(dir.path().to_path_buf());
    let mut cmd = abprof_cmd();
    cmd.args(["calibrate", "--server-bin"])
        .arg(wrapper(dir.path()))
        .arg("--model")
        .arg(&testbed().target)
        .args(["--server-args", COMMON, "--prompt-tokens", "300", "--out"])
        .arg(dir.path().join("p.txt"));
    let d = dir.path().to_path_buf();
    interrupt_when(cmd, dir.path(), "calibrate, server starting", || server_pid(&d).is_some_and(is_our_server));
    assert!(!dir.path().join("p.txt").exists(), "no prompt from an interrupted calibration");
}

#[test]
fn sigint_while_bench_streams_stops_its_server() {
    let _s = serial();
    let dir = tempfile::tempdir().unwrap();
    let _reap = Reap(dir.path().to_path_buf());
    let prompt = calibrated_prompt(300);
    let evidence = dir.path().join("ev");
    let mut cmd = abprof_cmd();
    cmd.args(["bench", "--server-bin"])
        .arg(wrapper(dir.path()))
        .arg("--model")
        .arg(&testbed().target)
        .args(["--server-args", COMMON, "--prompt"])
        .arg(&prompt)
        .args(["--tokens", "1024", "--ignore-eos", "--evidence"])
        .arg(&evidence);
    let log = evidence.join("server.log");
    interrupt_when(cmd, dir.path(), "bench, request streaming", || {
        std::fs::read_to_string(&log).unwrap_or_default().contains("processing task")
    });
}

/// Processes whose process group is `pgid` (from /proc/PID/stat).
fn group_members(pgid: i32) -> Vec<i32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else { continue };
        let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
        let fields: Vec<&str> = stat.rfind(')').map_or(vec![], |i| stat[i + 1..].split_whitespace().collect());
        if fields.get(2).and_then(|g| g.parse::<i32>().ok()) == Some(pgid) && fields.first() != Some(&"Z") {
            out.push(pid);
        }
    }
    out
}

#[test]
fn a_binary_whose_version_probe_never_returns_is_recorded_not_waited_for() {
    let _s = serial();
    let dir = tempfile::tempdir().unwrap();
    // `--version` traps TERM and sleeps forever; anything else is the real server.
    let fake = dir.path().join("stuck-server");
    let probe_pid = dir.path().join("probe.pid");
    std::fs::write(
        &fake,
        format!(
            "#!/bin/sh\nif [ \"$1\" = --version ]; then\n  trap '' TERM\n  echo $$ > {}\n  while :; do sleep 1; done\nfi\nexec {} \"$@\"\n",
            probe_pid.display(),
            testbed().server.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let root = dir.path().join("ab");
    let child = abprof_cmd()
        .args(["ab", "--root"])
        .arg(&root)
        .args(["--samples", "3", "--model"])
        .arg(&testbed().target)
        .args(["--server-args", COMMON, "--prompt"])
        .arg(calibrated_prompt(300))
        .args(["--ignore-eos", "--tokens", "16", "--foreign-cpu-max", SHARED_HOST, "--variant"])
        .arg(format!("a={}", testbed().server.display()))
        .arg("--variant")
        .arg(format!("b={}", fake.display()))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (out, took) = wait_output(child, Duration::from_secs(120));
    let stderr = String::from_utf8_lossy(&out.stderr);
    eprintln!("ab with a stuck --version took {:.1} s: {stderr}", took.as_secs_f64());
    assert_eq!(out.status.code(), Some(0), "the study proceeds: {stderr}");
    let pid: i32 = std::fs::read_to_string(&probe_pid).unwrap().trim().parse().unwrap();
    assert!(group_members(pid).is_empty(), "no probe process is left: {:?}", group_members(pid));
    assert!(stderr.contains("`") && stderr.contains("--version` did not finish within 5 s"), "{stderr}");
    let doc = read_json(&root.join("variants.json"));
    let facts = &doc["items"];
    assert_eq!(facts[1]["version"], "version probe timed out");
    assert_ne!(facts[0]["version"], "version probe timed out");
}
