//! The noise this host showed last: the latest `abprof ab --aa` study recorded for it in the
//! results history, its variant-against-itself interval (docs/methodology.md §15).
use super::finding::Finding;
use crate::history::{list, Filters, History, HistoryLocation, HistoryRow, VerdictOn};
use crate::summary::Metric;

const NAME: &str = "last A/A";

/// The metric an A/A study's spread is told by, best first.
const METRICS: [Metric; 2] = [Metric::ServerDecodeTps, Metric::ServerPrefillTps];

const RUN_ONE: &str = "run one: `abprof ab --aa --variant NAME=PATH/llama-server --model GGUF --workload screening --prompt-tokens 512 --ignore-eos --root DIR` (its interval is this host's noise floor)";

pub(crate) fn finding(location: Option<&HistoryLocation>, host: &str) -> Finding {
    let Some(location) = location else {
        return Finding::not_present(NAME, "no results history: set XDG_DATA_HOME or HOME, or pass --history DB", None);
    };
    let history = match History::open_existing(location) {
        Ok(Some(h)) => Some(h),
        Ok(None) => None,
        Err(e) => return read_error(location, &e.to_string()),
    };
    let studies = match history.map(|mut h| h.studies()) {
        Some(Ok(s)) => s,
        Some(Err(e)) => return read_error(location, &e.to_string()),
        None => Vec::new(),
    };
    let filters = Filters { host: Some(host.to_string()), ..Filters::default() };
    let rows = list(&studies, Vec::new(), location.to_string(), filters).rows;
    match rows.iter().rfind(|r| r.aa && r.position == 1) {
        Some(r) => match spread(r) {
            Ok(line) => Finding::ok(NAME, line),
            // An A/A study with too few accepted samples gives no noise floor to read.
            Err(line) => Finding::not_present(NAME, line, Some(RUN_ONE.into())),
        },
        None => Finding::not_present(
            NAME,
            format!("no A/A study recorded for {host} in {location} yet"),
            Some(RUN_ONE.into()),
        ),
    }
}

fn read_error(location: &HistoryLocation, e: &str) -> Finding {
    Finding::warn(
        NAME,
        format!("cannot read the history {location}: {e}"),
        "pass --history DB|URL of a history you can read",
    )
}

/// "study #2 (started …): server-decode-tps −0.50%, 95% interval −1.50% to +1.20% (half-width
/// 1.35%), 3 of 3 samples accepted"; the line saying it has no interval otherwise.
fn spread(r: &HistoryRow) -> Result<String, String> {
    let when = r.started_at.as_deref().unwrap_or("start unknown");
    let head = format!("study #{} ({}, {when})", r.study, r.folder);
    let verdict = METRICS.iter().find_map(|m| {
        let v = r.verdict(VerdictOn::Metric(*m))?;
        Some((VerdictOn::Metric(*m).name(), v.change_pct, v.ci_bounds()?))
    });
    let samples = format!("{} of {} samples accepted", r.accepted, r.planned);
    match verdict {
        Some((metric, change, (lo, hi))) => Ok(format!(
            "{head}: {metric} {}, 95% interval {lo:+.2}% to {hi:+.2}% (half-width {:.2}%), {samples}",
            change.map_or_else(|| "change ?".into(), |c| format!("{c:+.2}%")),
            (hi - lo) / 2.0
        )),
        None => Err(format!("the latest A/A, {head}, has no interval ({samples}): no noise floor to read")),
    }
}

#[cfg(test)]
mod tests {
    use super::super::finding::Status;
    use super::*;
    use crate::history::testing::{study, variant};
    use crate::history::VerdictRow;
    use crate::summary::stats::ChangeCi;

    fn aa_study(minutes: i64, lo: f64, hi: f64) -> crate::history::StudyRecord {
        let mut aa = study(
            &format!("aa-{minutes}"),
            minutes,
            vec![variant("base", "1", &[10.0, 10.1, 10.05]), variant("base-again", "1", &[10.1, 10.2, 10.15])],
        );
        aa.aa = true;
        aa.variants[1].verdicts = vec![VerdictRow {
            metric: VerdictOn::Metric(Metric::ServerDecodeTps),
            median: Some(10.15),
            mean: None,
            change_pct: Some((lo + hi) / 2.0),
            ci: Some(ChangeCi::bounds(lo, hi, 0.95)),
            verdict: None,
        }];
        aa
    }

    /// Through the real SQLite backend: the latest A/A study of this host is the one reported.
    #[test]
    fn the_latest_aa_study_of_this_host_gives_its_interval() {
        let d = tempfile::tempdir().unwrap();
        let location = HistoryLocation::Sqlite(d.path().join("history.db"));
        let f = finding(Some(&location), "vm");
        assert_eq!(f.status, Status::NotPresent);
        assert!(f.value.starts_with("no A/A study recorded for vm in "), "{}", f.value);
        assert!(f.fix.unwrap().contains("abprof ab --aa"));

        let mut h = History::open(&location).unwrap();
        h.record(&study("plain", 0, vec![variant("base", "1", &[10.0, 10.2])])).unwrap();
        assert_eq!(finding(Some(&location), "vm").status, Status::NotPresent, "an A/B study is no A/A");
        h.record(&aa_study(30, -3.0, 3.0)).unwrap();
        h.record(&aa_study(60, -1.5, 1.2)).unwrap();
        drop(h);
        let f = finding(Some(&location), "vm");
        assert_eq!(f.status, Status::Ok);
        assert!(f.value.starts_with("study #3 (/studies/aa-60, 2026-11-30T11:00:00+00:00)"), "{}", f.value);
        assert!(f.value.contains("-1.50% to +1.20% (half-width 1.35%)"), "{}", f.value);
        assert_eq!(finding(Some(&location), "another-host").status, Status::NotPresent);
        // The latest A/A accepted too few samples for an interval: no floor, and the fix again.
        let mut h = History::open(&location).unwrap();
        let mut empty = aa_study(90, 0.0, 0.0);
        empty.variants[1].verdicts.clear();
        h.record(&empty).unwrap();
        drop(h);
        let f = finding(Some(&location), "vm");
        assert_eq!(f.status, Status::NotPresent);
        assert!(f.value.starts_with("the latest A/A, study #4") && f.value.contains("has no interval"), "{}", f.value);
        assert!(f.fix.unwrap().contains("abprof ab --aa"));
    }
}
