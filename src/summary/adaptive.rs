//! Adaptive sample counts (docs/methodology.md §17): a study with `until_ci_pct` adds interleaved
//! blocks until the interval of every candidate's decode TPS change is narrower than ± that many
//! %, or each variant has `max_samples`. The rule looks at the interval's width only, never at
//! where it lies: a study stops on precision, never on significance, so its intervals keep their
//! coverage (simulated below).
use super::{Metric, Summary};
use crate::study::evidence::Evidence;
use crate::study::file::{KindSection, StudyFile};
use serde::{Deserialize, Serialize};

/// The metric whose interval the rule judges.
pub(crate) const PRIMARY: Metric = Metric::ServerDecodeTps;

/// Why an adaptive study stopped taking blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum StopReason {
    /// Every candidate's interval is narrower than ± `until_ci_pct`.
    Precision,
    /// Each variant has `max_samples` planned samples.
    MaxSamples,
}

/// One candidate's precision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct CandidatePrecision {
    pub(crate) label: String,
    /// Half the width of its decode interval, in % points; None while it has too few samples.
    pub(crate) half_width_pct: Option<f64>,
}

/// Where an adaptive study stands, from its evidence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Adaptive {
    pub(crate) until_ci_pct: f64,
    pub(crate) max_samples: u32,
    /// Interleaved blocks planned: samples per variant, taken or to take.
    pub(crate) blocks: usize,
    pub(crate) candidates: Vec<CandidatePrecision>,
    /// None: the rule asks for another block (an interrupted study stopped before it).
    pub(crate) stopped: Option<StopReason>,
}

/// Whether each interval is precise enough, and whether the study may stop.
pub(crate) fn judge(
    until_ci_pct: f64,
    max_samples: u32,
    blocks: usize,
    candidates: Vec<CandidatePrecision>,
) -> Adaptive {
    let precise = candidates.iter().all(|c| c.half_width_pct.is_some_and(|w| w < until_ci_pct));
    let stopped = if precise {
        Some(StopReason::Precision)
    } else if blocks >= max_samples as usize {
        Some(StopReason::MaxSamples)
    } else {
        None
    };
    Adaptive { until_ci_pct, max_samples, blocks, candidates, stopped }
}

/// The rule on a summary of the study `file` describes, with `blocks` planned.
pub(crate) fn of_summary(file: &StudyFile, blocks: usize, s: &Summary) -> Option<Adaptive> {
    let KindSection::Ab(Some(rule)) = file.kind_section() else { return None };
    let candidates = s
        .variants
        .iter()
        .skip(1)
        .map(|v| CandidatePrecision {
            label: v.label.clone(),
            half_width_pct: v.metric(PRIMARY).and_then(|m| m.ci).map(|c| c.half_width_pct()),
        })
        .collect();
    Some(judge(rule.until_ci_pct, rule.max_samples, blocks, candidates))
}

/// The study driver's question after its planned samples: plan another block?
pub(crate) fn another_block(ev: &Evidence) -> anyhow::Result<bool> {
    if StudyFile::load(&ev.study_toml())?.until_ci_pct.is_none() {
        return Ok(false);
    }
    let judged = super::judge_with(ev, super::TraceReading::Skip)?;
    Ok(judged.summary.adaptive.is_some_and(|a| a.stopped.is_none()))
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
        let why = match self.stopped {
            Some(StopReason::Precision) => {
                format!("stopped on precision: every decode interval is narrower than ±{}%", self.until_ci_pct)
            }
            Some(StopReason::MaxSamples) => format!(
                "stopped at max_samples {}: not every decode interval is narrower than ±{}%",
                self.max_samples, self.until_ci_pct
            ),
            None => format!(
                "not finished: another block is due (until ±{}%, at most {} samples)",
                self.until_ci_pct, self.max_samples
            ),
        };
        format!("adaptive: {} samples per variant, {why} ({widths})", self.blocks)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::summary::stats::{change_ci, sim, Measured};
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn stops_on_precision_or_at_the_cap_never_on_a_missing_interval() {
        let c = |w: Option<f64>| vec![CandidatePrecision { label: "q8_0".into(), half_width_pct: w }];
        assert_eq!(judge(2.0, 8, 3, c(Some(1.9))).stopped, Some(StopReason::Precision));
        assert_eq!(judge(2.0, 8, 3, c(Some(2.1))).stopped, None);
        assert_eq!(judge(2.0, 8, 8, c(Some(2.1))).stopped, Some(StopReason::MaxSamples));
        assert_eq!(judge(2.0, 8, 5, c(None)).stopped, None);
        assert!(judge(2.0, 8, 8, c(Some(2.1))).line().contains("stopped at max_samples 8"));
    }

    /// The rule on simulated studies (3 blocks first, then one at a time until ±4% or 12 blocks,
    /// on a steady and a drifting host): A/A studies give a false verdict in at most 5%, and the
    /// final intervals contain the true change in at least 93% of studies with and without a
    /// real +10% effect.
    #[test]
    fn stopping_on_precision_keeps_false_verdicts_and_coverage_honest() {
        let mut rng = ChaCha8Rng::seed_from_u64(15);
        let (trials, max) = (200, 12);
        for drift in [sim::Drift::Steady, sim::Drift::RandomWalk(0.03)] {
            for effect in [1.0, 1.1] {
                let (mut covered, mut false_verdicts, mut blocks_used) = (0, 0, 0);
                for t in 0..trials {
                    let s = sim::study(&mut rng, 0.03, drift, max, &[effect]);
                    let ci_at = |n: usize| {
                        let cut = |v: &[Measured]| v[..n].to_vec();
                        change_ci(&cut(&s[0]), &cut(&s[1]), 500, t, 0.95).unwrap()
                    };
                    let mut n = 3;
                    let mut ci = ci_at(n);
                    while judge(
                        4.0,
                        max as u32,
                        n,
                        vec![CandidatePrecision { label: "b".into(), half_width_pct: Some(ci.half_width_pct()) }],
                    )
                    .stopped
                    .is_none()
                    {
                        n += 1;
                        ci = ci_at(n);
                    }
                    blocks_used += n;
                    let truth = 100.0 * (effect - 1.0);
                    covered += usize::from(ci.lo_pct <= truth && truth <= ci.hi_pct);
                    false_verdicts += usize::from(effect == 1.0 && !ci.contains_zero());
                }
                let rate = |k: usize| k as f64 / trials as f64;
                eprintln!(
                    "{drift:?}, effect {effect}: coverage {:.3}, A/A false verdicts {:.3}, mean blocks {:.1}",
                    rate(covered),
                    rate(false_verdicts),
                    blocks_used as f64 / trials as f64
                );
                assert!(rate(covered) >= 0.93, "{drift:?}, effect {effect}: coverage {}", rate(covered));
                assert!(rate(false_verdicts) <= 0.05, "{drift:?}: A/A false verdicts {}", rate(false_verdicts));
            }
        }
    }
}
