//! `abprof history --regressions`: how each variant's median moved from one comparable study to
//! the next, with the confidence interval of the move and the series' A/A noise floor
//! (docs/methodology.md §15).
use super::comparable::{differences, variant_changes, SeriesKey};
use super::query::{rows, Filters, HistoryRow};
use super::record::{RecordKind, VariantRecord};
use super::row::StoredStudy;
use crate::summary::stats::{change_ci, median, pct_change, ChangeCi, Measured, Verdict};
use crate::summary::Metric;
use serde::Serialize;
use std::collections::HashMap;

/// A study as a move names it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub(crate) struct StudyRef {
    pub(crate) study: i64,
    pub(crate) started_at: Option<String>,
    pub(crate) folder: String,
}

impl StudyRef {
    fn of(r: &HistoryRow) -> StudyRef {
        StudyRef { study: r.study, started_at: r.started_at.clone(), folder: r.folder.clone() }
    }
}

/// One variant's median of one metric, from one study to a later comparable one.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Move {
    pub(crate) label: String,
    pub(crate) metric: Metric,
    pub(crate) from: StudyRef,
    pub(crate) to: StudyRef,
    pub(crate) from_median: Option<f64>,
    pub(crate) to_median: Option<f64>,
    pub(crate) from_samples: usize,
    pub(crate) to_samples: usize,
    pub(crate) change_pct: Option<f64>,
    /// The interval of the change, from the summary's own model (docs/methodology.md §8, §15):
    /// Welch's t on the two studies' log values; None below 3 accepted values a side.
    pub(crate) ci: Option<ChangeCi>,
    pub(crate) verdict: Verdict,
    /// The series' A/A noise floor of this metric, % (None: no A/A study in the series).
    pub(crate) floor_pct: Option<f64>,
    /// The interval excludes 0 and the change exceeds the floor; None when the floor or the
    /// interval is unknown.
    pub(crate) beyond_floor: Option<bool>,
    /// What changed in the variant itself (binary, commit, KV type, …): the suspects.
    pub(crate) changed: Vec<String>,
}

/// A later study of a variant that no earlier one of it compares with, and why.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct NotCompared {
    pub(crate) label: String,
    pub(crate) from: StudyRef,
    pub(crate) to: StudyRef,
    pub(crate) reasons: Vec<String>,
}

impl NotCompared {
    pub(crate) fn line(&self) -> String {
        format!(
            "not compared: {} study #{} with #{}: {}",
            self.label,
            self.to.study,
            self.from.study,
            self.reasons.join("; ")
        )
    }
}

/// A series' A/A noise floor of one metric.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct SeriesFloor {
    pub(crate) metric: Metric,
    /// How far the series' A/A intervals (a variant against itself) reach: the largest |bound|.
    pub(crate) floor_pct: Option<f64>,
}

/// Studies that compare with each other, and the moves between them.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Series {
    pub(crate) key: SeriesKey,
    /// The series' `abprof ab --aa` studies, the floor's source.
    pub(crate) aa_studies: Vec<i64>,
    pub(crate) floors: Vec<SeriesFloor>,
    pub(crate) moves: Vec<Move>,
}

#[derive(Debug, Clone, Serialize)]
pub(crate) struct Regressions {
    pub(crate) history: String,
    pub(crate) filters: Filters,
    pub(crate) series: Vec<Series>,
    pub(crate) not_compared: Vec<NotCompared>,
}

/// Every variant by its id, for its samples.
type Variants<'a> = HashMap<i64, &'a VariantRecord>;

/// The accepted samples' values of `metric`, in sample order.
fn accepted_values(variants: &Variants<'_>, variant_id: i64, metric: Metric) -> Vec<f64> {
    variants
        .get(&variant_id)
        .map_or_else(Vec::new, |v| v.samples.iter().filter(|s| s.accepted()).filter_map(|s| s.value(metric)).collect())
}

/// A/A studies' rows of the repeated variant: the change between a variant and itself.
fn is_aa_repeat(r: &HistoryRow) -> bool {
    r.aa && r.position == 1
}

/// The reach of the A/A intervals: the largest |bound| of a variant-against-itself interval.
fn floors(aa: &[&HistoryRow]) -> Vec<SeriesFloor> {
    Metric::every()
        .map(|metric| SeriesFloor {
            metric,
            floor_pct: aa
                .iter()
                .filter_map(|r| r.verdict(super::record::VerdictOn::Metric(metric)))
                .filter_map(|v| v.ci_bounds())
                .map(|(lo, hi)| lo.abs().max(hi.abs()))
                .reduce(f64::max),
        })
        // An energy metric where no A/A study measured it is not the host's: left out, not "?".
        .filter(|f| !f.metric.is_energy() || f.floor_pct.is_some())
        .collect()
}

/// Two studies' values as the summary's interval takes them: each value in a block of its own,
/// the later study's after the earlier's, since two studies share no interleaved block
/// (docs/methodology.md §15). [`change_ci`] then takes Welch's t-interval of the two sides' mean
/// logs, exactly as it does within a study whose two variants never shared a block.
fn apart(earlier: &[f64], later: &[f64]) -> (Vec<Measured>, Vec<Measured>) {
    let at = |xs: &[f64], from: usize| -> Vec<Measured> {
        xs.iter().enumerate().map(|(i, &value)| Measured { block: from + i, value }).collect()
    };
    (at(earlier, 0), at(later, earlier.len()))
}

/// The move of `metric` onto `to` from the latest of `earlier` (comparable studies of the same
/// variant, latest first) that has accepted samples of it; `None` when none has, or `to` has none.
fn one_move<'a>(
    variants: &Variants<'_>,
    earlier: impl Iterator<Item = &'a HistoryRow>,
    to: &HistoryRow,
    metric: Metric,
    floor_pct: Option<f64>,
) -> Option<Move> {
    let b = accepted_values(variants, to.variant_id, metric);
    if b.is_empty() {
        return None;
    }
    for from in earlier {
        let a = accepted_values(variants, from.variant_id, metric);
        if a.is_empty() {
            continue;
        }
        let (ma, mb) = (median(&a), median(&b));
        let (from_values, to_values) = apart(&a, &b);
        let ci = change_ci(&from_values, &to_values, 0.95, None);
        let change_pct = ma.zip(mb).map(|(x, y)| pct_change(x, y));
        // Beyond the floor: the interval excludes no change, and the change is larger than an
        // A/A interval reaches (docs/methodology.md §15).
        let beyond_floor = floor_pct.zip(ci).zip(change_pct).map(|((f, c), x)| !c.contains_zero() && x.abs() > f);
        return Some(Move {
            label: to.label.clone(),
            metric,
            from: StudyRef::of(from),
            to: StudyRef::of(to),
            from_median: ma,
            to_median: mb,
            from_samples: a.len(),
            to_samples: b.len(),
            change_pct,
            ci,
            verdict: Verdict::from_ci(ci.as_ref(), metric.higher_is_better()),
            floor_pct,
            beyond_floor,
            changed: variant_changes(from, to),
        });
    }
    None
}

/// Every move of every variant whose later study the filters keep.
pub(crate) fn regressions(studies: &[StoredStudy], history: String, filters: Filters) -> Regressions {
    let variants: Variants<'_> =
        studies.iter().flat_map(|s| s.variant_ids.iter().copied().zip(&s.record.variants)).collect();
    let all = rows(studies);
    let points: Vec<&HistoryRow> = all.iter().filter(|r| r.kind != RecordKind::Exactness && !is_aa_repeat(r)).collect();
    let aa: Vec<&HistoryRow> = all.iter().filter(|r| is_aa_repeat(r)).collect();
    // Each point's setup once, and each label's points in order: a history of thousands of
    // studies is walked once, each move found by looking back from its study.
    let keys: Vec<SeriesKey> = points.iter().map(|r| SeriesKey::of(r)).collect();
    let mut by_label: HashMap<&str, Vec<usize>> = HashMap::new();
    for (j, r) in points.iter().enumerate() {
        by_label.entry(r.label.as_str()).or_default().push(j);
    }
    let mut series: Vec<Series> = Vec::new();
    let mut not_compared = Vec::new();
    for (j, to) in points.iter().enumerate() {
        if !filters.matches(to) {
            continue;
        }
        let mine = &by_label[to.label.as_str()];
        let earlier = &mine[..mine.partition_point(|&i| i < j)];
        let Some(&last) = earlier.last() else { continue };
        // The comparable earlier points, latest first, walked lazily: a move stops at the first
        // with accepted samples of its metric.
        let comparable_earlier = || earlier.iter().rev().filter(|&&i| keys[i].same(&keys[j])).map(|&i| points[i]);
        if comparable_earlier().next().is_none() {
            not_compared.push(NotCompared {
                label: to.label.clone(),
                from: StudyRef::of(points[last]),
                to: StudyRef::of(to),
                reasons: differences(&keys[last], &keys[j]),
            });
            continue;
        }
        let key = keys[j].clone();
        let at = match series.iter().position(|s| s.key.same(&key)) {
            Some(i) => i,
            None => {
                let mine: Vec<&HistoryRow> = aa.iter().copied().filter(|r| SeriesKey::of(r).same(&key)).collect();
                let mut ids: Vec<i64> = mine.iter().map(|r| r.study).collect();
                ids.dedup();
                series.push(Series { key, aa_studies: ids, floors: floors(&mine), moves: Vec::new() });
                series.len() - 1
            }
        };
        // Every metric the summary judges, speed and energy (docs/methodology.md §9.6); a metric
        // no sample of the two studies measured has no move.
        for metric in Metric::every() {
            let floor = series[at].floors.iter().find(|f| f.metric == metric).and_then(|f| f.floor_pct);
            if let Some(m) = one_move(&variants, comparable_earlier(), to, metric, floor) {
                series[at].moves.push(m);
            }
        }
    }
    Regressions { history, filters, series, not_compared }
}

#[cfg(test)]
mod tests {
    use super::super::record::testing::{study, variant};
    use super::super::record::StudyRecord;
    use super::*;

    fn history(studies: &[StudyRecord]) -> (tempfile::TempDir, Vec<StoredStudy>) {
        use super::super::row::Store;
        let d = tempfile::tempdir().unwrap();
        let mut h = super::super::sqlite::SqliteStore::open(&d.path().join("h.db")).unwrap();
        for s in studies {
            h.record(s).unwrap();
        }
        let stored = h.studies().unwrap();
        (d, stored)
    }

    fn decode(r: &Regressions) -> Vec<&Move> {
        r.series.iter().flat_map(|s| &s.moves).filter(|m| m.metric == Metric::ServerDecodeTps).collect()
    }

    /// A move is judged by the summary's own interval (src/summary/stats.rs `change_ci`, the one
    /// `abprof ab` calls): on the two studies' accepted samples, which share no block, it is the
    /// interval a study gets for two variants that never shared a block.
    #[test]
    fn a_move_between_comparable_studies_carries_the_summarys_interval_of_the_same_samples() {
        let (a, b) = ([10.0, 10.2, 9.9], [8.0, 8.1, 7.9]);
        let (_d, conn) = history(&[
            study("one", 0, vec![variant("base", "1", &a)]),
            study("two", 60, vec![variant("base", "2", &b)]),
        ]);
        let r = regressions(&conn, "h.db".into(), Filters::default());
        let m = decode(&r);
        assert_eq!(m.len(), 1);
        let in_blocks = |xs: &[f64], from: usize| -> Vec<Measured> {
            xs.iter().enumerate().map(|(i, &value)| Measured { block: from + i, value }).collect()
        };
        let summary = change_ci(&in_blocks(&a, 0), &in_blocks(&b, 100), 0.95, None).unwrap();
        assert_eq!(m[0].ci, Some(summary), "the summary's interval, on the two studies' accepted samples");
        assert_eq!(summary.method, crate::summary::stats::CiMethod::WelchT);
        assert_eq!(m[0].verdict, Verdict::from_ci(Some(&summary), true));
        assert!((m[0].change_pct.unwrap() - pct_change(10.0, 8.0)).abs() < 1e-9);
        assert_eq!(m[0].verdict, Verdict::Slower);
        assert_eq!((m[0].floor_pct, m[0].beyond_floor), (None, None), "no A/A study: the floor is unknown");
        assert!(m[0].changed[0].starts_with("binary 111111111111 → 222222222222"), "{:?}", m[0].changed);
        assert!(r.not_compared.is_empty());
    }

    /// Below 3 accepted values a side the move has no interval and no verdict, as a study's
    /// comparison has none (docs/methodology.md §8 "too few samples").
    #[test]
    fn a_move_of_two_samples_a_side_is_too_few_samples() {
        let (_d, conn) = history(&[
            study("one", 0, vec![variant("base", "1", &[10.0, 10.2])]),
            study("two", 60, vec![variant("base", "2", &[8.0, 8.1, 7.9])]),
        ]);
        let r = regressions(&conn, "h.db".into(), Filters::default());
        let m = decode(&r);
        assert_eq!(m.len(), 1);
        assert_eq!((m[0].ci, m[0].verdict), (None, Verdict::TooFewSamples));
        assert!((m[0].change_pct.unwrap() - pct_change(10.1, 8.0)).abs() < 1e-9, "the medians still move");
        assert_eq!(m[0].beyond_floor, None);
    }

    /// The energy metrics of #22 have series as the speed metrics do: each sample's J/token is
    /// stored and a move is judged on it by the same interval, with the metric's own word.
    #[test]
    fn energy_metrics_move_from_study_to_study_with_the_summarys_interval() {
        let with_energy = |name: &str, minutes: i64, j: &[f64]| {
            let mut s = study(name, minutes, vec![variant("base", "1", &[10.0, 10.1, 9.9])]);
            for (sample, j) in s.variants[0].samples.iter_mut().zip(j) {
                sample.more_metrics = vec![(Metric::DecodeJPerToken, *j), (Metric::DecodeTokensPerJ, 1.0 / j)];
            }
            s
        };
        let (a, b) = ([1.14, 1.15, 1.13], [1.93, 1.95, 1.94]);
        let (_d, conn) = history(&[with_energy("one", 0, &a), with_energy("two", 60, &b)]);
        let r = regressions(&conn, "h.db".into(), Filters::default());
        let of = |metric: Metric| -> Vec<&Move> {
            r.series.iter().flat_map(|s| &s.moves).filter(|m| m.metric == metric).collect()
        };
        let j = of(Metric::DecodeJPerToken);
        assert_eq!(j.len(), 1, "{r:#?}");
        let (from, to) = apart(&a, &b);
        assert_eq!(j[0].ci, change_ci(&from, &to, 0.95, None));
        assert_eq!((j[0].from_samples, j[0].to_samples), (3, 3));
        assert_eq!(j[0].verdict, Verdict::Slower, "more joules a token: worse");
        assert_eq!(Metric::DecodeJPerToken.verdict_word(j[0].verdict), "less efficient");
        assert_eq!(of(Metric::DecodeTokensPerJ)[0].verdict, Verdict::Slower);
        assert!(of(Metric::DecodeMeanPowerW).is_empty(), "a metric no sample measured has no move");
        assert_eq!(decode(&r).len(), 1, "the speed metrics as before");
        let floors: Vec<Metric> = r.series[0].floors.iter().map(|f| f.metric).collect();
        assert_eq!(
            floors,
            Metric::speed().collect::<Vec<_>>(),
            "no A/A study measured energy: no energy floor to print"
        );
    }

    #[test]
    fn a_study_on_another_model_is_never_compared_and_says_why() {
        let mut other = study("smol", 60, vec![variant("base", "1", &[50.0, 51.0])]);
        other.variants[0].model_sha256 = Some("b".repeat(64));
        other.variants[0].model_path = Some("/models/smol.gguf".into());
        let (_d, conn) = history(&[study("one", 0, vec![variant("base", "1", &[10.0, 10.5])]), other]);
        let r = regressions(&conn, "h.db".into(), Filters::default());
        assert!(decode(&r).is_empty());
        assert_eq!(r.not_compared.len(), 1);
        let line = r.not_compared[0].line();
        assert_eq!(
            line,
            "not compared: base study #2 with #1: model sha256 differs (aaaaaaaaaaaa target.gguf vs bbbbbbbbbbbb smol.gguf)"
        );
    }

    #[test]
    fn the_aa_floor_of_the_series_judges_each_move() {
        let mut aa = study(
            "aa",
            30,
            vec![variant("base", "1", &[10.0, 10.1, 10.05]), variant("base-again", "1", &[10.1, 10.2, 10.15])],
        );
        aa.aa = true;
        aa.variants[1].verdicts = vec![super::super::record::VerdictRow {
            metric: super::super::record::VerdictOn::Metric(Metric::ServerDecodeTps),
            median: Some(10.15),
            mean: None,
            change_pct: Some(-0.5),
            ci: Some(ChangeCi::bounds(-1.5, 1.2, 0.95)),
            verdict: None,
        }];
        let (_d, conn) = history(&[
            study("one", 0, vec![variant("base", "1", &[10.0, 10.2, 9.9])]),
            aa,
            study("two", 60, vec![variant("base", "2", &[8.0, 8.1, 7.9])]),
            study("three", 90, vec![variant("base", "2", &[8.0, 8.05, 7.95])]),
        ]);
        let r = regressions(&conn, "h.db".into(), Filters::default());
        assert_eq!(r.series.len(), 1);
        assert_eq!(r.series[0].aa_studies, [2]);
        let m = decode(&r);
        assert_eq!(m.iter().map(|m| (m.from.study, m.to.study)).collect::<Vec<_>>(), [(1, 2), (2, 3), (3, 4)]);
        assert!(m.iter().all(|m| m.floor_pct == Some(1.5)));
        assert_eq!(m[1].beyond_floor, Some(true), "-20%, the interval excluding 0, is beyond ±1.5%: {:?}", m[1].ci);
        assert_eq!(m[2].beyond_floor, Some(false), "{:?}", m[2].ci);
        assert_eq!(m[0].verdict, Verdict::NoClearDifference);
        assert!(r.series.iter().flat_map(|s| &s.moves).all(|m| m.label == "base"), "the A/A repeat is no series");

        // --since keeps the moves that land on a study started on or after it.
        let since =
            Filters { since: super::super::row::unix_seconds("2026-11-30T11:00:00+00:00"), ..Filters::default() };
        let r = regressions(&conn, "h.db".into(), since);
        assert_eq!(decode(&r).iter().map(|m| (m.from.study, m.to.study)).collect::<Vec<_>>(), [(2, 3), (3, 4)]);
    }
}
