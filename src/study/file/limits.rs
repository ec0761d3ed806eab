//! The rule limits a study file carries, each with its default: the one list every report reads
//! to say which limits a study changed (docs/methodology.md §7.22). A study run at
//! looser limits than the defaults keeps samples the defaults would reject, so its reports say
//! so at the top.
use super::{default_consecutive, default_retakes, default_thermal_band, IdleGate, StudyFile};
use serde::{Deserialize, Serialize};

/// One rule limit the study set to other than its default.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct RuleLimit {
    /// What the limit governs: a rule of docs/methodology.md §7 or a gate of §9.
    pub(crate) rule: String,
    /// How a user sets it: the `abprof ab` flag, else the study file's key.
    pub(crate) flag: String,
    /// The study file's key.
    pub(crate) key: String,
    /// The study's value and the default, in `unit`; None: unset (not checked).
    pub(crate) value: Option<f64>,
    pub(crate) default: Option<f64>,
    pub(crate) unit: String,
}

impl RuleLimit {
    fn of(rule: &str, flag: &str, key: &str, unit: &str, value: Option<f64>, default: Option<f64>) -> RuleLimit {
        RuleLimit { rule: rule.into(), flag: flag.into(), key: key.into(), value, default, unit: unit.into() }
    }

    /// `--foreign-cpu-max 1000% (default 50%; other-workload)`.
    pub(crate) fn line(&self) -> String {
        let shown = |v: Option<f64>| v.map_or_else(|| "unset".to_string(), |x| format!("{x}{}", self.unit));
        format!("{} {} (default {}; {})", self.flag, shown(self.value), shown(self.default), self.rule)
    }
}

impl StudyFile {
    /// Every rule limit of the study, with its default, in one order (docs/methodology.md §7,
    /// §9.1, §9.9, §7.19). A limit decides whether a sample or a reading counts; the timeouts and
    /// the gate's reading interval are not listed, since waiting longer or reading more often
    /// lets no sample in that the defaults would reject.
    pub(crate) fn rule_limits(&self) -> Vec<RuleLimit> {
        let d = IdleGate::default();
        let i = &self.idle;
        let mut all = vec![
            RuleLimit::of(
                "other-workload",
                "--foreign-cpu-max",
                "idle.foreign_cpu_max_pct",
                "%",
                Some(i.foreign_cpu_max_pct),
                Some(d.foreign_cpu_max_pct),
            ),
            RuleLimit::of(
                "idle gate",
                "--idle-samples",
                "idle.consecutive",
                "",
                Some(f64::from(i.consecutive)),
                Some(f64::from(default_consecutive())),
            ),
            RuleLimit::of(
                "idle gate",
                "idle.busy_max_pct",
                "idle.busy_max_pct",
                "%",
                Some(i.busy_max_pct),
                Some(d.busy_max_pct),
            ),
            RuleLimit::of(
                "idle gate",
                "idle.cpu_max_pct",
                "idle.cpu_max_pct",
                "%",
                Some(i.cpu_max_pct),
                Some(d.cpu_max_pct),
            ),
            RuleLimit::of("idle gate", "idle.power_max_w", "idle.power_max_w", " W", i.power_max_w, d.power_max_w),
            RuleLimit::of(
                "retakes",
                "--retakes",
                "retakes",
                "",
                Some(f64::from(self.retakes())),
                Some(f64::from(default_retakes(self.planned_blocks()))),
            ),
        ];
        // The thermal gate is off by default; once on, its band and ceiling are its limits.
        if let Some(t) = &i.thermal {
            all.push(RuleLimit::of(
                "thermal gate",
                "--thermal-band",
                "idle.thermal.band_c",
                " °C",
                Some(t.band_c),
                Some(default_thermal_band()),
            ));
            all.push(RuleLimit::of(
                "thermal gate",
                "--thermal-ceiling",
                "idle.thermal.ceiling_c",
                " °C",
                t.ceiling_c,
                None,
            ));
        }
        all
    }

    /// The rule limits set to other than their defaults: what every report lists at its top.
    pub(crate) fn changed_limits(&self) -> Vec<RuleLimit> {
        self.rule_limits().into_iter().filter(|l| l.value != l.default).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file() -> StudyFile {
        StudyFile::new("m.gguf".into(), 16, 3, vec!["a=x".into(), "b=y".into()])
    }

    #[test]
    fn a_study_at_the_defaults_changed_no_limit() {
        assert_eq!(file().changed_limits(), Vec::new());
        let mut f = file();
        f.idle.thermal = Some(crate::study::file::ThermalGate { band_c: 3.0, ceiling_c: None, timeout_s: 900 });
        assert_eq!(f.changed_limits(), Vec::new(), "the gate at its own defaults; a timeout is no limit");
    }

    #[test]
    fn each_changed_limit_is_listed_with_its_default() {
        let mut f = file();
        f.idle.foreign_cpu_max_pct = 1000.0;
        f.idle.consecutive = 3;
        f.idle.power_max_w = Some(40.0);
        f.retakes = Some(0);
        f.idle.thermal = Some(crate::study::file::ThermalGate { band_c: 8.0, ceiling_c: Some(70.0), timeout_s: 300 });
        let lines: Vec<String> = f.changed_limits().iter().map(RuleLimit::line).collect();
        assert_eq!(
            lines,
            [
                "--foreign-cpu-max 1000% (default 50%; other-workload)",
                "--idle-samples 3 (default 10; idle gate)",
                "idle.power_max_w 40 W (default unset; idle gate)",
                "--retakes 0 (default 7; retakes)",
                "--thermal-band 8 °C (default 3 °C; thermal gate)",
                "--thermal-ceiling 70 °C (default unset; thermal gate)",
            ]
        );
    }
}
