//! The one record every backend fills: a fixed set of optional values in fixed units.
use serde::{Deserialize, Serialize};

// One list of fields drives the struct, the `Field` enum, names, units and CSV columns, so adding
// a field cannot leave one of them behind.
macro_rules! reading_fields {
    ($( $(#[doc = $doc:literal])* $variant:ident $name:ident $unit:literal ),* $(,)?) => {
        /// One reading of a telemetry source. `None` = this source does not provide the value (or
        /// the device reported it as unsupported); it is never a stand-in for zero.
        #[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
        pub struct Reading {
            $( $(#[doc = $doc])*
               #[serde(default, skip_serializing_if = "Option::is_none")]
               pub $name: Option<f64>, )*
        }

        /// Names one value of a `Reading`, for per-field statistics and table columns.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(rename_all = "snake_case")]
        pub enum Field { $( $variant, )* }

        impl Field {
            pub(crate) const ALL: &'static [Field] = &[ $( Field::$variant, )* ];

            /// The field's name in JSON, CSV and reports.
            pub(crate) fn name(self) -> &'static str {
                match self { $( Field::$variant => stringify!($name), )* }
            }

            pub(crate) fn unit(self) -> &'static str {
                match self { $( Field::$variant => $unit, )* }
            }
        }

        impl Reading {
            pub(crate) fn get(&self, field: Field) -> Option<f64> {
                match field { $( Field::$variant => self.$name, )* }
            }

            pub(crate) fn set(&mut self, field: Field, value: Option<f64>) {
                match field { $( Field::$variant => self.$name = value, )* }
            }
        }
    };
}

reading_fields! {
    /// GPU busy: NVML utilization.gpu, amdgpu `gpu_busy_percent`, ROCm SMI busy percent.
    BusyPct busy_pct "%",
    /// Memory-controller busy (NVML utilization.memory, amdgpu `mem_busy_percent`).
    MemBusyPct mem_busy_pct "%",
    /// Power now: NVML instant field 186, hwmon `power1_input` (on an APU the firmware's filtered
    /// socket power, its power field says so: docs/methodology.md §9.7), ROCm SMI current socket
    /// power. Phases use this one.
    PowerW power_w "W",
    /// Power averaged by the device: NVML `GetPowerUsage` (1 s on Ampere+), hwmon
    /// `power1_average`, gpu_metrics average_socket_power. A cross-check, too smooth for phases.
    PowerAvgW power_avg_w "W",
    /// GPU-only power on APUs, where socket power includes the CPU (gpu_metrics v2/v3
    /// average_gfx_power).
    GfxPowerW gfx_power_w "W",
    /// Energy counter (NVML total energy, gpu_metrics energy_accumulator × 2⁻¹⁶ J, ROCm SMI
    /// energy count × resolution). Only differences are meaningful; the origin is arbitrary.
    EnergyJ energy_j "J",
    /// The main GPU temperature: NVML GPU die, amdgpu edge (hwmon temp1), APU gfx.
    TempGpuC temp_gpu_c "°C",
    /// Junction/hotspot temperature (amdgpu temp2 "junction").
    TempHotspotC temp_hotspot_c "°C",
    /// Memory (VRAM/HBM) temperature (amdgpu temp3 "mem").
    TempMemC temp_mem_c "°C",
    /// Graphics/SM clock now.
    GfxClockMhz gfx_clock_mhz "MHz",
    /// Memory clock now.
    MemClockMhz mem_clock_mhz "MHz",
    VramUsedBytes vram_used_bytes "B",
    /// GTT (system memory mapped for the GPU); what an APU's model mostly lives in.
    GttUsedBytes gtt_used_bytes "B",
    /// CPU use of one process, in % of one core, since the previous read.
    CpuPct cpu_pct "%",
    /// The driver's own timestamp of the values (gpu_metrics system_clock_counter,
    /// CLOCK_BOOTTIME ns). Its change interval is the true refresh rate of the metrics table.
    GpuStampNs gpu_stamp_ns "ns",
    /// gpu_metrics average_gfx_activity exactly as the blob holds it (v2_4/v3_0: centi-% per the
    /// SMU headers; kept raw so a run on real hardware can settle the unit).
    MetricsGfxActivityRaw metrics_gfx_activity_raw "raw",
    /// gpu_metrics temperature_gfx (v2/v3) or temperature_edge (v1) exactly as the blob holds it.
    MetricsTempRaw metrics_temp_raw "raw",
    /// An APU's firmware throttle-residency counters (gpu_metrics v3_0 `throttle_residency_*`, AMD
    /// SMI's `apu_metrics`): each rises by the firmware's timer ticks on every table update while
    /// its limit holds the clocks down, cumulative since boot; only differences mean anything
    /// (docs/methodology.md §9.5). PROCHOT.
    ThrottleProchot throttle_prochot "ticks",
    /// The sustained power limit (SPL, the STAPM limit).
    ThrottleSpl throttle_spl "ticks",
    /// The fast package power tracking limit (fPPT).
    ThrottleFppt throttle_fppt "ticks",
    /// The slow package power tracking limit (sPPT).
    ThrottleSppt throttle_sppt "ticks",
    /// The CPU cores' thermal limit.
    ThrottleThmCore throttle_thm_core "ticks",
    /// The gfx thermal limit.
    ThrottleThmGfx throttle_thm_gfx "ticks",
    /// The SoC thermal limit.
    ThrottleThmSoc throttle_thm_soc "ticks",
}

/// The throttle-residency counters with the limit each one names, as a reader says it.
pub(crate) const THROTTLE_LIMITS: [(Field, &str); 7] = [
    (Field::ThrottleProchot, "PROCHOT"),
    (Field::ThrottleSpl, "sustained power (SPL/STAPM)"),
    (Field::ThrottleFppt, "fast PPT"),
    (Field::ThrottleSppt, "slow PPT"),
    (Field::ThrottleThmCore, "CPU-core thermal"),
    (Field::ThrottleThmGfx, "gfx thermal"),
    (Field::ThrottleThmSoc, "SoC thermal"),
];

impl Reading {
    /// Every field this reading holds, in `Field::ALL` order.
    pub fn present(&self) -> impl Iterator<Item = (Field, f64)> + '_ {
        Field::ALL.iter().filter_map(move |f| self.get(*f).map(|v| (*f, v)))
    }

    /// Fills each field that is `None` here from `other`.
    pub(crate) fn fill_missing_from(&mut self, other: &Reading) {
        for &f in Field::ALL {
            if self.get(f).is_none() {
                self.set(f, other.get(f));
            }
        }
    }

    /// Raises every field to `other`'s where that is higher: across a server's devices, the most
    /// loaded device's value of each, which the idle and thermal gates wait on, so every device
    /// must be idle and cool (docs/methodology.md §9.11).
    pub(crate) fn raise_to(&mut self, other: &Reading) {
        for &f in Field::ALL {
            if let Some(v) = other.get(f) {
                if self.get(f).is_none_or(|mine| v > mine) {
                    self.set(f, Some(v));
                }
            }
        }
    }

    /// The reading of a server on several devices at one deadline (docs/methodology.md §9.11):
    /// power, energy and memory used summed (only where every device holds the field), the
    /// hottest temperatures, busy averaged, the slowest clocks; the rest (the process's CPU, the
    /// driver's stamps) the first device's. `None` for no device.
    pub(crate) fn of_server(devices: &[Reading]) -> Option<Reading> {
        let mut server = *devices.first()?;
        let all = |f: Field| devices.iter().map(|r| r.get(f)).collect::<Option<Vec<f64>>>();
        for f in [
            Field::PowerW,
            Field::PowerAvgW,
            Field::GfxPowerW,
            Field::EnergyJ,
            Field::VramUsedBytes,
            Field::GttUsedBytes,
        ] {
            server.set(f, all(f).map(|v| v.iter().sum()));
        }
        for f in [Field::BusyPct, Field::MemBusyPct] {
            server.set(f, all(f).map(|v| v.iter().sum::<f64>() / v.len() as f64));
        }
        for f in [Field::TempGpuC, Field::TempHotspotC, Field::TempMemC] {
            server.set(f, devices.iter().filter_map(|r| r.get(f)).reduce(f64::max));
        }
        for f in [Field::GfxClockMhz, Field::MemClockMhz] {
            server.set(f, devices.iter().filter_map(|r| r.get(f)).reduce(f64::min));
        }
        Some(server)
    }

    /// The hottest temperature present (GPU, hotspot or memory).
    pub(crate) fn hottest_c(&self) -> Option<f64> {
        [self.temp_gpu_c, self.temp_hotspot_c, self.temp_mem_c].into_iter().flatten().reduce(f64::max)
    }

    /// Instant power if the source has it, else its averaged power.
    pub(crate) fn best_power_w(&self) -> Option<f64> {
        self.power_w.or(self.power_avg_w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn get_set_and_names_cover_every_field() {
        let mut r = Reading::default();
        for (i, &f) in Field::ALL.iter().enumerate() {
            r.set(f, Some(i as f64));
        }
        for (i, &f) in Field::ALL.iter().enumerate() {
            assert_eq!(r.get(f), Some(i as f64), "{}", f.name());
        }
        let json = serde_json::to_value(r).unwrap();
        assert_eq!(json.as_object().unwrap().len(), Field::ALL.len());
        assert_eq!(serde_json::to_string(&Reading::default()).unwrap(), "{}");
    }

    #[test]
    fn a_servers_devices_make_one_reading_and_the_gates_see_the_most_loaded() {
        let a = Reading {
            power_w: Some(300.0),
            busy_pct: Some(90.0),
            temp_gpu_c: Some(60.0),
            gfx_clock_mhz: Some(1980.0),
            cpu_pct: Some(5.0),
            ..Default::default()
        };
        let b = Reading {
            power_w: Some(100.0),
            busy_pct: Some(10.0),
            temp_gpu_c: Some(70.0),
            gfx_clock_mhz: Some(1500.0),
            ..Default::default()
        };
        let s = Reading::of_server(&[a, b]).unwrap();
        assert_eq!(
            (s.power_w, s.busy_pct, s.temp_gpu_c, s.gfx_clock_mhz),
            (Some(400.0), Some(50.0), Some(70.0), Some(1500.0))
        );
        assert_eq!(s.cpu_pct, Some(5.0), "the process's CPU is the first device's reading's");
        assert_eq!(Reading::of_server(&[a, Reading::default()]).unwrap().power_w, None, "a device without power");
        assert_eq!(Reading::of_server(&[a]).unwrap(), a);
        assert!(Reading::of_server(&[]).is_none());
        let mut gate = a;
        gate.raise_to(&b);
        assert_eq!(
            (gate.power_w, gate.busy_pct, gate.temp_gpu_c, gate.gfx_clock_mhz),
            (Some(300.0), Some(90.0), Some(70.0), Some(1980.0))
        );
    }

    #[test]
    fn hottest_and_best_power() {
        let r = Reading {
            temp_gpu_c: Some(60.0),
            temp_hotspot_c: Some(75.0),
            power_avg_w: Some(9.0),
            ..Default::default()
        };
        assert_eq!(r.hottest_c(), Some(75.0));
        assert_eq!(r.best_power_w(), Some(9.0));
        assert_eq!(Reading::default().hottest_c(), None);
    }
}
