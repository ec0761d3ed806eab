//! The study's answer in one line per candidate (docs/methodology.md §8 "The answer"): the
//! primary metric's change against the baseline, its interval and verdict, the blocks it rests
//! on and the study's wall time. The last lines `ab`, `trace` and `summarize` print, the first of
//! report.md and the page, and `answer` in summary.json.
use super::metric::Metric;
use super::stats::{ChangeCi, Verdict, MIN_VALUES};
use crate::study::evidence::OrderEntry;
use serde::{Deserialize, Serialize};

/// One candidate's answer: the figures of its line, and the line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Answer {
    pub(crate) candidate: String,
    pub(crate) baseline: String,
    pub(crate) metric: Metric,
    /// The printed change (the interval's estimate, §8) and its 95% interval, %.
    pub(crate) change_pct: Option<f64>,
    pub(crate) ci_lo_pct: Option<f64>,
    pub(crate) ci_hi_pct: Option<f64>,
    pub(crate) verdict: Verdict,
    /// Blocks that held both variants (a paired interval's); None for an unpaired one.
    pub(crate) blocks: Option<usize>,
    /// Accepted values of the metric: the baseline's, the candidate's.
    pub(crate) accepted: [usize; 2],
    /// From the first sample's start to the last one's end (order.jsonl), s; None where the
    /// times cannot be read.
    pub(crate) wall_s: Option<f64>,
    pub(crate) line: String,
}

/// One variant's primary metric, as the answer reads it.
pub(crate) struct Primary<'a> {
    pub(crate) label: &'a str,
    /// The metric answered: server decode, or a llama-bench study's test.
    pub(crate) metric: Metric,
    /// Accepted values of the metric.
    pub(crate) accepted: usize,
    pub(crate) change_pct: Option<f64>,
    pub(crate) ci: Option<ChangeCi>,
    pub(crate) verdict: Option<Verdict>,
}

/// Each candidate's answer, in the plan's order (the baseline first in `variants`); none without
/// a baseline and a candidate.
pub(crate) fn answers(variants: &[Primary<'_>], order: &[OrderEntry], margin_pct: Option<f64>) -> Vec<Answer> {
    let Some((base, candidates)) = variants.split_first() else { return Vec::new() };
    let wall_s = wall_s(order);
    candidates
        .iter()
        .filter_map(|c| {
            let mut a = Answer {
                candidate: c.label.to_string(),
                baseline: base.label.to_string(),
                metric: c.metric,
                change_pct: c.change_pct,
                ci_lo_pct: c.ci.map(|x| x.lo_pct),
                ci_hi_pct: c.ci.map(|x| x.hi_pct),
                verdict: c.verdict?,
                blocks: c.ci.and_then(|x| x.pairs),
                accepted: [base.accepted, c.accepted],
                wall_s,
                line: String::new(),
            };
            a.line = a.line_of(margin_pct);
            Some(a)
        })
        .collect()
}

impl Answer {
    /// `mine vs main: server decode -1.69% [-2.51%, -0.85%], slower (4 blocks, 97 s)`, signed as
    /// every report prints a change; with no interval, the verdict and the accepted counts:
    /// `mine vs main: server decode: too few samples (2 of 3 accepted)`.
    /// A verdict that names the margin says which (`slower, within ±2%`).
    fn line_of(&self, margin_pct: Option<f64>) -> String {
        let head = format!("{} vs {}: {}", self.candidate, self.baseline, self.metric.short_title());
        let word = match margin_pct {
            Some(m) => self.metric.verdict_word(self.verdict).replace("the margin", &format!("±{m}%")),
            None => self.metric.verdict_word(self.verdict).to_string(),
        };
        let (Some(lo), Some(hi)) = (self.ci_lo_pct, self.ci_hi_pct) else {
            let fewest = self.accepted[0].min(self.accepted[1]);
            return format!("{head}: {word} ({fewest} of {MIN_VALUES} accepted)");
        };
        let change = self.change_pct.map_or_else(|| "—".to_string(), |c| format!("{c:+.2}%"));
        let rests_on = match self.blocks {
            Some(n) => format!("{n} blocks"),
            None => format!("{} and {} samples", self.accepted[0], self.accepted[1]),
        };
        let wall = self.wall_s.map_or_else(String::new, |s| format!(", {}", duration(s)));
        format!("{head} {change} [{lo:+.2}%, {hi:+.2}%], {word} ({rests_on}{wall})")
    }
}

/// The study's wall time: from the earliest attempt's start to the latest one's end.
fn wall_s(order: &[OrderEntry]) -> Option<f64> {
    let at = |t: &str| chrono::DateTime::parse_from_rfc3339(t).ok();
    let start = order.iter().filter_map(|e| at(&e.started_at)).min()?;
    let end = order.iter().filter_map(|e| at(&e.ended_at)).max()?;
    let ms = (end - start).num_milliseconds();
    (ms >= 0).then(|| ms as f64 / 1000.0)
}

/// `97 s`, `12 min`, `2 h 5 min`.
fn duration(s: f64) -> String {
    let whole = s.round() as u64;
    match whole {
        0..600 => format!("{whole} s"),
        600..7200 => format!("{} min", (s / 60.0).round() as u64),
        _ => format!("{} h {} min", whole / 3600, (whole % 3600) / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::super::adaptive::PRIMARY;
    use super::*;

    fn answer(ci: Option<(f64, f64)>, pairs: Option<usize>, verdict: Verdict) -> Answer {
        let mut a = Answer {
            candidate: "mine".into(),
            baseline: "main".into(),
            metric: PRIMARY,
            change_pct: Some(-1.69),
            ci_lo_pct: ci.map(|c| c.0),
            ci_hi_pct: ci.map(|c| c.1),
            verdict,
            blocks: pairs,
            accepted: [4, 2],
            wall_s: Some(97.2),
            line: String::new(),
        };
        a.line = a.line_of(Some(2.0));
        a
    }

    #[test]
    fn the_line_says_change_interval_verdict_blocks_and_time() {
        let a = answer(Some((-2.51, -0.85)), Some(4), Verdict::Slower);
        assert_eq!(a.line, "mine vs main: server decode -1.69% [-2.51%, -0.85%], slower (4 blocks, 97 s)");
        let welch = answer(Some((-2.51, -0.85)), None, Verdict::Slower);
        assert!(welch.line.ends_with("slower (4 and 2 samples, 97 s)"), "{}", welch.line);
        let few = answer(None, None, Verdict::TooFewSamples);
        assert_eq!(few.line, "mine vs main: server decode: too few samples (2 of 3 accepted)");
        let within = answer(Some((-2.51, -0.85)), Some(4), Verdict::SlowerWithinMargin);
        assert_eq!(
            within.line,
            "mine vs main: server decode -1.69% [-2.51%, -0.85%], slower, within ±2% (4 blocks, 97 s)"
        );
    }

    #[test]
    fn durations_read_at_a_glance() {
        assert_eq!(duration(97.2), "97 s");
        assert_eq!(duration(725.0), "12 min");
        assert_eq!(duration(7500.0), "2 h 5 min");
    }

    #[test]
    fn the_wall_time_spans_every_attempt() {
        let e = |start: &str, end: &str| OrderEntry {
            index: 0,
            label: "a".into(),
            repeat: 0,
            dir: String::new(),
            started_at: start.into(),
            ended_at: end.into(),
            status: crate::study::evidence::AttemptStatus::Ok,
            timeline: Default::default(),
        };
        let order = [
            e("2026-12-01T11:20:14+00:00", "2026-12-01T11:20:16+00:00"),
            e("2026-12-01T11:20:16+00:00", "2026-12-01T11:21:51.5+00:00"),
        ];
        assert_eq!(wall_s(&order), Some(97.5));
        assert_eq!(wall_s(&[]), None);
        assert_eq!(wall_s(&[e("", "")]), None, "unreadable times: no wall time");
    }
}
