//! The test bed itself: the generated models are deterministic and the server is what it says.
mod common;
use common::*;
use std::process::Command;

fn sha256(path: &std::path::Path) -> String {
    use sha2::{Digest, Sha256};
    hex::encode(Sha256::digest(std::fs::read(path).unwrap()))
}

#[test]
fn same_seed_gives_byte_identical_models() {
    let tb = testbed();
    let python = tb.vars.get("GGUF_PYTHON").cloned().or_else(|| std::env::var("GGUF_PYTHON").ok()).unwrap();
    let vocab = tb.vars.get("VOCAB_QWEN35").cloned().or_else(|| std::env::var("VOCAB_QWEN35").ok()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let gen = |tag: &str, seed: &str| {
        let (t, d) = (dir.path().join(format!("{tag}-t.gguf")), dir.path().join(format!("{tag}-d.gguf")));
        let st = Command::new(&python)
            .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/make_model.py"))
            .args(["--vocab", &vocab, "--seed", seed, "--out"])
            .arg(&t)
            .arg("--draft-out")
            .arg(&d)
            .status()
            .unwrap();
        assert!(st.success());
        (sha256(&t), sha256(&d))
    };
    let first = gen("a", "42");
    assert_eq!(first, gen("b", "42"), "same seed, different bytes");
    // The cached test bed was made by the same script with the default seed.
    assert_eq!(first.0, sha256(&tb.target));
    assert_eq!(first.1, sha256(&tb.draft));
    assert_ne!(first.0, gen("c", "7").0, "the seed must matter");
}

#[test]
fn the_mtp_pair_regenerates_byte_identical() {
    let tb = testbed();
    let var = |k: &str| tb.vars.get(k).cloned().or_else(|| std::env::var(k).ok()).unwrap_or_else(|| panic!("no {k}"));
    let dir = tempfile::tempdir().unwrap();
    let (random, predictable) = (dir.path().join("r.gguf"), dir.path().join("p.gguf"));
    let st = Command::new(var("GGUF_PYTHON"))
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/make_model.py"))
        .args(["--arch", "qwen35moe", "--vocab", &var("VOCAB_QWEN35"), "--out"])
        .arg(&random)
        .arg("--predictable-out")
        .arg(&predictable)
        .status()
        .unwrap();
    assert!(st.success());
    assert_eq!(sha256(&random), sha256(std::path::Path::new(&var("MTP_MODEL"))));
    assert_eq!(sha256(&predictable), sha256(std::path::Path::new(&var("MTP_PREDICTABLE_MODEL"))));
    assert_ne!(sha256(&random), sha256(&predictable), "the twin must differ from the random model");
}

#[test]
fn the_server_reports_the_pinned_commit() {
    let out = Command::new(&testbed().server).arg("--version").output().unwrap();
    let text = String::from_utf8_lossy(&out.stderr).to_string() + &String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("commit 0c1e57098"), "{text}");
}
