//! Shared by the benches: the test bed's paths (env from scripts/test, else scripts/testbed).
#![allow(dead_code)]
use std::collections::HashMap;
use std::path::PathBuf;

pub fn var(key: &str) -> PathBuf {
    if let Ok(v) = std::env::var(key) {
        return v.into();
    }
    let out = std::process::Command::new(concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/testbed"))
        .stderr(std::process::Stdio::inherit())
        .output()
        .expect("run scripts/testbed");
    let vars: HashMap<String, String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_once('=').map(|(k, v)| (k.to_string(), v.to_string())))
        .collect();
    vars.get(key).unwrap_or_else(|| panic!("test bed has no {key}")).into()
}
