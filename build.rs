//! Stamps the binary with the commit it was built from, so every evidence folder can name the
//! exact abprof that measured it.
use std::process::Command;

fn main() {
    let commit = Command::new("git")
        .args(["describe", "--always", "--dirty", "--abbrev=12"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=ABPROF_GIT_COMMIT={commit}");
    let target = std::env::var("TARGET").unwrap_or_default();
    println!("cargo:rustc-env=ABPROF_TARGET={target}");
    println!("cargo:rerun-if-changed=.git/HEAD");
    println!("cargo:rerun-if-changed=.git/index");
}
