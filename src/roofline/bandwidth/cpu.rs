//! Host memory bandwidth by a multi-threaded streaming read of a buffer far larger than the
//! last-level cache (docs/methodology.md §18).
use super::types::BandwidthError;
use std::time::Instant;

/// The read kernel is glibc's `memchr` for a byte that is not there: a vectorised, read-only
/// pass over every byte whatever abprof's own optimisation level (a debug build's loop would
/// measure the loop, not the memory).
fn stream_read(chunk: &[u8]) -> usize {
    // SAFETY: the pointer and length describe one live, initialised slice.
    let hit = unsafe { nix::libc::memchr(chunk.as_ptr().cast(), 0, chunk.len()) };
    std::hint::black_box(hit) as usize
}

/// The largest last-level cache sysfs lists for CPU 0, in bytes.
pub(crate) fn last_level_cache_bytes() -> Option<u64> {
    let dir = std::fs::read_dir("/sys/devices/system/cpu/cpu0/cache").ok()?;
    dir.flatten()
        .filter_map(|e| std::fs::read_to_string(e.path().join("size")).ok())
        .filter_map(|s| parse_cache_size(s.trim()))
        .max()
}

fn parse_cache_size(s: &str) -> Option<u64> {
    let (digits, mult) = match s.chars().last()? {
        'K' => (&s[..s.len() - 1], 1u64 << 10),
        'M' => (&s[..s.len() - 1], 1 << 20),
        'G' => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    digits.parse::<u64>().ok().map(|n| n * mult)
}

fn mem_available_bytes() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    line.split_whitespace().nth(1)?.parse::<u64>().ok().map(|kib| kib * 1024)
}

/// At least 512 MiB and 8 × the last-level cache, at most a quarter of the available memory.
pub(crate) fn buffer_bytes() -> u64 {
    let want = (512u64 << 20).max(8 * last_level_cache_bytes().unwrap_or(0));
    let cap = mem_available_bytes().map_or(want, |m| m / 4);
    want.min(cap).max(64 << 20)
}

/// One measurement: `reps` passes of `threads` threads over `bytes`, each thread over its own
/// slice that it first touched (so its pages sit near it). GB/s (10⁹ bytes) of each pass.
pub(crate) fn measure(threads: u32, bytes: u64, reps: u32) -> Result<Vec<f64>, BandwidthError> {
    let threads = threads.max(1) as usize;
    let chunk = (bytes as usize / threads) & !4095;
    if chunk == 0 {
        return Err(BandwidthError::Cpu(format!("a buffer of {bytes} bytes is too small for {threads} threads")));
    }
    // Allocated zeroed (calloc), so untouched: each thread's fill below is the first touch of
    // its pages. The size is at most a quarter of the available memory (`buffer_bytes`).
    let mut buffer = vec![0u8; chunk * threads];
    std::thread::scope(|s| {
        for part in buffer.chunks_mut(chunk) {
            s.spawn(move || part.fill(1));
        }
    });
    let mut passes = Vec::with_capacity(reps as usize);
    // One untimed pass first: page-table and TLB warm-up belong to no pass.
    for rep in 0..=reps {
        let t0 = Instant::now();
        let found: usize = std::thread::scope(|s| {
            let handles: Vec<_> = buffer.chunks(chunk).map(|part| s.spawn(move || stream_read(part))).collect();
            handles.into_iter().map(|h| h.join().unwrap_or(1)).sum()
        });
        let secs = t0.elapsed().as_secs_f64();
        if found != 0 {
            return Err(BandwidthError::Cpu("the streaming read found a byte it never wrote".into()));
        }
        if rep > 0 {
            passes.push(buffer.len() as f64 / secs / 1e9);
        }
    }
    Ok(passes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_sizes_parse_as_sysfs_writes_them() {
        assert_eq!(parse_cache_size("32768K"), Some(32 << 20));
        assert_eq!(parse_cache_size("1M"), Some(1 << 20));
        assert_eq!(parse_cache_size("64"), Some(64));
        assert_eq!(parse_cache_size("x"), None);
    }

    #[test]
    fn a_small_read_gives_a_positive_rate_per_pass() {
        let passes = measure(2, 8 << 20, 3).unwrap();
        assert_eq!(passes.len(), 3);
        assert!(passes.iter().all(|g| g.is_finite() && *g > 0.0), "{passes:?}");
    }
}
