//! `abprof doctor` as a user runs it: the real binary on this host, with the test bed's real
//! llama-server, read back through its JSON (never a measured number scraped from text).
mod common;
use common::*;

fn findings(json: &serde_json::Value) -> Vec<(String, String)> {
    json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["name"].as_str().unwrap().to_string(), f["status"].as_str().unwrap().to_string()))
        .collect()
}

#[test]
fn doctor_checks_the_test_beds_llama_server_and_a_held_port() {
    let tb = testbed();
    let held = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
    let port = held.local_addr().unwrap().port().to_string();
    let root = tempfile::tempdir().unwrap();
    let out = abprof()
        .args(["doctor", "--json", "--port", &port, "--root"])
        .arg(root.path().join("study"))
        .arg("--server-bin")
        .arg(&tb.server)
        .output()
        .unwrap();
    let json: serde_json::Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    let names: Vec<String> = findings(&json).into_iter().map(|(n, _)| n).collect();
    assert_eq!(
        names,
        [
            "telemetry",
            "power state",
            "cpu governor",
            "cpu boost",
            "gpu processes",
            "cpu load",
            "port",
            "disk",
            "llama-server",
            "apu memory",
            "platform profile",
            "iommu",
            "last A/A"
        ]
    );
    // This host has no amdgpu APU: the Strix Halo findings say so rather than judge.
    for name in ["apu memory", "iommu"] {
        let f = json["findings"].as_array().unwrap().iter().find(|f| f["name"] == name).unwrap();
        assert_eq!(f["status"], "not-present", "{f:#}");
    }
    let get = |name: &str| json["findings"].as_array().unwrap().iter().find(|f| f["name"] == name).unwrap().clone();
    assert_eq!(get("port")["status"], "warn", "the held port: {}", get("port"));
    assert_eq!(json["ready"], false);
    assert_eq!(out.status.code(), Some(3), "a warning exits 3");
    let server = get("llama-server");
    assert_eq!(server["status"], "ok", "{server}");
    let value = server["value"].as_str().unwrap();
    // The pinned llama.cpp (0c1e57098) has both.
    assert!(
        value.contains("version: ") && value.contains("draft-mtp: yes") && value.contains("--backend-sampling: yes"),
        "{value}"
    );
    assert_eq!(get("last A/A")["status"], "not-present", "a fresh history has no A/A study");
    assert!(root.path().read_dir().unwrap().next().is_none(), "doctor creates nothing under --root");
    drop(held);
}

/// A crafted /sys: a powersave governor warns, the amdgpu fixture card is the telemetry source.
#[test]
fn doctor_reads_a_crafted_sysfs_tree() {
    let sys = tempfile::tempdir().unwrap();
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sysfs/dgpu-v1_3");
    let copy = std::process::Command::new("cp").arg("-r").arg(fixture.join("class")).arg(sys.path()).status().unwrap();
    assert!(copy.success());
    let gov = sys.path().join("devices/system/cpu/cpu0/cpufreq");
    std::fs::create_dir_all(&gov).unwrap();
    std::fs::write(gov.join("scaling_governor"), "powersave\n").unwrap();
    let out = abprof()
        .args(["doctor", "--json", "--telemetry", "amdgpu-sysfs", "--sysfs-root"])
        .arg(sys.path())
        .output()
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let get = |name: &str| json["findings"].as_array().unwrap().iter().find(|f| f["name"] == name).unwrap().clone();
    assert_eq!(get("cpu governor")["status"], "warn", "{}", get("cpu governor"));
    assert_eq!(get("cpu governor")["value"], "powersave on 1 of 1 CPUs");
    assert_eq!(get("telemetry")["status"], "ok", "{}", get("telemetry"));
    assert_eq!(get("cpu boost")["status"], "not-present");
    assert_eq!(out.status.code(), Some(3));
}

/// Every `abprof …` command a finding's fix prints runs as written on the host that printed it
/// (its placeholders filled with the test bed's): on a fresh history the last-A/A finding says to
/// run an A/A study; run as printed, it ends with a verdict, and the doctor then reads its interval.
#[test]
fn every_abprof_command_a_fix_prints_runs_as_written() {
    let _g = serial();
    let tb = testbed();
    let d = tempfile::tempdir().unwrap();
    let history = d.path().join("history.db");
    let doctor = || {
        let out = abprof()
            .args(["doctor", "--json", "--history"])
            .arg(&history)
            .arg("--server-bin")
            .arg(&tb.server)
            .output()
            .unwrap();
        let json: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
        json["findings"].as_array().unwrap().clone()
    };
    let commands: Vec<String> = doctor()
        .iter()
        .filter_map(|f| f["fix"].as_str())
        .flat_map(|fix| fix.split('`').skip(1).step_by(2).map(str::to_string).collect::<Vec<_>>())
        .filter(|c| c.starts_with("abprof "))
        .collect();
    assert!(!commands.is_empty(), "a fresh history's last-A/A finding prints a command");
    let fill = |word: &str| -> String {
        let server = tb.server.display();
        match word {
            "NAME=PATH/llama-server" => format!("base={server}"),
            "GGUF" => tb.target.display().to_string(),
            "DIR" => d.path().join("aa").display().to_string(),
            w => {
                assert!(!w.chars().any(|c| c.is_ascii_uppercase()), "a placeholder this test does not fill: {w}");
                w.to_string()
            }
        }
    };
    for command in commands {
        let words = shlex::split(&command).unwrap_or_else(|| panic!("{command}: not shell words"));
        let args: Vec<String> = words[1..].iter().map(|w| fill(w)).collect();
        // As printed, plus the history the doctor read and the other-workload allowance every
        // test-bed study gets (the tests pass beside other work: common::SHARED_HOST).
        let out = abprof()
            .args(&args)
            .arg("--history")
            .arg(&history)
            .args(["--foreign-cpu-max", SHARED_HOST])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "`{command}` as {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
    let after = doctor();
    let last = after.iter().find(|f| f["name"] == "last A/A").unwrap();
    assert_eq!(last["status"], "ok", "the A/A study the fix ran is this host's noise floor now: {last}");
}
