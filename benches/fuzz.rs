//! Mutation fuzzing of every parser that reads outside bytes (`abprof::fuzzing::targets`), with
//! a budget per target: until `--execs` executions or `--seconds` pass, whichever comes first.
//! Seeds are the repository's real fixtures; inputs are derived from them by byte-level
//! mutations (flips, random bytes, insertions and deletions of ranges, duplicated ranges,
//! splices of two seeds, and tokens the formats use), with a recorded RNG seed so a run
//! reproduces. There is no coverage feedback (stable Rust, no instrumentation): the mutations are
//! structure-aware only through the seeds and the token list.
//!
//!     cargo bench --bench fuzz -- [--execs N] [--seconds S] [--seed K] [--root DIR] [TARGET...]
//!
//! A panic is a crash: its input is written to fuzz/crashes/TARGET-<sha256 prefix> and the run
//! exits 1 after the other targets ran. `scripts/fuzz` replays every kept crash first.
use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Pieces of the formats' syntax, inserted whole so mutations reach the parsers' deeper branches.
const TOKENS: &[&str] = &[
    "prompt eval time =",
    "eval time =",
    " ms /",
    " tokens (",
    " ms per token,",
    " tokens per second)",
    "total time =",
    "print_timing",
    "draft acceptance rate = ",
    "mean len",
    "slot ",
    "| task ",
    "[8080] ",
    "data: ",
    "\n\n",
    "[DONE]",
    "{\"choices\":[{\"delta\":{\"content\":\"x\"}}]}",
    "\"usage\":",
    "|",
    "=",
    "kv=",
    "env=",
    "extra=",
    "model=",
    "expect=",
    "\\|",
    "\"",
    "'",
    "[isolation]",
    "[idle]",
    "\n",
    "Kernel_Name",
    "Start_Timestamp",
    "End_Timestamp",
    ",",
    "-1",
    "18446744073709551615",
    "NaN",
    "1e308",
    "\u{0}",
    "\u{feff}",
];

fn mutate(rng: &mut ChaCha8Rng, seeds: &[Vec<u8>], out: &mut Vec<u8>) {
    out.clear();
    out.extend_from_slice(&seeds[rng.random_range(0..seeds.len())]);
    for _ in 0..rng.random_range(1..=8) {
        let len = out.len();
        match rng.random_range(0..8) {
            0 if len > 0 => {
                let i = rng.random_range(0..len);
                out[i] ^= 1 << rng.random_range(0..8);
            }
            1 if len > 0 => {
                let i = rng.random_range(0..len);
                out[i] = rng.random();
            }
            2 => {
                let i = rng.random_range(0..=len);
                let n = rng.random_range(1..=16);
                let mut bytes = vec![0u8; n];
                rng.fill_bytes(&mut bytes);
                out.splice(i..i, bytes);
            }
            3 if len > 1 => {
                let a = rng.random_range(0..len);
                let b = (a + rng.random_range(1..=len.min(256))).min(len);
                out.drain(a..b);
            }
            4 if len > 1 => {
                let a = rng.random_range(0..len);
                let b = (a + rng.random_range(1..=len.min(256))).min(len);
                let piece = out[a..b].to_vec();
                let at = rng.random_range(0..=out.len());
                out.splice(at..at, piece);
            }
            5 => {
                let other = &seeds[rng.random_range(0..seeds.len())];
                if !other.is_empty() {
                    let from = rng.random_range(0..other.len());
                    let at = rng.random_range(0..=len);
                    out.truncate(at);
                    out.extend_from_slice(&other[from..]);
                }
            }
            6 => {
                let t = TOKENS[rng.random_range(0..TOKENS.len())].as_bytes();
                let at = rng.random_range(0..=len);
                out.splice(at..at, t.iter().copied());
            }
            _ if len > 0 => {
                // A digit run rewritten: numbers are where parsers divide and index.
                let i = rng.random_range(0..len);
                if out[i].is_ascii_digit() {
                    let digits: Vec<u8> =
                        (0..rng.random_range(1..=20)).map(|_| b'0' + rng.random_range(0..10u8)).collect();
                    let end = (i..len).find(|&j| !out[j].is_ascii_digit()).unwrap_or(len);
                    out.splice(i..end, digits);
                }
            }
            _ => {}
        }
    }
}

struct Budget {
    execs: u64,
    seconds: f64,
    seed: u64,
    root: PathBuf,
    only: Vec<String>,
}

fn args() -> Budget {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut b = Budget { execs: 10_000_000, seconds: 600.0, seed: 1, root, only: Vec::new() };
    let mut it = std::env::args().skip(1).filter(|a| a != "--bench");
    while let Some(a) = it.next() {
        match a.as_str() {
            "--execs" => b.execs = it.next().and_then(|v| v.parse().ok()).expect("--execs N"),
            "--seconds" => b.seconds = it.next().and_then(|v| v.parse().ok()).expect("--seconds S"),
            "--seed" => b.seed = it.next().and_then(|v| v.parse().ok()).expect("--seed K"),
            "--root" => b.root = it.next().map(PathBuf::from).expect("--root DIR"),
            t => b.only.push(t.to_string()),
        }
    }
    b
}

fn main() {
    let budget = args();
    let root = budget.root.clone();
    let crashes = root.join("fuzz/crashes");
    let scratch_dir =
        tempfile::Builder::new().prefix("abprof-fuzz").tempdir_in("/dev/shm").or_else(|_| tempfile::tempdir()).unwrap();
    let targets = abprof::fuzzing::targets();
    if let Some(t) = budget.only.iter().find(|o| !targets.iter().any(|t| t.name == o.as_str())) {
        let names: Vec<&str> = targets.iter().map(|t| t.name).collect();
        eprintln!("fuzz: no target {t:?}: choose from {}", names.join(", "));
        std::process::exit(2);
    }
    let mut failed = false;
    println!("target            execs         seconds   execs/s    crashes  (seed {})", budget.seed);
    for t in targets {
        if !budget.only.is_empty() && !budget.only.iter().any(|o| o == t.name) {
            continue;
        }
        let seeds: Vec<Vec<u8>> = t.seeds.iter().map(|p| std::fs::read(root.join(p)).expect("seed file")).collect();
        // Set after the seeds load, so a harness error still prints: a target's panic is counted
        // and reported by the loop, where the default hook would print each one.
        std::panic::set_hook(Box::new(|_| {}));
        let scratch = scratch_dir.path().join(format!("{}.csv", t.name));
        let replay = replay_crashes(&crashes, t.name, t.run, &scratch);
        let mut rng = ChaCha8Rng::seed_from_u64(budget.seed ^ fxhash(t.name));
        let mut input = Vec::new();
        let (mut execs, mut found) = (0u64, replay);
        let t0 = Instant::now();
        let deadline = Duration::from_secs_f64(budget.seconds);
        while execs < budget.execs && (execs % 1024 != 0 || t0.elapsed() < deadline) {
            mutate(&mut rng, &seeds, &mut input);
            if std::panic::catch_unwind(|| (t.run)(&input, &scratch)).is_err() {
                found += 1;
                save_crash(&crashes, t.name, &input);
            }
            execs += 1;
        }
        drop(std::panic::take_hook());
        let secs = t0.elapsed().as_secs_f64();
        println!("{:<16} {:>11} {:>11.1} {:>9.0} {:>10}", t.name, execs, secs, execs as f64 / secs, found);
        failed |= found > 0;
    }
    if failed {
        eprintln!("crashing inputs are in {}", crashes.display());
        std::process::exit(1);
    }
}

fn fxhash(s: &str) -> u64 {
    s.bytes().fold(0xcbf29ce484222325, |h, b| (h ^ b as u64).wrapping_mul(0x100000001b3))
}

fn save_crash(dir: &Path, target: &str, input: &[u8]) {
    let _ = std::fs::create_dir_all(dir);
    let name = format!("{target}-{}", &hex::encode(Sha256::digest(input))[..16]);
    let _ = std::fs::write(dir.join(name), input);
}

/// Every kept crash of `target` must not crash any more; returns how many still do.
fn replay_crashes(dir: &Path, target: &str, run: fn(&[u8], &Path), scratch: &Path) -> u64 {
    let Ok(rd) = std::fs::read_dir(dir) else { return 0 };
    let mut still = 0;
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        if name.starts_with(&format!("{target}-")) {
            let input = std::fs::read(e.path()).unwrap_or_default();
            if std::panic::catch_unwind(|| run(&input, scratch)).is_err() {
                eprintln!("{name}: still crashes");
                still += 1;
            }
        }
    }
    still
}
