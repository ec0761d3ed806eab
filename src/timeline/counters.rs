//! The sample's telemetry series (`telemetry.csv`, src/telemetry/csv.rs) as counter tracks: one
//! track per recorded value, placed by the `boot_ns` each reading was stamped with.
use super::event::{Event, Track};
use crate::telemetry::csv::read_series;
use crate::telemetry::Field;
use std::path::Path;

/// The process the counter tracks belong to (counters are per process in the format).
pub(crate) const TELEMETRY: Track = Track { pid: 2, tid: 0 };

/// A driver's own timestamp of its values is recorded, but is no quantity to draw.
const NOT_DRAWN: [Field; 1] = [Field::GpuStampNs];

pub(crate) struct Counters {
    pub(crate) events: Vec<Event>,
    /// Names of the tracks drawn, in column order.
    pub(crate) tracks: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
#[error("{path}: {detail}: the telemetry series is damaged; the sample's other evidence still draws without it")]
pub(crate) struct CsvError {
    path: String,
    detail: String,
}

/// Every finite value of every drawn field as one counter event, read by the series' own reader
/// (src/telemetry/csv.rs). `device` names the tracks of one device of a server on several GPUs
/// (`gpu1 power_w`, docs/methodology.md §9.11); `None` leaves a one-device sample's names as
/// they were.
pub(crate) fn from_csv(path: &Path, device: Option<u32>) -> Result<Counters, CsvError> {
    let err = |detail: String| CsvError { path: path.display().to_string(), detail };
    // The reader stands the monotonic clock in for a missing boottime one; a timeline placed on
    // CLOCK_BOOTTIME beside kernels cannot.
    let header =
        std::io::BufRead::lines(std::io::BufReader::new(std::fs::File::open(path).map_err(|e| err(e.to_string()))?))
            .next()
            .transpose()
            .map_err(|e| err(e.to_string()))?
            .unwrap_or_default();
    if !header.split(',').any(|h| h.trim() == "boot_ns") {
        return Err(err("no boot_ns column".into()));
    }
    let rows = read_series(path).map_err(|e| err(e.to_string()))?;
    let drawn: Vec<Field> = Field::ALL.iter().copied().filter(|f| !NOT_DRAWN.contains(f)).collect();
    let names: Vec<String> = drawn
        .iter()
        .map(|f| match device {
            Some(d) => format!("gpu{d} {}", f.name()),
            None => f.name().to_string(),
        })
        .collect();
    let mut seen = vec![false; drawn.len()];
    let mut events = Vec::new();
    for row in &rows {
        for (k, &f) in drawn.iter().enumerate() {
            if let Some(v) = row.reading.get(f) {
                seen[k] = true;
                events.push(TELEMETRY.counter(names[k].clone(), f.unit(), row.at.boot_ns as i64, v));
            }
        }
    }
    let tracks = names.into_iter().zip(&seen).filter(|(_, s)| **s).map(|(n, _)| n).collect();
    Ok(Counters { events, tracks })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A real series of the CPU test bed (tests/fixtures/evidence-pre-engine): the server's CPU,
    /// empty in the first row (a rate needs two reads).
    #[test]
    fn a_real_series_becomes_one_track_per_recorded_value() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/evidence-pre-engine/study/samples/001-f16/telemetry.csv");
        let c = from_csv(&path, None).unwrap();
        assert_eq!(c.tracks, ["cpu_pct"]);
        let rows = std::fs::read_to_string(&path).unwrap().lines().count() - 1;
        assert_eq!(c.events.len(), rows - 1, "every row but the first has a value");
        let first = serde_json::to_value(&c.events[0]).unwrap();
        assert_eq!(first["args"].as_object().unwrap().keys().collect::<Vec<_>>(), ["%"]);
        assert_eq!(first["ts"].as_f64(), Some(1795416047.735));
        assert!(c.events.windows(2).all(|w| w[0].ts <= w[1].ts));
    }

    /// One device of a server on several GPUs (docs/methodology.md §9.11): its tracks are named
    /// by its index, so two devices' series stand apart on one time axis.
    #[test]
    fn a_devices_series_is_named_by_its_index() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/evidence-pre-engine/study/samples/001-f16/telemetry.csv");
        let c = from_csv(&path, Some(1)).unwrap();
        assert_eq!(c.tracks, ["gpu1 cpu_pct"]);
        assert_eq!(serde_json::to_value(&c.events[0]).unwrap()["name"], "gpu1 cpu_pct");
    }

    #[test]
    fn a_series_without_boottime_is_refused_with_its_name() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("telemetry.csv");
        std::fs::write(&p, "mono_ns,power_w\n1,2\n").unwrap();
        let e = from_csv(&p, None).err().unwrap().to_string();
        assert!(e.contains("no boot_ns column") && e.contains("telemetry.csv"), "{e}");
    }
}
