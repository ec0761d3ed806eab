//! What integration tests share: the real test bed (built by scripts/testbed, cached under
//! ~/.cache/abprof) and the real abprof binary.
#![allow(dead_code)]
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

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

pub fn abprof() -> assert_cmd::Command {
    assert_cmd::Command::cargo_bin("abprof").expect("abprof binary")
}

/// Server args every test-bed server gets: small context, both cores, one slot.
pub const COMMON: &str = "-c 4096 -t 2 -np 1";

/// A prompt calibrated to `tokens` for the random target, made once per test binary.
pub fn calibrated_prompt(tokens: u64) -> PathBuf {
    calibrated_prompt_for(&testbed().target, "target", tokens)
}

/// A prompt calibrated to `tokens` for `model` (tokenizers differ), made once per test binary.
pub fn calibrated_prompt_for(model: &Path, tag: &str, tokens: u64) -> PathBuf {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let dir = DIR.get_or_init(|| tempfile::tempdir().unwrap());
    let path = dir.path().join(format!("prompt-{tag}-{tokens}.txt"));
    if !path.exists() {
        abprof()
            .args(["calibrate", "--server-bin"])
            .arg(&testbed().server)
            .arg("--model")
            .arg(model)
            .args(["--server-args", COMMON, "--prompt-tokens", &tokens.to_string(), "--out"])
            .arg(&path)
            .assert()
            .success();
    }
    path
}

pub fn stderr_lines(out: &std::process::Output) -> Vec<String> {
    String::from_utf8_lossy(&out.stderr).lines().map(String::from).collect()
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
