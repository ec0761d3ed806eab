//! Driver dead time per sample: everything but the server's start-up-to-health and the request
//! itself, on the real test bed (2 variants × N samples, 300-token prompt, 32 output tokens).
//! Breaks it into the idle gate, the server's own exit after SIGTERM, and abprof's remainder.
//!
//! cargo bench --bench driver_overhead [-- SAMPLES]
#[path = "testbed.rs"]
mod testbed;

use abprof::study::evidence::{AttemptStatus, OrderEntry};
use abprof::study::file::{IdleGate, Isolation, StudyFile};
use abprof::study::run_ab;

/// Median (the summary's, so both report one figure), p90 and max.
fn stats(mut v: Vec<f64>) -> (f64, f64, f64) {
    v.sort_by(|a, b| a.total_cmp(b));
    let median = abprof::stats::median(&v).expect("at least one sample");
    (median, v[(v.len() as f64 * 0.9) as usize].min(*v.last().unwrap()), *v.last().unwrap())
}

fn main() {
    let samples: u32 = std::env::args().skip(1).find_map(|a| a.parse().ok()).unwrap_or(5);
    let server = testbed::var("LLAMA_SERVER");
    let dir = tempfile::tempdir().unwrap();
    let file = StudyFile {
        kind: abprof::study::file::StudyKind::Ab,
        name: Some("driver overhead".into()),
        model: testbed::var("TARGET_MODEL"),
        server_args: "-c 4096 -t 2 -np 1".into(),
        tokens: 32,
        workload: None,
        soak_requests: None,
        samples,
        variants: vec![format!("a={}", server.display()), format!("b={}|extra=--no-warmup", server.display())],
        prompt: None,
        prompt_tokens: Some(300),
        ignore_eos: true,
        pure_decode: false,
        port: None,
        server_cpus: None,
        order_seed: None,
        health_timeout_s: 120,
        stall_timeout_s: 120,
        stop_timeout_s: 60,
        telemetry: abprof::telemetry::SourceKind::None,
        telemetry_hz: 100,
        idle: IdleGate::default(),
        isolation: Isolation::default(),
        until_ci_pct: None,
        until_decided: false,
        mei_pct: None,
        sweep_family: None,
        retakes: None,
        max_samples: None,
        sweep: None,
        llama_bench: None,
    };
    let root = dir.path().join("study");
    let run = run_ab(&file, &root, false, None).expect("study");
    // Finished samples only, as the summary's dead_time_ms_median counts them.
    let order: Vec<OrderEntry> = run.evidence.order().into_iter().filter(|o| o.status == AttemptStatus::Ok).collect();
    let col = |f: fn(&OrderEntry) -> f64| stats(order.iter().map(f).collect());
    let (dead, gate, stop) =
        (col(|o| o.timeline.dead_ms), col(|o| o.timeline.idle_gate_ms), col(|o| o.timeline.stop_ms));
    let own = col(|o| o.timeline.dead_ms - o.timeline.idle_gate_ms - o.timeline.stop_ms);
    let (startup, request) = (col(|o| o.timeline.startup_ms), col(|o| o.timeline.request_ms));
    println!("{} samples; ms per sample: median / p90 / max", order.len());
    println!("  driver dead time          {:7.1} {:7.1} {:7.1}   (target < 100 ms)", dead.0, dead.1, dead.2);
    println!("    idle gate (10 × 2 ms)   {:7.1} {:7.1} {:7.1}", gate.0, gate.1, gate.2);
    println!(
        "    server exit after TERM  {:7.1} {:7.1} {:7.1}   (llama-server's own shutdown)",
        stop.0, stop.1, stop.2
    );
    println!("    abprof's own work       {:7.1} {:7.1} {:7.1}", own.0, own.1, own.2);
    println!("  (excluded) start-up       {:7.1} {:7.1} {:7.1}", startup.0, startup.1, startup.2);
    println!("  (excluded) request        {:7.1} {:7.1} {:7.1}", request.0, request.1, request.2);
}
