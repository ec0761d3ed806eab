//! The bounds on every count, duration and rate abprof parses, flag and study file alike
//! (docs/methodology.md §20): far above anything a study needs, low enough that a typo
//! (`--samples 4294967295`) is one line and exit 2 before anything is planned or created, instead
//! of an allocation that aborts or a deadline that overflows.

/// Samples per variant (ab, bisect, pi, trace; `max_samples` too): 10,000 cold servers a side is
/// weeks of measuring, and the plan of such a study stays a few MB.
pub(crate) const MAX_SAMPLES: u32 = 10_000;
/// The cap of an adaptive study (`max_samples` with `until_ci_pct` or `until_decided`): each of its
/// looks takes a level calibrated on simulated paths as long as the cap (docs/methodology.md §17),
/// 20,000 paths × looks in memory; 200 blocks is weeks of GPU time and keeps that to 32 MB.
pub(crate) const MAX_ADAPTIVE_SAMPLES: u32 = 200;
/// Output or prompt tokens of one request (and Pi's max_tokens and context window): 2^20, above
/// any context a llama-server model has.
pub(crate) const MAX_TOKENS: u32 = 1 << 20;
/// Requests per soak sample (docs/methodology.md §4.2): a thousand back-to-back requests heat
/// any device to its steady state many times over.
pub(crate) const MAX_SOAK_REQUESTS: u32 = 1000;
/// Any timeout, in seconds: one week. A deadline this far ahead never overflows an `Instant`.
pub(crate) const MAX_TIMEOUT_S: u64 = 7 * 24 * 3600;
/// A margin or interval half-width in % (`--mei`, `--until-ci`): a slowdown of half is no
/// longer "the same" or "precise" in any sense a study can mean, and from 100% every slowdown
/// would read "the same within the margin".
pub(crate) const MAX_MARGIN_PCT: f64 = 50.0;
/// Telemetry samples per second, before the source's own bound (methodology §9.2): no source
/// abprof reads refreshes faster than 1 kHz.
pub(crate) const MAX_TELEMETRY_HZ: u32 = 1000;
/// Consecutive idle readings the gate waits for.
pub(crate) const MAX_IDLE_SAMPLES: u32 = 10_000;
/// Milliseconds between idle-gate readings: one minute.
pub(crate) const MAX_INTERVAL_MS: u64 = 60_000;

/// `value` within `lo..=hi`, or the line that says what `what` is bounded to.
pub(crate) fn within<T: PartialOrd + std::fmt::Display>(value: T, lo: T, hi: T, what: &str) -> Result<T, String> {
    if value < lo {
        return Err(format!("{what} = {value} is below {lo}"));
    }
    if value > hi {
        return Err(format!("{what} = {value} is above {hi}, abprof's bound (docs/methodology.md §20)"));
    }
    Ok(value)
}

/// A clap parser for a `u32` flag within `lo..=hi`.
pub(crate) fn u32_flag(lo: u32, hi: u32) -> impl Fn(&str) -> Result<u32, String> + Clone + Send + Sync + 'static {
    move |s: &str| {
        let v: u64 = s.trim().parse().map_err(|_| format!("{s:?} is not a whole number from {lo} to {hi}"))?;
        bounded(v, lo as u64, hi as u64).map(|v| v as u32)
    }
}

/// A clap parser for a `u64` flag within `lo..=hi`.
pub(crate) fn u64_flag(lo: u64, hi: u64) -> impl Fn(&str) -> Result<u64, String> + Clone + Send + Sync + 'static {
    move |s: &str| {
        let v: u64 = s.trim().parse().map_err(|_| format!("{s:?} is not a whole number from {lo} to {hi}"))?;
        bounded(v, lo, hi)
    }
}

fn bounded(v: u64, lo: u64, hi: u64) -> Result<u64, String> {
    if v < lo {
        return Err(format!("{v} is below {lo}"));
    }
    if v > hi {
        return Err(format!("{v} is above {hi}, abprof's bound (docs/methodology.md §20)"));
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_and_values_are_refused_outside_their_bounds() {
        let samples = u32_flag(1, MAX_SAMPLES);
        assert_eq!(samples("3"), Ok(3));
        assert!(samples("0").unwrap_err().contains("below 1"));
        assert!(samples("4294967295").unwrap_err().contains("above 10000"));
        assert!(samples("99999999999999999999").is_err());
        assert!(samples("x").unwrap_err().contains("not a whole number"));
        assert_eq!(within(5u64, 1, MAX_TIMEOUT_S, "health_timeout_s"), Ok(5));
        let e = within(u64::MAX, 1, MAX_TIMEOUT_S, "health_timeout_s").unwrap_err();
        assert!(e.starts_with("health_timeout_s = 18446744073709551615 is above 604800"), "{e}");
    }
}
