//! The test bed's models for unit tests: from the environment scripts/test exports, else by
//! running scripts/testbed (a warm run takes about a second), as tests/common does.
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::OnceLock;

pub(crate) fn model(key: &str) -> PathBuf {
    static VARS: OnceLock<HashMap<String, String>> = OnceLock::new();
    assert!(
        std::env::var("ABPROF_TEST_TIER").as_deref() != Ok("fast"),
        "this test needs the test bed's {key}: put it in a `mod on_test_bed` (.config/nextest.toml keeps those out of the fast tier)"
    );
    if let Ok(v) = std::env::var(key) {
        return v.into();
    }
    let vars = VARS.get_or_init(|| {
        let out = std::process::Command::new(concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/testbed"))
            .stderr(std::process::Stdio::inherit())
            .output()
            .expect("run scripts/testbed");
        assert!(out.status.success(), "scripts/testbed failed");
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| l.split_once('=').map(|(k, v)| (k.to_string(), v.to_string())))
            .collect()
    });
    vars.get(key).unwrap_or_else(|| panic!("the test bed has no {key}")).into()
}

/// A fixture the `gguf` package wrote (scripts/gguf_tensor_sizes.py).
pub(crate) fn gguf_fixture(name: &str) -> serde_json::Value {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/gguf").join(name);
    serde_json::from_str(&std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))).unwrap()
}
