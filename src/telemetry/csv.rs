//! A telemetry series as CSV: one row per sample, one column per `Field`, empty where absent.
use std::io::{self, Write};

use super::sampler::TelemetrySample;
use super::{DriverPowerSample, Field};

pub(crate) fn write_header(w: &mut impl Write) -> io::Result<()> {
    write!(w, "mono_ns,boot_ns,late_us")?;
    for f in Field::ALL {
        write!(w, ",{}", f.name())?;
    }
    writeln!(w)
}

pub(crate) fn write_row(w: &mut impl Write, s: &TelemetrySample) -> io::Result<()> {
    write!(w, "{},{},{:.1}", s.at.mono_ns, s.at.boot_ns, s.late_ns as f64 / 1e3)?;
    for &f in Field::ALL {
        match s.reading.get(f) {
            Some(v) => write!(w, ",{v}")?,
            None => write!(w, ",")?,
        }
    }
    writeln!(w)
}

/// The driver's own power samples (NVML's 20 ms buffer) as a separate CSV.
pub(crate) fn write_driver_power(w: &mut impl Write, samples: &[DriverPowerSample]) -> io::Result<()> {
    writeln!(w, "mono_ns,driver_us,power_w")?;
    for s in samples {
        writeln!(w, "{},{},{}", s.mono_ns, s.driver_us, s.power_w)?;
    }
    Ok(())
}

/// Why a series file could not be read back.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SeriesReadError {
    #[error("cannot read {path}: {detail}")]
    Read { path: std::path::PathBuf, detail: String },
    #[error("{path}: no mono_ns column: not a telemetry series written by abprof")]
    NoClock { path: std::path::PathBuf },
}

/// Reads a series written by [`write_header`] and [`write_row`], columns by name, so a series
/// of a release with fewer or more fields still reads (unknown columns are skipped, missing ones
/// stay `None`). A row whose clock does not parse is skipped; a value that does not parse is
/// `None`, never zero.
pub(crate) fn read_series(path: &std::path::Path) -> Result<Vec<TelemetrySample>, SeriesReadError> {
    let err = |e: &dyn std::fmt::Display| SeriesReadError::Read { path: path.into(), detail: e.to_string() };
    let mut r = ::csv::ReaderBuilder::new().flexible(true).from_path(path).map_err(|e| err(&e))?;
    let header: Vec<String> = r.headers().map_err(|e| err(&e))?.iter().map(String::from).collect();
    let col = |name: &str| header.iter().position(|h| h == name);
    let mono = col("mono_ns").ok_or_else(|| SeriesReadError::NoClock { path: path.into() })?;
    let (boot, late) = (col("boot_ns"), col("late_us"));
    let fields: Vec<(usize, Field)> = Field::ALL.iter().filter_map(|&f| col(f.name()).map(|i| (i, f))).collect();
    let mut out = Vec::new();
    for row in r.records() {
        let row = row.map_err(|e| err(&e))?;
        let num = |i: usize| row.get(i).and_then(|v| v.trim().parse::<f64>().ok()).filter(|v| v.is_finite());
        let Some(mono_ns) = row.get(mono).and_then(|v| v.trim().parse::<u64>().ok()) else { continue };
        let boot_ns = boot.and_then(|i| row.get(i)).and_then(|v| v.trim().parse::<u64>().ok()).unwrap_or(mono_ns);
        let mut reading = super::Reading::default();
        for &(i, f) in &fields {
            reading.set(f, num(i));
        }
        out.push(TelemetrySample {
            at: crate::clock::Stamp { mono_ns, boot_ns },
            late_ns: late.and_then(num).map_or(0, |us| (us * 1e3) as u64),
            reading,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_written_series_reads_back_by_column_name() {
        let samples = vec![
            TelemetrySample {
                at: crate::clock::Stamp { mono_ns: 10, boot_ns: 12 },
                late_ns: 1500,
                reading: super::super::Reading { power_w: Some(80.5), cpu_pct: Some(190.0), ..Default::default() },
            },
            TelemetrySample {
                at: crate::clock::Stamp { mono_ns: 20, boot_ns: 22 },
                late_ns: 0,
                reading: super::super::Reading { gfx_clock_mhz: Some(1800.0), ..Default::default() },
            },
        ];
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("telemetry.csv");
        let mut buf = Vec::new();
        write_header(&mut buf).unwrap();
        for s in &samples {
            write_row(&mut buf, s).unwrap();
        }
        std::fs::write(&path, &buf).unwrap();
        let back = read_series(&path).unwrap();
        assert_eq!(back.len(), 2);
        assert_eq!(back[0].reading, samples[0].reading);
        assert_eq!(back[1].reading, samples[1].reading);
        assert_eq!((back[0].at, back[0].late_ns), (samples[0].at, 1500));

        // An older release's columns: a subset, in another order, one unknown.
        std::fs::write(&path, "cpu_pct,mono_ns,retired\n42.5,7,x\n,8,\nbad,nope,\n").unwrap();
        let back = read_series(&path).unwrap();
        assert_eq!(back.len(), 2, "the row whose clock does not parse is skipped");
        assert_eq!(back[0].reading.cpu_pct, Some(42.5));
        assert_eq!(back[1].reading, super::super::Reading::default());
        std::fs::write(&path, "a,b\n1,2\n").unwrap();
        assert!(read_series(&path).unwrap_err().to_string().contains("no mono_ns column"));
    }
}
