//! How late does abprof notice that a llama-server became ready?
//!
//! For each of N cold starts of the real test-bed server, a ground-truth thread hammers /health
//! over raw TCP (one request after another, no sleep) while abprof's `wait_healthy` polls at its
//! normal interval. The figure is abprof's detection stamp minus the ground truth's first 200,
//! both on CLOCK_MONOTONIC. Target: < 100 ms added after the server is ready.
//!
//! cargo bench --bench health_poll [-- STARTS]
#[path = "testbed.rs"]
mod testbed;

use abprof::client::Client;
use abprof::clock::mono_ns;
use abprof::server::{free_port, LaunchSpec, RunningServer, HEALTH_POLL};
use std::io::{Read, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

fn health_ok(port: u16) -> bool {
    let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", port)) else { return false };
    let _ = s.set_read_timeout(Some(Duration::from_millis(500)));
    if s.write_all(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n").is_err() {
        return false;
    }
    let mut buf = [0u8; 16];
    matches!(s.read(&mut buf), Ok(n) if n >= 12 && &buf[9..12] == b"200")
}

fn main() {
    let starts: usize = std::env::args().skip(1).find_map(|a| a.parse().ok()).unwrap_or(10);
    let server = testbed::var("LLAMA_SERVER");
    let model = testbed::var("TARGET_MODEL");
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut added = Vec::new();
    for i in 0..starts {
        let port = free_port("127.0.0.1").unwrap();
        let spec = LaunchSpec {
            program: server.clone(),
            args: ["-m", model.to_str().unwrap(), "-c", "4096", "-t", "2", "-np", "1"].map(String::from).to_vec(),
            env: vec![],
            host: "127.0.0.1".into(),
            port,
            log_file: dir.path().join(format!("s{i}.log")),
            console_file: dir.path().join(format!("s{i}.console")),
            signal_descendant: None,
            cpus: None,
            engine: Default::default(),
        };
        let truth = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (t, s) = (truth.clone(), stop.clone());
        let mut srv = RunningServer::spawn(&spec).unwrap();
        let watcher = std::thread::spawn(move || {
            while !s.load(Ordering::Relaxed) {
                if health_ok(port) {
                    t.store(mono_ns(), Ordering::SeqCst);
                    return;
                }
            }
        });
        let client = Client::new(&spec.base_url());
        let seen = rt.block_on(srv.wait_healthy(&client, Duration::from_secs(120))).unwrap();
        // The watcher is at most one request behind; let it finish.
        std::thread::sleep(Duration::from_millis(20));
        stop.store(true, Ordering::Relaxed);
        watcher.join().unwrap();
        srv.stop(Duration::from_secs(30)).unwrap();
        let truth_ns = truth.load(Ordering::SeqCst);
        let delta_ms = (seen.mono_ns as f64 - truth_ns as f64) / 1e6;
        added.push(delta_ms);
        eprintln!("start {i}: abprof saw health {delta_ms:+.2} ms after the ground truth");
    }
    added.sort_by(|a, b| a.total_cmp(b));
    let med = added[added.len() / 2];
    let max = *added.last().unwrap();
    println!(
        "health polling (interval {} ms, {starts} cold starts): added latency median {med:.2} ms, max {max:.2} ms (target < 100 ms)",
        HEALTH_POLL.as_millis()
    );
}
