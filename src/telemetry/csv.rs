//! A telemetry series as CSV: one row per sample, one column per `Field`, empty where absent.
use std::io::{self, Write};

use super::sampler::Sample;
use super::{DriverPowerSample, Field};

pub(crate) fn write_header(w: &mut impl Write) -> io::Result<()> {
    write!(w, "mono_ns,boot_ns,late_us")?;
    for f in Field::ALL {
        write!(w, ",{}", f.name())?;
    }
    writeln!(w)
}

pub(crate) fn write_row(w: &mut impl Write, s: &Sample) -> io::Result<()> {
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
