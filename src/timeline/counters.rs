//! The sample's telemetry series (`telemetry.csv`, src/telemetry/csv.rs) as counter tracks: one
//! track per recorded value, placed by the `boot_ns` each reading was stamped with.
use super::event::{Event, Track};
use crate::telemetry::Field;
use std::path::Path;

/// The process the counter tracks belong to (counters are per process in the format).
pub(crate) const TELEMETRY: Track = Track { pid: 2, tid: 0 };

/// Columns that are not a quantity to draw: the stamps, the read's lateness, and the driver's
/// own timestamp of its values.
const NOT_DRAWN: [&str; 4] = ["mono_ns", "boot_ns", "late_us", "gpu_stamp_ns"];

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

/// Every non-empty, finite cell of every drawn column as one counter event.
pub(crate) fn from_csv(path: &Path) -> Result<Counters, CsvError> {
    let err = |detail: String| CsvError { path: path.display().to_string(), detail };
    let mut reader = csv::Reader::from_path(path).map_err(|e| err(e.to_string()))?;
    let header: Vec<String> = reader.headers().map_err(|e| err(e.to_string()))?.iter().map(String::from).collect();
    let Some(boot_col) = header.iter().position(|h| h == "boot_ns") else {
        return Err(err("no boot_ns column".into()));
    };
    let drawn: Vec<(usize, &str, &'static str)> = header
        .iter()
        .enumerate()
        .filter(|(_, h)| !NOT_DRAWN.contains(&h.as_str()))
        .map(|(i, h)| (i, h.as_str(), Field::ALL.iter().find(|f| f.name() == h).map_or("value", |f| f.unit())))
        .collect();
    let mut seen = vec![false; header.len()];
    let mut events = Vec::new();
    for (line, row) in reader.records().enumerate() {
        let row = row.map_err(|e| err(e.to_string()))?;
        let at: i64 = row
            .get(boot_col)
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| err(format!("row {} has no boot_ns", line + 2)))?;
        for &(col, name, unit) in &drawn {
            let Some(v) = row.get(col).filter(|c| !c.is_empty()).and_then(|c| c.parse::<f64>().ok()) else { continue };
            if v.is_finite() {
                seen[col] = true;
                events.push(TELEMETRY.counter(name.to_string(), unit, at, v));
            }
        }
    }
    let tracks = drawn.iter().filter(|(col, ..)| seen[*col]).map(|(_, name, _)| name.to_string()).collect();
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
        let c = from_csv(&path).unwrap();
        assert_eq!(c.tracks, ["cpu_pct"]);
        let rows = std::fs::read_to_string(&path).unwrap().lines().count() - 1;
        assert_eq!(c.events.len(), rows - 1, "every row but the first has a value");
        let first = serde_json::to_value(&c.events[0]).unwrap();
        assert_eq!(first["args"].as_object().unwrap().keys().collect::<Vec<_>>(), ["%"]);
        assert_eq!(first["ts"].as_f64(), Some(1795416047.735));
        assert!(c.events.windows(2).all(|w| w[0].ts <= w[1].ts));
    }

    #[test]
    fn a_series_without_boottime_is_refused_with_its_name() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("telemetry.csv");
        std::fs::write(&p, "mono_ns,power_w\n1,2\n").unwrap();
        let e = from_csv(&p).err().unwrap().to_string();
        assert!(e.contains("no boot_ns column") && e.contains("telemetry.csv"), "{e}");
    }
}
