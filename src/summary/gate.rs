//! The CI gate (docs/methodology.md §8), two rules over the same interval. `estimate` (the
//! default) fails a build when a candidate is decided worse — its interval excludes 0 on the
//! failing side — and the interval's estimate lies beyond the threshold: it catches regressions
//! near the threshold, and fails a build exactly at it about half the time. `interval` fails only
//! when the whole interval lies beyond the threshold, a one-sided test at 2.5% against a change
//! exactly at the threshold: a build there fails at most that often, and a regression has to lie
//! well past the threshold to fail. Noise (an interval that reaches 0) fails neither. Both rules'
//! operating curves are simulated in `simulate.rs` and printed in §8 and `--help`.
use super::stats::ChangeCi;
use super::{Metric, Summary};

/// What fails the gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum FailOn {
    /// The candidate is worse (decode or prefill slower, TTFT longer) beyond the threshold.
    Slower,
    /// The candidate differs in either direction beyond the threshold.
    Changed,
}

/// How a decided change is held against the threshold (docs/methodology.md §8).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub(crate) enum GateRule {
    /// Decided worse, and the interval's estimate beyond the threshold.
    #[default]
    Estimate,
    /// The whole interval beyond the threshold (a non-inferiority test: a build exactly at the
    /// threshold fails at most 2.5% of the time).
    Interval,
}

impl GateRule {
    fn flag(self) -> &'static str {
        match self {
            GateRule::Estimate => "--gate-rule estimate",
            GateRule::Interval => "--gate-rule interval",
        }
    }
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct Gate {
    pub(crate) fail_on: FailOn,
    pub(crate) metric: Metric,
    /// % change the interval must lie beyond (0: any change the interval proves).
    pub(crate) threshold_pct: f64,
    pub(crate) rule: GateRule,
}

/// Why a variant failed the gate.
#[derive(Debug, Clone)]
pub(crate) struct GateFailure {
    pub(crate) label: String,
    pub(crate) metric: &'static str,
    pub(crate) change_pct: f64,
    pub(crate) ci: [f64; 2],
}

impl GateFailure {
    pub(crate) fn line(&self, gate: &Gate) -> String {
        let beyond = match gate.rule {
            GateRule::Estimate => "is decided and its estimate lies beyond",
            GateRule::Interval => "lies wholly beyond",
        };
        format!(
            "{} {} {:+.2}% [{:+.2}%, {:+.2}%] {beyond} the {}% threshold ({}, {})",
            self.label,
            self.metric,
            self.change_pct,
            self.ci[0],
            self.ci[1],
            gate.threshold_pct,
            match gate.fail_on {
                FailOn::Slower => "--fail-on slower",
                FailOn::Changed => "--fail-on changed",
            },
            gate.rule.flag(),
        )
    }
}

impl Gate {
    /// Candidates the gate cannot judge: too few accepted samples for an interval. A gate that
    /// passed them would pass a build nothing was measured of.
    pub(crate) fn unjudged(&self, s: &Summary) -> Vec<String> {
        let metrics = self.metrics(s);
        s.variants
            .iter()
            .skip(1)
            .filter(|v| metrics.iter().any(|&m| v.metric(m).is_none_or(|x| x.ci.is_none())))
            .map(|v| v.label.clone())
            .collect()
    }

    /// The metrics the gate judges: its `--metric`, or every test of a llama-bench study, which
    /// has no server metric (docs/methodology.md §4.4).
    fn metrics(&self, s: &Summary) -> Vec<Metric> {
        let judged = s.judged_metrics();
        if judged.iter().any(|m| m.llama_bench_test().is_some()) {
            judged
        } else {
            vec![self.metric]
        }
    }

    /// Why the gate cannot judge `unjudged` (from [`Gate::unjudged`]), in one line naming the
    /// cause and the fix: an interval needs 3 accepted values a side (docs/methodology.md §8), and
    /// this study has fewer, whether too few were planned or some were rejected.
    pub(crate) fn unjudged_line(&self, s: &Summary, unjudged: &[String]) -> String {
        let m = self
            .metrics(s)
            .into_iter()
            .find(|&m| s.variants.iter().skip(1).any(|v| v.metric(m).is_none_or(|x| x.ci.is_none())))
            .unwrap_or(self.metric);
        if let (true, Some(why)) = (m.is_energy(), &s.energy_not_measured) {
            return format!(
                "the gate cannot judge {} by {}: {why}; judge it on a host whose telemetry reads power or energy (--telemetry nvml, amd-smi, amdgpu-sysfs or rocm-smi)",
                unjudged.join(", "),
                m.title()
            );
        }
        let counts: Vec<String> = s
            .variants
            .iter()
            .filter(|v| s.variants.first().is_some_and(|b| b.label == v.label) || unjudged.contains(&v.label))
            .map(|v| format!("{} {}", v.label, v.metric(m).map_or(0, |x| x.runs.len())))
            .collect();
        let rejected = match s.rejected.len() {
            0 => String::new(),
            n => format!("; {n} sample(s) were rejected (see the rejected samples above)"),
        };
        format!(
            "the gate cannot judge {}: an interval needs at least 3 accepted {} values a side (docs/methodology.md §8), and this study has {}{rejected}: run it with more --samples, or --until-decided",
            unjudged.join(", "),
            m.title(),
            counts.join(", "),
        )
    }

    /// Every non-baseline variant the gate fails: see [`fails`].
    pub(crate) fn failures(&self, s: &Summary) -> Vec<GateFailure> {
        let metrics = self.metrics(s);
        s.variants
            .iter()
            .skip(1)
            .flat_map(|v| metrics.iter().map(move |&m| (v, m)))
            .filter_map(|(v, m)| {
                let x = v.metric(m)?;
                let ci = x.ci.as_ref()?;
                self.fails(ci, m.higher_is_better()).then(|| GateFailure {
                    label: v.label.clone(),
                    metric: m.title(),
                    change_pct: x.change_pct.unwrap_or(f64::NAN),
                    ci: [ci.lo_pct, ci.hi_pct],
                })
            })
            .collect()
    }

    /// Whether an interval fails the gate. `estimate`: it excludes 0 on a failing side and its
    /// estimate (the centre, on the log scale) lies beyond the threshold on that side.
    /// `interval`: it lies wholly beyond the threshold on a failing side.
    pub(crate) fn fails(&self, ci: &ChangeCi, higher_is_better: bool) -> bool {
        let t = self.threshold_pct.abs();
        let (up, down) = match self.rule {
            GateRule::Estimate => {
                let centre = ci.center_pct();
                (ci.lo_pct > 0.0 && centre > t, ci.hi_pct < 0.0 && centre < -t)
            }
            GateRule::Interval => (ci.lo_pct > 0.0 && ci.lo_pct > t, ci.hi_pct < 0.0 && ci.hi_pct < -t),
        };
        // "Worse" is down for a rate, up for a latency.
        let worse = if higher_is_better { down } else { up };
        match self.fail_on {
            FailOn::Slower => worse,
            FailOn::Changed => up || down,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::summary::{MetricSummary, VariantSummary};

    fn variant(label: &str, metric: Metric, ci: Option<(f64, f64)>) -> VariantSummary {
        let ci = ci.map(|(lo_pct, hi_pct)| ChangeCi::bounds(lo_pct, hi_pct, 0.95));
        let m = MetricSummary {
            metric,
            runs: vec![],
            blocks: vec![],
            mean: None,
            median: None,
            cv_pct: None,
            high_cv: false,
            median_change_pct: None,
            change_pct: ci.as_ref().map(|c| (c.lo_pct + c.hi_pct) / 2.0),
            ci,
            verdict: None,
            measures: None,
            energy_from: None,
        };
        VariantSummary {
            label: label.into(),
            spec: String::new(),
            planned: 3,
            accepted: 3,
            metrics: vec![m],
            ms_per_token: None,
            decode_tps_n_minus_1_median: None,
            acceptance: vec![],
            acceptance_median: None,
            acceptance_ci: None,
            acceptance_per_position_median: None,
            memory: None,
            mtp_yardstick: None,
            soak: None,
            speed_bench: None,
            llama_bench: None,
            mean_acceptance_length_median: None,
            output_tokens: vec![],
            prompt_tokens: vec![],
            idle_gate_ms_median: None,
            prefill: None,
            decode: None,
            throttled: vec![],
            throttled_by: vec![],
            decode_windows: vec![],
            caveats: vec![],
            devices: vec![],
            floor: None,
        }
    }

    fn labels(gate: Gate, variants: Vec<VariantSummary>) -> Vec<String> {
        let mut s: Summary =
            serde_json::from_str(include_str!("../../tests/fixtures/evidence-pre-engine/study/summary.json"))
                .expect("a real summary");
        s.variants = variants;
        gate.failures(&s).into_iter().map(|f| f.label).collect()
    }

    #[test]
    fn a_candidate_without_an_interval_is_unjudged_and_the_line_says_why() {
        let d = Metric::ServerDecodeTps;
        let gate = Gate {
            fail_on: FailOn::Slower,
            metric: Metric::ServerDecodeTps,
            threshold_pct: 5.0,
            rule: GateRule::Estimate,
        };
        let mut s: Summary =
            serde_json::from_str(include_str!("../../tests/fixtures/evidence-pre-engine/study/summary.json"))
                .expect("a real summary");
        let two = |label: &str| {
            let mut v = variant(label, d, None);
            v.metrics[0].runs = vec![100.0, 101.0];
            v
        };
        s.variants = vec![two("base"), two("cand"), variant("decided", d, Some((-2.0, 1.0)))];
        s.rejected.clear();
        let unjudged = gate.unjudged(&s);
        assert_eq!(unjudged, ["cand"], "a candidate with an interval is judged");
        assert!(gate.failures(&s).is_empty(), "no interval, no failure: the gate alone would pass it");
        let line = gate.unjudged_line(&s, &unjudged);
        assert!(line.contains("at least 3 accepted") && line.contains("base 2, cand 2"), "{line}");
        assert!(line.contains("more --samples") && !line.contains("rejected"), "{line}");
    }

    #[test]
    fn only_a_decided_change_beyond_the_threshold_fails() {
        let d = Metric::ServerDecodeTps;
        let slower = Gate {
            fail_on: FailOn::Slower,
            metric: Metric::ServerDecodeTps,
            threshold_pct: 5.0,
            rule: GateRule::Estimate,
        };
        let vs = || vs_for(d);
        assert_eq!(labels(slower, vs()), ["regressed", "past"]);
        let changed = Gate { fail_on: FailOn::Changed, ..slower };
        assert_eq!(labels(changed, vs()), ["regressed", "past", "faster"]);
        let any = Gate { threshold_pct: 0.0, ..slower };
        assert_eq!(labels(any, vs()), ["regressed", "small", "past"]);
        // TTFT: worse is up.
        let t = Metric::TtftMs;
        let ttft =
            Gate { fail_on: FailOn::Slower, metric: Metric::TtftMs, threshold_pct: 0.0, rule: GateRule::Estimate };
        let vs = vec![
            variant("base", t, None),
            variant("later", t, Some((3.0, 9.0))),
            variant("sooner", t, Some((-9.0, -3.0))),
        ];
        assert_eq!(labels(ttft, vs), ["later"]);
        // The interval rule: only an interval wholly past the threshold fails.
        let interval = Gate { rule: GateRule::Interval, ..slower };
        assert_eq!(labels(interval, vs_for(d)), ["regressed"]);
        let changed = Gate { fail_on: FailOn::Changed, ..interval };
        assert_eq!(labels(changed, vs_for(d)), ["regressed", "faster"]);
        // At threshold 0 the two rules are one: the interval excludes 0.
        let any = Gate { threshold_pct: 0.0, ..interval };
        assert_eq!(labels(any, vs_for(d)), ["regressed", "small", "past"]);
    }

    fn vs_for(d: Metric) -> Vec<VariantSummary> {
        vec![
            variant("base", d, None),
            variant("regressed", d, Some((-40.0, -26.0))),
            variant("noise", d, Some((-6.0, 3.0))),
            variant("small", d, Some((-4.9, -1.0))),
            // Decided slower, its estimate (−6.3%) past the threshold, the interval reaching it.
            variant("past", d, Some((-9.0, -3.5))),
            variant("faster", d, Some((10.0, 20.0))),
        ]
    }

    #[test]
    fn the_failure_line_names_the_rule_it_applied() {
        let f = GateFailure { label: "cand".into(), metric: "decode", change_pct: -8.0, ci: [-11.0, -6.0] };
        let g = Gate {
            fail_on: FailOn::Slower,
            metric: Metric::ServerDecodeTps,
            threshold_pct: 5.0,
            rule: GateRule::Interval,
        };
        let line = f.line(&g);
        assert!(
            line.contains("lies wholly beyond the 5% threshold") && line.contains("--gate-rule interval"),
            "{line}"
        );
        let line = f.line(&Gate { rule: GateRule::Estimate, ..g });
        assert!(line.contains("its estimate lies beyond") && line.contains("--gate-rule estimate"), "{line}");
    }
}
