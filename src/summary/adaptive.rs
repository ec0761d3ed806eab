//! Adaptive sample counts (docs/methodology.md §17): a study with `until_ci_pct` adds interleaved
//! blocks until the interval of every candidate's decode TPS change is narrower than ± that many
//! %; one with `until_decided` until every interval excludes 0 or lies inside ± `mei_pct`; either
//! stops when each variant has `max_samples`. Either way the study looks after every block, so
//! its intervals are the repeated confidence intervals of `sequential.rs`, which hold the truth
//! however early the study stops (simulated in `simulate.rs`).
use super::metric::Metric;
use super::sequential::ALPHA;
use super::stats::{ChangeCi, LookLevels};
use crate::study::file::{AdaptiveRule, StudyFile};
use serde::{Deserialize, Serialize};

/// The metric whose interval the rule judges.
pub(crate) const PRIMARY: Metric = Metric::ServerDecodeTps;

/// Why an adaptive study stopped taking blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum StopReason {
    /// Every candidate's interval is narrower than ± `until_ci_pct`.
    Precision,
    /// Every candidate's interval excludes 0 or lies inside ± `mei_pct` (`until_decided`).
    Decided,
    /// Each variant has `max_samples` planned samples.
    MaxSamples,
}

/// One candidate's precision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct CandidatePrecision {
    pub(crate) label: String,
    /// Half the width of its decode interval, in % points; None while it has too few samples.
    pub(crate) half_width_pct: Option<f64>,
    /// Its interval excludes 0 or lies inside ± `mei_pct`.
    #[serde(default)]
    pub(crate) decided: bool,
}

impl CandidatePrecision {
    /// A candidate's standing from its decode interval under `rule`.
    pub(crate) fn of(label: &str, ci: Option<&ChangeCi>, rule: &AdaptiveRule) -> CandidatePrecision {
        CandidatePrecision {
            label: label.into(),
            half_width_pct: ci.map(|c| c.half_width_pct()),
            decided: ci.is_some_and(|c| decided(c, rule)),
        }
    }
}

/// The sequential rule's question of one interval: decided (docs/methodology.md §17)? A
/// difference once the interval excludes 0 (a sweep's point's interval is taken at its family's
/// level, [`levels_at`]). "The same" once the equivalence interval lies inside ± the margin on
/// neither side of 0: where it leans, the study goes on, so that a change smaller than the margin
/// is reported by its sign rather than stopped as the same.
pub(crate) fn decided(ci: &ChangeCi, rule: &AdaptiveRule) -> bool {
    !ci.contains_zero() || rule.mei_pct.is_some_and(|m| ci.within(m) && ci.equivalence_leans().is_none())
}

/// Where an adaptive study stands, from its evidence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Adaptive {
    /// 0 when the study stops on decisions only.
    pub(crate) until_ci_pct: f64,
    #[serde(default)]
    pub(crate) until_decided: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) mei_pct: Option<f64>,
    pub(crate) max_samples: u32,
    /// Interleaved blocks planned: samples per variant, taken or to take.
    pub(crate) blocks: usize,
    pub(crate) candidates: Vec<CandidatePrecision>,
    /// None: the rule asks for another block (an interrupted study stopped before it).
    pub(crate) stopped: Option<StopReason>,
    /// What the judged intervals are of, where not server decode: `test` in a llama-bench study,
    /// whose every test is judged (docs/methodology.md §4.4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) judged: Option<String>,
}

/// Whether each interval is precise enough (or decided), and whether the study may stop.
pub(crate) fn judge(rule: AdaptiveRule, blocks: usize, candidates: Vec<CandidatePrecision>) -> Adaptive {
    let precise =
        rule.until_ci_pct.is_some_and(|pct| candidates.iter().all(|c| c.half_width_pct.is_some_and(|w| w < pct)));
    let decided = rule.until_decided && candidates.iter().all(|c| c.decided);
    let stopped = if precise {
        Some(StopReason::Precision)
    } else if decided {
        Some(StopReason::Decided)
    } else if blocks >= rule.max_samples as usize {
        Some(StopReason::MaxSamples)
    } else {
        None
    };
    Adaptive {
        until_ci_pct: rule.until_ci_pct.unwrap_or(0.0),
        until_decided: rule.until_decided,
        mei_pct: rule.mei_pct,
        max_samples: rule.max_samples,
        blocks,
        candidates,
        stopped,
        judged: None,
    }
}

/// The levels after `blocks` blocks of a study that looks after `first` and every block up to
/// `max` (`sequential.rs`), one of `family` comparisons: a sweep's point takes the difference
/// boundary at α over its family's comparisons, so that its repeated p clears the level Holm's
/// first step needs exactly when its own interval excludes 0 (docs/methodology.md §16).
pub(crate) fn levels_at(first: usize, max: usize, blocks: usize, family: u32) -> LookLevels {
    use super::sequential::{Boundary, Shape};
    let family_alpha = ALPHA / f64::from(family.max(1));
    let difference = if family > 1 {
        Boundary::calibrated(first, max, Shape::HaybittlePeto, family_alpha)
    } else {
        Boundary::difference(first, max)
    };
    LookLevels {
        difference: difference.alpha_at(blocks),
        equivalence: Boundary::equivalence(first, max).alpha_at(blocks),
        family_alpha,
    }
}

/// The levels of the study's intervals after `blocks` counted blocks: a study that looks after
/// every block takes the repeated confidence intervals of `sequential.rs`; a fixed study (None)
/// its plain 95% interval.
pub(crate) fn look_levels(file: &StudyFile, blocks: usize) -> Option<LookLevels> {
    let family = file.sweep_family.unwrap_or(1);
    file.is_adaptive().then(|| levels_at(file.samples as usize, file.max_samples() as usize, blocks, family))
}

impl Adaptive {
    /// One line for people: how many samples and why it stopped.
    pub(crate) fn line(&self) -> String {
        let widths = self
            .candidates
            .iter()
            .map(|c| match c.half_width_pct {
                Some(w) => format!("{} ±{w:.2}%", c.label),
                None => format!("{} no interval yet", c.label),
            })
            .collect::<Vec<_>>()
            .join(", ");
        let of = self.judged.as_deref().unwrap_or("decode");
        let why = match self.stopped {
            Some(StopReason::Decided) => {
                format!("stopped decided: every {of} interval excludes 0 or lies inside the margin")
            }
            Some(StopReason::Precision) => {
                format!("stopped on precision: every {of} interval is narrower than ±{}%", self.until_ci_pct)
            }
            Some(StopReason::MaxSamples) if self.until_ci_pct > 0.0 => format!(
                "stopped at max_samples {}: not every {of} interval is narrower than ±{}%",
                self.max_samples, self.until_ci_pct
            ),
            Some(StopReason::MaxSamples) => {
                format!("stopped at max_samples {}: not every {of} interval is decided", self.max_samples)
            }
            None => format!("not finished: another block is due (at most {} samples)", self.max_samples),
        };
        format!("adaptive: {} samples per variant, {why} ({widths})", self.blocks)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn precision(until_ci_pct: f64, max_samples: u32) -> AdaptiveRule {
        AdaptiveRule { family: 1, until_ci_pct: Some(until_ci_pct), until_decided: false, mei_pct: None, max_samples }
    }

    #[test]
    fn stops_on_precision_or_at_the_cap_never_on_a_missing_interval() {
        let c = |w: Option<f64>| vec![CandidatePrecision { label: "q8_0".into(), half_width_pct: w, decided: false }];
        assert_eq!(judge(precision(2.0, 8), 3, c(Some(1.9))).stopped, Some(StopReason::Precision));
        assert_eq!(judge(precision(2.0, 8), 3, c(Some(2.1))).stopped, None);
        assert_eq!(judge(precision(2.0, 8), 8, c(Some(2.1))).stopped, Some(StopReason::MaxSamples));
        assert_eq!(judge(precision(2.0, 8), 5, c(None)).stopped, None);
        assert!(judge(precision(2.0, 8), 8, c(Some(2.1))).line().contains("stopped at max_samples 8"));
    }

    #[test]
    fn until_decided_stops_when_every_interval_excludes_0_or_lies_inside_the_margin() {
        let rule =
            AdaptiveRule { family: 1, until_ci_pct: None, until_decided: true, mei_pct: Some(2.0), max_samples: 10 };
        let ci = |lo_pct, hi_pct| ChangeCi::bounds(lo_pct, hi_pct, 0.95);
        let c = |cis: &[ChangeCi]| cis.iter().map(|x| CandidatePrecision::of("b", Some(x), &rule)).collect();
        assert_eq!(judge(rule, 3, c(&[ci(-9.0, -3.0)])).stopped, Some(StopReason::Decided));
        assert_eq!(judge(rule, 3, c(&[ci(-1.5, 1.9)])).stopped, Some(StopReason::Decided));
        assert_eq!(judge(rule, 3, c(&[ci(-9.0, -3.0), ci(-2.5, 1.0)])).stopped, None);
        assert_eq!(judge(rule, 10, c(&[ci(-2.5, 1.0)])).stopped, Some(StopReason::MaxSamples));
        let none = vec![CandidatePrecision::of("b", None, &rule)];
        assert_eq!(judge(rule, 4, none).stopped, None, "no interval yet: another block");
        assert!(judge(rule, 3, c(&[ci(-9.0, -3.0)])).line().contains("stopped decided"));
    }
}
