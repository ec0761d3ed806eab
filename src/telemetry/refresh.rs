//! How often a source's values really change, measured when a study starts (docs/methodology.md
//! §9.2), not assumed: amdgpu caches its gpu_metrics table for 5 ms (8 ms at HZ=250), NVML
//! refreshes power every 100 ms, and a read faster than the refresh only repeats a value while it
//! costs the CPU the server shares. The study's rate is bounded by what was measured.
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::sampler::TelemetrySample;
use super::{Field, TelemetrySource};
use crate::clock::Stamp;

/// The fields whose changes date a refresh, best first: the table's own timestamp, then the
/// counters and power values that move with every refresh under load.
const CLOCKS: [Field; 5] = [Field::GpuStampNs, Field::EnergyJ, Field::PowerW, Field::PowerAvgW, Field::GfxPowerW];

/// How long the probe reads, and how fast.
pub(crate) const PROBE: Duration = Duration::from_millis(300);
pub(crate) const PROBE_HZ: f64 = 1000.0;

/// The refresh a probe measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Refresh {
    /// The field whose distinct values were counted.
    pub field: Field,
    /// Distinct values of it per second.
    pub distinct_per_s: f64,
    /// The mean time between two of them, ms.
    pub interval_ms: f64,
    pub probe_hz: f64,
    pub probe_s: f64,
}

impl Refresh {
    /// The mean time between changes of the best field in `samples` (read over `wall_s` at `hz`),
    /// from its first change to its last; `None` where no field changed twice (an idle device
    /// whose power sits still).
    pub(crate) fn of(samples: &[TelemetrySample], wall_s: f64, hz: f64) -> Option<Refresh> {
        CLOCKS.iter().find_map(|&field| {
            // The reads at which the value changed: the first and last bracket whole refreshes.
            let mut last = None;
            let mut changed_at = Vec::new();
            for s in samples {
                let Some(v) = s.reading.get(field) else { continue };
                if last.is_some_and(|l| l != v) {
                    changed_at.push(s.at.mono_ns);
                }
                last = Some(v);
            }
            let (first, end) = (*changed_at.first()?, *changed_at.last()?);
            let intervals = changed_at.len().checked_sub(1).filter(|n| *n >= 1 && end > first)?;
            let interval_ms = (end - first) as f64 / 1e6 / intervals as f64;
            Some(Refresh { field, distinct_per_s: 1000.0 / interval_ms, interval_ms, probe_hz: hz, probe_s: wall_s })
        })
    }

    /// The study's rate within this refresh: `requested`, or the measured rate (rounded up) with
    /// one line saying why, where `requested` is above it.
    pub(crate) fn bound(&self, requested: u32) -> (u32, Option<String>) {
        let most = self.distinct_per_s.ceil().max(1.0) as u32;
        if requested <= most {
            return (requested, None);
        }
        let line = format!(
            "--telemetry-hz {requested} is above the source's measured refresh ({:.0} new {} values/s, one every {:.1} ms): sampling at {most} Hz (docs/methodology.md §9.2)",
            self.distinct_per_s,
            self.field.name(),
            self.interval_ms
        );
        (most, Some(line))
    }

    /// For host.json's telemetry line.
    pub(crate) fn words(&self) -> String {
        format!(
            "refresh measured at start: one new {} every {:.1} ms ({:.0}/s over {:.1} s at {:.0} Hz)",
            self.field.name(),
            self.interval_ms,
            self.distinct_per_s,
            self.probe_s,
            self.probe_hz
        )
    }
}

/// Reads `source` for [`PROBE`] at about [`PROBE_HZ`] and measures its refresh. A read that fails
/// is left out.
pub(crate) fn measure(source: &mut dyn TelemetrySource) -> Option<Refresh> {
    let period = Duration::from_secs_f64(1.0 / PROBE_HZ);
    let start = std::time::Instant::now();
    let mut samples = Vec::with_capacity((PROBE.as_secs_f64() * PROBE_HZ) as usize + 16);
    while start.elapsed() < PROBE {
        if let Ok(reading) = source.read() {
            samples.push(TelemetrySample { at: Stamp::now(), late_ns: 0, reading });
        }
        std::thread::sleep(period);
    }
    Refresh::of(&samples, start.elapsed().as_secs_f64(), samples.len() as f64 / start.elapsed().as_secs_f64())
}

/// A study's telemetry rate and description: the source's refresh measured, the rate bounded by
/// it (with the line that says so), the measurement added to the description host.json keeps.
pub(crate) fn study_rate(
    source: Box<dyn TelemetrySource>,
    requested_hz: u32,
    description: String,
) -> (Box<dyn TelemetrySource>, u32, String, Option<String>) {
    let mut source = source;
    let refresh = measure(source.as_mut());
    match refresh {
        Some(r) => {
            let (hz, line) = r.bound(requested_hz);
            (source, hz, format!("{description}; {}", r.words()), line)
        }
        None => (
            source,
            requested_hz,
            format!(
                "{description}; refresh not measured at start (no value changed twice in {} ms)",
                PROBE.as_millis()
            ),
            None,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::telemetry::Reading;

    /// A table read at 1 kHz whose timestamp moves every 8 ms (the 5 ms cache at HZ=250).
    fn cached_table(ms: u64) -> Vec<TelemetrySample> {
        (0..ms)
            .map(|t| TelemetrySample {
                at: Stamp { mono_ns: t * 1_000_000, boot_ns: t * 1_000_000 },
                late_ns: 0,
                reading: Reading {
                    gpu_stamp_ns: Some((t / 8 * 8) as f64 * 1e6),
                    power_w: Some(100.0),
                    ..Reading::default()
                },
            })
            .collect()
    }

    #[test]
    fn the_tables_own_timestamp_dates_its_refresh_and_bounds_the_rate() {
        let r = Refresh::of(&cached_table(800), 0.8, 1000.0).unwrap();
        assert_eq!(r.field, Field::GpuStampNs);
        assert!((r.interval_ms - 8.0).abs() < 1e-9, "{r:?}");
        assert!((r.distinct_per_s - 125.0).abs() < 1e-9, "{r:?}");
        let (hz, line) = r.bound(1000);
        assert_eq!(hz, 125);
        let line = line.unwrap();
        assert!(line.contains("--telemetry-hz 1000") && line.contains("sampling at 125 Hz"), "{line}");
        assert_eq!(r.bound(100), (100, None));
        assert!(r.words().contains("every 8.0 ms"), "{}", r.words());
    }

    #[test]
    fn a_source_that_never_changes_measures_nothing() {
        let mut flat = cached_table(100);
        flat.iter_mut().for_each(|s| s.reading.gpu_stamp_ns = None);
        assert_eq!(Refresh::of(&flat, 0.1, 1000.0), None);
    }
}
