//! How fast does `abprof attribute` read a large rocpd trace, against what people use today?
//!
//! On one generated rocpd database of >= 2 M dispatches (made by scripts/make_rocpd_fixture.py
//! into ~/.cache/abprof/bench/ on first use), measured in the same run, the tools taking turns
//! run after run (so a load that comes and goes lands on all of them):
//! - `abprof attribute DB --json` (the release binary),
//! - `abprof attribute DB --busy --json` (GPU busy time and each kernel's exclusive share too),
//! - the `sqlite3` CLI running the bare `SELECT kernel_id, count(*), sum("end"-start) FROM
//!   rocpd_kernel_dispatch_<uuid> GROUP BY kernel_id`,
//! - benches/attribute_pandas.py: sqlite3 + pandas through the joined `kernels` view, in a venv
//!   with pandas cached under ~/.cache/abprof/ (created with pip on first use).
//!
//! Prints each tool's median wall time over the runs, rows/s and peak RSS, and the ratios.
//! Targets: abprof attribute, with and without --busy, >= 4x sqlite3's rows/s, >= 5x pandas',
//! peak RSS < 100 MB.
//!
//! cargo bench --bench attribute [-- RUNS]
//! Environment: ABPROF_BENCH_DB (database path), ABPROF_ROCPD_SCHEMA (DDL folder, default
//! ../shared/reference/rocpd-schema), SQLITE3 (default /usr/bin/sqlite3).
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use nix::libc;

const DISPATCHES: u64 = 2_100_000;

fn cache_dir() -> PathBuf {
    let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("/tmp"));
    home.join(".cache/abprof")
}

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn ensure_database() -> PathBuf {
    let db = std::env::var_os("ABPROF_BENCH_DB")
        .map(PathBuf::from)
        .unwrap_or_else(|| cache_dir().join(format!("bench/decode-{:.1}M.db", DISPATCHES as f64 / 1e6)));
    if db.exists() {
        return db;
    }
    let schema = std::env::var_os("ABPROF_ROCPD_SCHEMA")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join("../shared/reference/rocpd-schema"));
    eprintln!("generating {} ({DISPATCHES} dispatches) with the DDL in {}", db.display(), schema.display());
    let status = Command::new("python3")
        .arg(repo().join("scripts/make_rocpd_fixture.py"))
        .args(["--kind", "bench", "--dispatches", &DISPATCHES.to_string(), "--schema-dir"])
        .arg(&schema)
        .arg("--out")
        .arg(&db)
        .status()
        .expect("python3 runs");
    assert!(status.success(), "the generator failed; see above");
    db
}

fn ensure_pandas_python() -> PathBuf {
    let venv = cache_dir().join("venv-bench-pandas");
    let python = venv.join("bin/python");
    let has_pandas = |p: &Path| {
        Command::new(p).args(["-c", "import pandas"]).stderr(Stdio::null()).status().is_ok_and(|s| s.success())
    };
    if python.exists() && has_pandas(&python) {
        return python;
    }
    eprintln!("creating {} with pandas (pip, once)", venv.display());
    let ok = Command::new("python3").args(["-m", "venv"]).arg(&venv).status().is_ok_and(|s| s.success())
        && Command::new(venv.join("bin/pip")).args(["install", "-q", "pandas"]).status().is_ok_and(|s| s.success());
    assert!(ok && has_pandas(&python), "could not install pandas into {}", venv.display());
    python
}

struct Run {
    seconds: f64,
    /// User + system CPU time of the child: on a host other work keeps busy, the wall-time ratio
    /// loses abprof's threads, the CPU-time ratio does not.
    cpu_seconds: f64,
    max_rss_kb: i64,
}

/// Runs a command with stdout discarded; wall time and the child's own peak RSS (wait4).
// The child is reaped by wait4, which std's Child does not know about.
#[allow(clippy::zombie_processes)]
fn run(cmd: &mut Command) -> Run {
    let t0 = Instant::now();
    let child = cmd.stdout(Stdio::null()).spawn().expect("the command starts");
    let mut status = 0;
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: wait4 on our own child's pid with valid out-pointers.
    let pid = unsafe { libc::wait4(child.id() as libc::pid_t, &mut status, 0, &mut usage) };
    let seconds = t0.elapsed().as_secs_f64();
    assert!(pid > 0 && libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0, "{cmd:?} failed");
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    Run { seconds, cpu_seconds: tv(usage.ru_utime) + tv(usage.ru_stime), max_rss_kb: usage.ru_maxrss }
}

struct Measured {
    name: String,
    seconds: f64,
    cpu_seconds: f64,
    max_rss_kb: i64,
}

/// A tool's name and how to make its command line.
type Tool = (String, Box<dyn Fn() -> Command>);

/// Every tool `runs` times, taking turns; each tool's median and peak RSS.
fn measure_all(runs: usize, tools: &[Tool]) -> Vec<Measured> {
    let mut times = vec![Vec::new(); tools.len()];
    let mut cpu = vec![Vec::new(); tools.len()];
    let mut rss = vec![0; tools.len()];
    for _ in 0..runs {
        for (i, (_, make)) in tools.iter().enumerate() {
            let r = run(&mut make());
            times[i].push(r.seconds);
            cpu[i].push(r.cpu_seconds);
            rss[i] = rss[i].max(r.max_rss_kb);
        }
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    tools
        .iter()
        .enumerate()
        .map(|(i, (name, _))| Measured {
            name: name.clone(),
            seconds: median(&mut times[i]),
            cpu_seconds: median(&mut cpu[i]),
            max_rss_kb: rss[i],
        })
        .collect()
}

fn main() {
    let runs: usize = std::env::args().skip(1).find_map(|a| a.parse().ok()).unwrap_or(3);
    let db = ensure_database();
    let python = ensure_pandas_python();
    let sqlite3 = std::env::var("SQLITE3").unwrap_or_else(|_| "/usr/bin/sqlite3".into());

    let conn = rusqlite::Connection::open_with_flags(&db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    let table: String = conn
        .query_row(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'rocpd\\_kernel\\_dispatch\\_%' ESCAPE '\\'",
            [],
            |r| r.get(0),
        )
        .expect("a rocpd database");
    let rows: u64 = conn.query_row(&format!("SELECT count(*) FROM \"{table}\""), [], |r| r.get(0)).unwrap();
    drop(conn);
    let size_mb = std::fs::metadata(&db).unwrap().len() as f64 / 1e6;
    let cli_version = Command::new(&sqlite3).arg("--version").output().map_or("?".into(), |o| {
        String::from_utf8_lossy(&o.stdout).split_whitespace().next().unwrap_or("?").to_string()
    });
    // Warm the page cache so every tool reads from memory, as after a capture.
    std::io::copy(&mut std::fs::File::open(&db).unwrap(), &mut std::io::sink()).unwrap();

    let abprof = env!("CARGO_BIN_EXE_abprof");
    let query = format!("SELECT kernel_id, count(*), sum(\"end\"-start) FROM \"{table}\" GROUP BY kernel_id");
    let pandas_script = repo().join("benches/attribute_pandas.py");
    let attribute = |busy: bool| -> Box<dyn Fn() -> Command> {
        let db = db.clone();
        Box::new(move || {
            let mut c = Command::new(abprof);
            c.arg("attribute").arg(&db).arg("--json");
            if busy {
                c.arg("--busy");
            }
            c
        })
    };
    let (db2, sqlite3_2) = (db.clone(), sqlite3.clone());
    let (db3, python3, script) = (db.clone(), python.clone(), pandas_script.clone());
    let tools: Vec<Tool> = vec![
        ("abprof attribute --json".into(), attribute(false)),
        ("abprof attribute --busy --json".into(), attribute(true)),
        (
            format!("sqlite3 {cli_version} CLI, bare GROUP BY"),
            Box::new(move || {
                let mut c = Command::new(&sqlite3_2);
                c.arg(&db2).arg(&query);
                c
            }),
        ),
        (
            "python sqlite3+pandas, kernels view".into(),
            Box::new(move || {
                let mut c = Command::new(&python3);
                c.arg(&script).arg(&db3);
                c
            }),
        ),
    ];
    let results = measure_all(runs, &tools);

    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "abprof attribute benchmark: {} ({rows} dispatches, {size_mb:.0} MB), {cores} cores, median of {runs} runs",
        db.display()
    );
    println!("{:<40} {:>9} {:>9} {:>14} {:>13}", "tool", "seconds", "CPU s", "rows/s", "peak RSS");
    for m in &results {
        println!(
            "{:<40} {:>9.3} {:>9.3} {:>12.2} M {:>10.1} MB",
            m.name,
            m.seconds,
            m.cpu_seconds,
            rows as f64 / m.seconds / 1e6,
            m.max_rss_kb as f64 / 1024.0
        );
    }
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("load average before the last run: {}", load.split_whitespace().take(3).collect::<Vec<_>>().join(" "));
    let verdict = |ok: bool| if ok { "met" } else { "MISSED" };
    for (i, what) in [(0, "attribute"), (1, "attribute --busy")] {
        let vs_sqlite = results[2].seconds / results[i].seconds;
        let vs_pandas = results[3].seconds / results[i].seconds;
        let cpu_vs_sqlite = results[2].cpu_seconds / results[i].cpu_seconds;
        let rss_mb = results[i].max_rss_kb as f64 / 1024.0;
        println!("abprof {what} / sqlite3 rows/s: {vs_sqlite:.2}x (target >= 4x: {})", verdict(vs_sqlite >= 4.0));
        println!("abprof {what} / sqlite3 CPU time: {cpu_vs_sqlite:.2}x less");
        println!("abprof {what} / pandas rows/s:  {vs_pandas:.2}x (target >= 5x: {})", verdict(vs_pandas >= 5.0));
        println!("abprof {what} peak RSS:         {rss_mb:.1} MB (target < 100 MB: {})", verdict(rss_mb < 100.0));
    }
}
