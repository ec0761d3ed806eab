//! The sampler reading several devices (docs/methodology.md §9.11): two amdgpu cards made from the
//! recorded dGPU fixture tree, copied to tmpfs (/dev/shm), read at 1 kHz by default. Three ways,
//! alternating so drifting load on a shared host hits all alike:
//!   one    one sampler thread on one card (the single-device path);
//!   two    one sampler thread reading both cards at each deadline (what a study does);
//!   split  two sampler threads, one card each (what one thread saves).
//! It prints, per way, the median over the rounds of the sampler threads' CPU per deadline and
//! its ratio to `one`, and the second card's lateness behind its deadline.
//!
//!   cargo bench --bench sampler_devices [-- SECONDS_PER_RUN [ROUNDS [HZ]]]
use std::path::Path;
use std::time::Duration;

use abprof::telemetry::amdgpu_sysfs::AmdgpuSysfs;
use abprof::telemetry::sampler::{Finished, Sampler, SamplerConfig};
use abprof::telemetry::TelemetrySource;

#[path = "support/tree.rs"]
mod tree;
use tree::copy_tree;

/// Sampler-thread CPU µs per deadline, summed over the threads, and the last track's p99 lateness.
fn cost(runs: &[Finished]) -> (f64, f64) {
    let cpu_s: f64 = runs.iter().map(|f| f.first().series.stats.thread_cpu_s).sum();
    let deadlines = runs[0].first().series.stats.reads.max(1) as f64;
    let last = runs.last().unwrap().tracks.last().unwrap();
    (1e6 * cpu_s / deadlines, last.series.stats.jitter.p99_us)
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with("--")).collect();
    let seconds: f64 = args.first().and_then(|s| s.parse().ok()).unwrap_or(3.0);
    let rounds: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(3);
    let hz: f64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1000.0);
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sysfs/dgpu-v1_3/class/drm/card0");
    let shm =
        tempfile::Builder::new().prefix("abprof-bench-").tempdir_in("/dev/shm").expect("/dev/shm is writable tmpfs");
    for card in ["card0", "card1"] {
        copy_tree(&fixture, &shm.path().join("class/drm").join(card)).expect("copying the fixture tree");
    }
    let card = |i: u32| -> Box<dyn TelemetrySource> {
        Box::new(AmdgpuSysfs::open(shm.path(), i).expect("the copied tree has two amdgpu cards"))
    };
    let keep = (hz * seconds * 1.1) as usize + 16;
    let run = |sources: Vec<Box<dyn TelemetrySource>>| -> Finished {
        let s = Sampler::start_on(sources, SamplerConfig::new(hz, keep)).expect("sampler thread starts");
        std::thread::sleep(Duration::from_secs_f64(seconds));
        s.stop()
    };
    println!("sampler_devices: two amdgpu cards (dgpu-v1_3) at {hz} Hz, {rounds} rounds of {seconds} s per way");
    let (mut one, mut two, mut split) = (Vec::new(), Vec::new(), Vec::new());
    let (mut late_two, mut late_split) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        one.push(cost(&[run(vec![card(0)])]).0);
        let (c, l) = cost(&[run(vec![card(0), card(1)])]);
        two.push(c);
        late_two.push(l);
        let halves: Vec<Sampler> = (0..2)
            .map(|i| Sampler::start_on(vec![card(i)], SamplerConfig::new(hz, keep)).expect("sampler thread starts"))
            .collect();
        std::thread::sleep(Duration::from_secs_f64(seconds));
        let done: Vec<Finished> = halves.into_iter().map(Sampler::stop).collect();
        let (c, l) = cost(&done);
        split.push(c);
        late_split.push(l);
    }
    let (one, two, split) = (median(&mut one), median(&mut two), median(&mut split));
    println!("one card, one thread:    {one:.2} µs of sampler CPU per deadline (×1.00)");
    println!(
        "two cards, one thread:   {two:.2} µs (×{:.2}); second card's p99 lateness {:.1} µs",
        two / one,
        median(&mut late_two)
    );
    println!(
        "two cards, two threads:  {split:.2} µs (×{:.2}); second card's p99 lateness {:.1} µs",
        split / one,
        median(&mut late_split)
    );
}
