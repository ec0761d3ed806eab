//! `abprof history --regressions`: how each variant's median moved from one comparable study to
//! the next, with the confidence interval of the move and the series' A/A noise floor
//! (docs/methodology.md §14).
use super::comparable::{comparable, differences, variant_changes, SeriesKey};
use super::query::{accepted_values, rows, Filters, HistoryRow};
use super::record::{metric_name, StudyKind};
use super::HistoryError;
use crate::summary::stats::{bootstrap_change_ci, median, pct_change, ChangeCi, Verdict};
use crate::summary::stats::{DEFAULT_RESAMPLES, DEFAULT_SEED};
use crate::summary::Metric;
use rusqlite::Connection;
use serde::Serialize;
use std::path::PathBuf;

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
    /// The bootstrap interval of the ratio of the two studies' medians (docs/methodology.md §8).
    pub(crate) ci: Option<ChangeCi>,
    pub(crate) verdict: Verdict,
    /// The series' A/A noise floor of this metric, % (None: no A/A study in the series).
    pub(crate) floor_pct: Option<f64>,
    /// The whole interval lies beyond ±floor; None when the floor or the interval is unknown.
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
    /// The largest |median change| between a variant and itself in the series' A/A studies.
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
    pub(crate) history: PathBuf,
    pub(crate) filters: Filters,
    pub(crate) series: Vec<Series>,
    pub(crate) not_compared: Vec<NotCompared>,
}

/// The samples table's column of a metric.
fn column(m: Metric) -> &'static str {
    match m {
        Metric::ServerDecodeTps => "decode_tps",
        Metric::ServerPrefillTps => "prefill_tps",
        Metric::StrictStreamedTps => "strict_tps",
        Metric::TtftMs => "ttft_ms",
    }
}

/// A/A studies' rows of the repeated variant: the change between a variant and itself.
fn is_aa_repeat(r: &HistoryRow) -> bool {
    r.aa && r.position == 1
}

fn floors(aa: &[&HistoryRow]) -> Vec<SeriesFloor> {
    Metric::ALL
        .into_iter()
        .map(|metric| SeriesFloor {
            metric,
            floor_pct: aa
                .iter()
                .filter_map(|r| r.verdict(metric_name(metric)).and_then(|v| v.change_pct))
                .map(f64::abs)
                .reduce(f64::max),
        })
        .collect()
}

/// The move of `metric` onto `to` from the latest of `earlier` (comparable studies of the same
/// variant, latest first) that has accepted samples of it; `None` when none has, or `to` has none.
fn one_move(
    conn: &Connection,
    earlier: &[&HistoryRow],
    to: &HistoryRow,
    metric: Metric,
    floor_pct: Option<f64>,
) -> Result<Option<Move>, HistoryError> {
    let b = accepted_values(conn, to.variant_id, column(metric))?;
    if b.is_empty() {
        return Ok(None);
    }
    for from in earlier {
        let a = accepted_values(conn, from.variant_id, column(metric))?;
        if a.is_empty() {
            continue;
        }
        let (ma, mb) = (median(&a), median(&b));
        let ci = bootstrap_change_ci(&a, &b, DEFAULT_RESAMPLES, DEFAULT_SEED, 0.95);
        let beyond_floor = floor_pct.zip(ci).map(|(f, c)| c.lo_pct > f || c.hi_pct < -f);
        return Ok(Some(Move {
            label: to.label.clone(),
            metric,
            from: StudyRef::of(from),
            to: StudyRef::of(to),
            from_median: ma,
            to_median: mb,
            from_samples: a.len(),
            to_samples: b.len(),
            change_pct: ma.zip(mb).map(|(x, y)| pct_change(x, y)),
            ci,
            verdict: Verdict::from_ci(ci.as_ref(), metric.higher_is_better()),
            floor_pct,
            beyond_floor,
            changed: variant_changes(from, to),
        }));
    }
    Ok(None)
}

/// Every move of every variant whose later study the filters keep.
pub(crate) fn regressions(conn: &Connection, history: PathBuf, filters: Filters) -> Result<Regressions, HistoryError> {
    let all = rows(conn)?;
    let points: Vec<&HistoryRow> = all.iter().filter(|r| r.kind != StudyKind::Exactness && !is_aa_repeat(r)).collect();
    let aa: Vec<&HistoryRow> = all.iter().filter(|r| is_aa_repeat(r)).collect();
    let mut series: Vec<Series> = Vec::new();
    let mut not_compared = Vec::new();
    for (j, to) in points.iter().enumerate() {
        if !filters.matches(to) {
            continue;
        }
        let earlier: Vec<&HistoryRow> = points[..j].iter().copied().filter(|r| r.label == to.label).collect();
        let Some(last) = earlier.last() else { continue };
        let comparable_earlier: Vec<&HistoryRow> =
            earlier.iter().rev().copied().filter(|r| comparable(r, to)).collect();
        if comparable_earlier.is_empty() {
            not_compared.push(NotCompared {
                label: to.label.clone(),
                from: StudyRef::of(last),
                to: StudyRef::of(to),
                reasons: differences(&SeriesKey::of(last), &SeriesKey::of(to)),
            });
            continue;
        }
        let key = SeriesKey::of(to);
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
        for metric in Metric::ALL {
            let floor = series[at].floors.iter().find(|f| f.metric == metric).and_then(|f| f.floor_pct);
            if let Some(m) = one_move(conn, &comparable_earlier, to, metric, floor)? {
                series[at].moves.push(m);
            }
        }
    }
    Ok(Regressions { history, filters, series, not_compared })
}
