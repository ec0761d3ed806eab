//! What one power value of a source measures (docs/methodology.md §9.7): whose power (a GPU's
//! board or socket, an APU's whole socket with its CPU, the GPU engine alone), read as it is now
//! or as a device average, and the firmware filter behind an average where the table gives one.
//! Every power and energy figure names the field it came from, because an integral of a filtered
//! socket power and a counter of GPU energy are not the same measurement.
use serde::{Deserialize, Serialize};

use super::Field;

/// Whose power a value is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PowerScope {
    /// The whole board of a discrete GPU (NVML).
    GpuBoard,
    /// A discrete GPU's package (amdgpu's "socket power").
    GpuSocket,
    /// An APU's whole package: CPU, GPU and the rest of the SoC.
    ApuSocket,
    /// The GPU engine alone (an APU table's gfx power).
    Gfx,
}

/// How the device produced the value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PowerKind {
    /// The value now (the firmware's shortest window).
    Instant,
    /// A device-side average (a firmware filter, a 1 s window).
    Average,
}

/// One power value of a source, named.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PowerField {
    /// The reading field it fills (`power_w`, `power_avg_w`, `gfx_power_w`).
    pub field: Field,
    /// Where it is read, e.g. `hwmon power1_input`, `gpu_metrics average_socket_power`.
    pub origin: String,
    pub scope: PowerScope,
    pub kind: PowerKind,
    /// The time constant of the firmware's filter behind an average, where the table gives one
    /// (gpu_metrics v3_0 `time_filter_alphavalue`), in ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filter_ms: Option<f64>,
}

impl PowerField {
    pub(crate) fn new(
        field: Field,
        origin: &str,
        scope: PowerScope,
        kind: PowerKind,
        filter_ms: Option<f64>,
    ) -> PowerField {
        PowerField { field, origin: origin.into(), scope, kind, filter_ms }
    }

    /// e.g. "APU socket power (CPU and GPU), firmware average (filter 10.0 ms), gpu_metrics
    /// average_socket_power".
    pub(crate) fn words(&self) -> String {
        let scope = match self.scope {
            PowerScope::GpuBoard => "GPU board power",
            PowerScope::GpuSocket => "GPU socket power",
            PowerScope::ApuSocket => "APU socket power (CPU and GPU)",
            PowerScope::Gfx => "GPU-only (gfx) power",
        };
        let kind = match (self.kind, self.filter_ms) {
            (PowerKind::Instant, _) => "instantaneous".to_string(),
            (PowerKind::Average, Some(ms)) => format!("firmware average (filter {ms:.1} ms)"),
            (PowerKind::Average, None) => "device average".to_string(),
        };
        format!("{scope}, {kind}, {}", self.origin)
    }

    /// The named field among `fields` that fills `field`.
    pub(crate) fn of(fields: &[PowerField], field: Field) -> Option<&PowerField> {
        fields.iter().find(|p| p.field == field)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_field_says_whose_power_how_averaged_and_where_from() {
        let socket = PowerField::new(
            Field::PowerAvgW,
            "gpu_metrics average_socket_power",
            PowerScope::ApuSocket,
            PowerKind::Average,
            Some(10.0),
        );
        assert_eq!(
            socket.words(),
            "APU socket power (CPU and GPU), firmware average (filter 10.0 ms), gpu_metrics average_socket_power"
        );
        let nvml = PowerField::new(Field::PowerW, "NVML field 186", PowerScope::GpuBoard, PowerKind::Instant, None);
        assert_eq!(nvml.words(), "GPU board power, instantaneous, NVML field 186");
        let all = [socket.clone(), nvml];
        assert_eq!(PowerField::of(&all, Field::PowerAvgW), Some(&socket));
        assert_eq!(PowerField::of(&all, Field::GfxPowerW), None);
    }
}
