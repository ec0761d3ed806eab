//! The results history as people, programs and pull requests read it: the listing, the
//! regressions between comparable studies, and what an import did.
use super::table::{Column, Text};
use super::{num, signed_pct, Render, Table};
use crate::history::{
    HistoryList, HistoryRow, Imported, Move, NotCompared, RecordedStudy, Regressions, Series, SeriesFloor, VerdictOn,
};
use crate::summary::Metric;
use serde::Serialize;
use serde_json::json;
use std::fmt::Write;

fn short(s: Option<&str>) -> String {
    s.map_or_else(|| "?".into(), |s| s.chars().take(12).collect())
}

/// A time as `YYYY-MM-DD HH:MM` (the recorded RFC 3339 string otherwise).
fn when(t: Option<&str>) -> String {
    t.map_or_else(
        || "?".into(),
        |t| {
            chrono::DateTime::parse_from_rfc3339(t)
                .map(|d| d.format("%Y-%m-%d %H:%M").to_string())
                .unwrap_or_else(|_| t.into())
        },
    )
}

const DECODE: VerdictOn = VerdictOn::Metric(Metric::ServerDecodeTps);

/// One study's variants as the listing shows them: label, binary, commit, KV type, accepted
/// samples, decode median and the change with its interval and verdict.
fn variants_table(rows: &[&HistoryRow]) -> Table {
    let mut t =
        Table::new(["label", "binary", "commit", "kv", "accepted", "decode"].iter().map(|h| Column::text(h)).collect());
    for r in rows {
        let d = r.verdict(DECODE);
        let change = match d {
            Some(d) if d.change_pct.is_some() => format!(
                "  {} [{}, {}] {}{}",
                signed_pct(d.change_pct),
                signed_pct(d.ci.map(|c| c.lo_pct)),
                signed_pct(d.ci.map(|c| c.hi_pct)),
                d.verdict.as_deref().unwrap_or(""),
                r.mei_pct
                    .filter(|_| d.verdict.as_deref().is_some_and(|w| w.contains("the margin")))
                    .map_or(String::new(), |m| format!(" ±{m}%"))
            ),
            // No change to print ("too few samples" gives none, docs/methodology.md §8): the verdict.
            Some(d) => d.verdict.as_deref().map_or(String::new(), |w| format!("  {w}")),
            None => String::new(),
        };
        t.push_text(vec![
            r.label.clone(),
            format!("binary {}", short(r.binary_sha256.as_deref())),
            format!("commit {}", r.commit.as_deref().unwrap_or("?")),
            format!("kv {}", r.kv.as_deref().unwrap_or("—")),
            format!("accepted {}/{}", r.accepted, r.planned),
            match tests_of(r).len() {
                0 => format!("decode {} tok/s{change}", num(d.and_then(|d| d.median), 2)),
                n => format!("llama-bench, {n} tests (below)"),
            },
        ]);
    }
    t
}

/// The tests a variant's stored verdicts judge, in the order stored: a llama-bench study's
/// (docs/methodology.md §4.4); empty for a server study.
fn tests_of(r: &HistoryRow) -> Vec<Metric> {
    let tests = r.verdicts.iter().filter_map(|v| match v.metric {
        VerdictOn::Metric(m) if m.llama_bench_test().is_some() => Some(m),
        _ => None,
    });
    tests.collect()
}

/// A llama-bench study's tests in compare-llama-bench.py's shape, a row per candidate and test
/// against the baseline (the study's first row); None for a server study.
fn llama_bench_tests(study: &[&HistoryRow]) -> Option<Table> {
    let (base, candidates) = study.split_first()?;
    let tests = tests_of(base);
    if tests.is_empty() || candidates.is_empty() {
        return None;
    }
    let mut t = Table::new(
        ["candidate", "Test", "t/s baseline", "t/s candidate", "Speedup", "change", "95% CI", "verdict"]
            .iter()
            .enumerate()
            .map(|(i, h)| if (2..=6).contains(&i) { Column::number(h) } else { Column::text(h) })
            .collect(),
    );
    for c in candidates {
        for &m in &tests {
            let (b, x) = (base.verdict(VerdictOn::Metric(m)), c.verdict(VerdictOn::Metric(m)));
            let mean = |v: Option<&crate::history::VerdictRow>| v.and_then(|v| v.mean);
            let speedup = mean(x).zip(mean(b)).filter(|(_, b)| *b > 0.0).map(|(x, b)| x / b);
            t.push_text(vec![
                c.label.clone(),
                m.short_title().into(),
                num(mean(b), 2),
                num(mean(x), 2),
                num(speedup, 2),
                signed_pct(x.and_then(|v| v.change_pct)),
                x.and_then(|v| v.ci).map_or_else(|| "—".into(), |c| format!("[{:+.2}%, {:+.2}%]", c.lo_pct, c.hi_pct)),
                x.and_then(|v| v.verdict.clone()).unwrap_or_default(),
            ]);
        }
    }
    Some(t)
}

impl Render for HistoryList {
    fn text(&self) -> String {
        let mut o = String::new();
        let mut shown: Vec<i64> = self.rows.iter().map(|r| r.study).collect();
        shown.dedup();
        let _ =
            writeln!(o, "results history {}: {} of {} studies shown", self.history, shown.len(), self.studies_total);
        // Each study's heading line, then its variants' rows aligned by the table model.
        let mut at = 0;
        while at < self.rows.len() {
            let r = &self.rows[at];
            let _ = writeln!(
                o,
                "\n#{} {}  {}{}  {}  model {} {} · prompt {} · output {} · host {}{}",
                r.study,
                when(r.started_at.as_deref()),
                r.kind.name(),
                if r.aa { " (A/A)" } else { "" },
                r.folder,
                r.model_name().unwrap_or_else(|| "?".into()),
                short(r.model_sha256.as_deref()),
                r.prompt_tokens.map_or("?".into(), |n| n.to_string()),
                r.output_tokens.map_or("?".into(), |n| n.to_string()),
                r.host.as_deref().unwrap_or("?"),
                r.outcome.as_ref().map_or(String::new(), |o| format!(" · outcome {o}")),
            );
            let study: Vec<&HistoryRow> = self.rows[at..].iter().take_while(|x| x.study == r.study).collect();
            at += study.len();
            let t = variants_table(&study);
            o.push_str(&t.render(&Text::rows(&t, "  ")));
            if let Some(t) = llama_bench_tests(&study) {
                let _ = writeln!(
                    o,
                    "  llama-bench tests (compare-llama-bench.py's table, t/s the means of the accepted samples; the study's change, 95% CI and verdict):"
                );
                o.push_str(&t.render(&Text::of(&t, "    ", true)));
            }
        }
        if !self.llama_bench.is_empty() {
            let _ = writeln!(
                o,
                "\nllama-bench results (imported: llama-bench's own runs, mean ± sd of its repetitions; never judged with the studies):"
            );
            let t = bench_table(&self.llama_bench);
            o.push_str(&t.render(&Text::rows(&t, "  ")));
        }
        o
    }

    /// One row per recorded variant.
    fn table(&self) -> Table {
        let mut t = Table::named(&[
            "study",
            "started_at",
            "kind",
            "aa",
            "folder",
            "label",
            "binary_sha256",
            "commit",
            "kv",
            "model",
            "model_sha256",
            "prompt_tokens",
            "output_tokens",
            "host",
            "accepted",
            "planned",
            "decode_tps_median",
            "change_pct",
            "ci_lo_pct",
            "ci_hi_pct",
            "verdict",
            "outcome",
        ]);
        for r in &self.rows {
            let d = r.verdict(DECODE);
            t.push_row(&ListedVariant {
                row: r,
                model: r.model_name(),
                decode_tps_median: d.and_then(|d| d.median),
                change_pct: d.and_then(|d| d.change_pct),
                ci_lo_pct: d.and_then(|d| d.ci).map(|c| c.lo_pct),
                ci_hi_pct: d.and_then(|d| d.ci).map(|c| c.hi_pct),
                verdict: d.and_then(|d| d.verdict.as_deref()),
            });
        }
        t
    }
}

/// A row of the listing's table: the recorded variant's own fields, then its model's name and
/// its decode verdict.
#[derive(Serialize)]
struct ListedVariant<'a> {
    #[serde(flatten)]
    row: &'a HistoryRow,
    model: Option<String>,
    decode_tps_median: Option<f64>,
    change_pct: Option<f64>,
    ci_lo_pct: Option<f64>,
    ci_hi_pct: Option<f64>,
    verdict: Option<&'a str>,
}

/// "beyond the A/A floor ±1.20%", "within the A/A floor ±1.20%", or why it cannot be said.
fn against_floor(m: &Move) -> String {
    match (m.floor_pct, m.beyond_floor) {
        (None, _) => "A/A floor unknown".into(),
        (Some(fl), Some(true)) => format!("BEYOND the A/A floor ±{fl:.2}%"),
        (Some(fl), Some(false)) => format!("within the A/A floor ±{fl:.2}%"),
        (Some(fl), None) => format!("A/A floor ±{fl:.2}%, no interval"),
    }
}

fn floors_line(aa: &[i64], floors: &[SeriesFloor]) -> String {
    if aa.is_empty() {
        return "A/A noise floor: unknown (no `abprof ab --aa` study in this series)".into();
    }
    let studies = aa.iter().map(|s| format!("#{s}")).collect::<Vec<_>>().join(", ");
    let each = floors
        .iter()
        .map(|fl| format!("{} ±{}", fl.metric.title(), fl.floor_pct.map_or("?".into(), |p| format!("{p:.2}%"))))
        .collect::<Vec<_>>()
        .join(", ");
    format!("A/A noise floor (studies {studies}): {each}")
}

/// A series' moves, one row each: variant, metric, the two studies, the medians, the change with
/// its interval, the verdict, the A/A floor's word and what changed in the variant.
fn moves_table(moves: &[Move]) -> Table {
    let mut t = Table::new(
        ["variant", "metric", "studies", "medians", "change", "verdict", "floor", "changed"]
            .iter()
            .map(|h| Column::text(h))
            .collect(),
    );
    for m in moves {
        let d = m.metric.decimals();
        t.push_text(vec![
            m.label.clone(),
            m.metric.title().to_string(),
            format!("#{} → #{}", m.from.study, m.to.study),
            format!("{} → {}", num(m.from_median, d), num(m.to_median, d)),
            format!(
                "{} [{}, {}]",
                signed_pct(m.change_pct),
                signed_pct(m.ci.map(|c| c.lo_pct)),
                signed_pct(m.ci.map(|c| c.hi_pct))
            ),
            m.metric.verdict_word(m.verdict).to_string(),
            format!("({})", against_floor(m)),
            if m.changed.is_empty() {
                "· variant unchanged".to_string()
            } else {
                format!("· {}", m.changed.join(", "))
            },
        ]);
    }
    t
}

impl Render for Regressions {
    fn text(&self) -> String {
        let mut o = String::new();
        let moves: usize = self.series.iter().map(|s| s.moves.len()).sum();
        let _ = writeln!(
            o,
            "regressions in the results history {}: {} series, {} moves, {} not compared",
            self.history,
            self.series.len(),
            moves,
            self.not_compared.len()
        );
        for s in &self.series {
            let _ = writeln!(o, "\nseries: {}", s.key.line());
            let _ = writeln!(o, "  {}", floors_line(&s.aa_studies, &s.floors));
            let t = moves_table(&s.moves);
            o.push_str(&t.render(&Text::rows(&t, "  ")));
        }
        if !self.not_compared.is_empty() {
            let _ = writeln!(o);
        }
        for n in &self.not_compared {
            let _ = writeln!(o, "{}", n.line());
        }
        o
    }

    /// One row per move, then one per pair not compared (its reason in `note`).
    fn table(&self) -> Table {
        let series: Vec<&Series> = self.series.iter().collect();
        regressions_table(&series, &self.not_compared.iter().collect::<Vec<_>>())
    }

    /// One table per host, each headed by it, then the pairs not compared; one host (or none):
    /// the one table.
    fn markdown(&self) -> String {
        let mut hosts: Vec<Option<&str>> = Vec::new();
        for s in &self.series {
            if !hosts.contains(&s.key.host.as_deref()) {
                hosts.push(s.key.host.as_deref());
            }
        }
        if hosts.len() <= 1 {
            return self.table().markdown();
        }
        let mut o = String::new();
        for h in hosts {
            let mine: Vec<&Series> = self.series.iter().filter(|s| s.key.host.as_deref() == h).collect();
            let _ = writeln!(o, "### host {}\n", h.unwrap_or("unknown"));
            let _ = writeln!(o, "{}", regressions_table(&mine, &[]).markdown());
        }
        if !self.not_compared.is_empty() {
            let _ = writeln!(o, "### not compared\n");
            o.push_str(&regressions_table(&[], &self.not_compared.iter().collect::<Vec<_>>()).markdown());
        }
        o
    }
}

/// The moves of `series`, then the pairs `not_compared`, as one table.
fn regressions_table(series: &[&Series], not_compared: &[&NotCompared]) -> Table {
    let mut t = Table::named(&[
        "series",
        "label",
        "metric",
        "from_study",
        "to_study",
        "from_started_at",
        "to_started_at",
        "from_median",
        "to_median",
        "change_pct",
        "ci_lo_pct",
        "ci_hi_pct",
        "verdict",
        "aa_floor_pct",
        "beyond_floor",
        "changed",
        "note",
    ]);
    for s in series {
        for m in &s.moves {
            t.push(vec![
                json!(s.key.line()),
                json!(m.label),
                json!(m.metric),
                json!(m.from.study),
                json!(m.to.study),
                json!(m.from.started_at),
                json!(m.to.started_at),
                json!(m.from_median),
                json!(m.to_median),
                json!(m.change_pct),
                json!(m.ci.map(|c| c.lo_pct)),
                json!(m.ci.map(|c| c.hi_pct)),
                json!(m.metric.verdict_word(m.verdict)),
                json!(m.floor_pct),
                json!(m.beyond_floor),
                json!(m.changed.join("; ")),
                json!(if m.floor_pct.is_none() { "A/A floor unknown" } else { "" }),
            ]);
        }
    }
    for n in not_compared {
        let mut row = vec![serde_json::Value::Null; 17];
        row[1] = json!(n.label);
        row[3] = json!(n.from.study);
        row[4] = json!(n.to.study);
        row[5] = json!(n.from.started_at);
        row[6] = json!(n.to.started_at);
        row[16] = json!(n.line());
        t.push(row);
    }
    t
}

/// Where a finished run went in the history, printed after its result.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct RecordedIn<'a> {
    pub(crate) history: &'a str,
    pub(crate) study: &'a RecordedStudy,
}

impl Render for RecordedIn<'_> {
    fn text(&self) -> String {
        let s = self.study;
        if s.new {
            format!(
                "history: recorded as study #{} in {} ({} samples, one transaction in {:.1} ms)\n",
                s.id, self.history, s.samples, s.write_ms
            )
        } else {
            format!("history: already in {} as study #{}\n", self.history, s.id)
        }
    }
}

/// What `abprof history import` did.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct ImportReport {
    pub(crate) history: String,
    pub(crate) folders: Vec<Imported>,
}

impl Render for ImportReport {
    fn text(&self) -> String {
        let mut o = String::new();
        for folder in &self.folders {
            for s in &folder.studies {
                if s.new {
                    let _ = writeln!(
                        o,
                        "imported {} as study #{} ({}, {} samples, one transaction in {:.1} ms)",
                        folder.folder.display(),
                        s.id,
                        s.kind.name(),
                        s.samples,
                        s.write_ms
                    );
                } else {
                    let _ = writeln!(
                        o,
                        "already in the history: {} ({}) is study #{}",
                        folder.folder.display(),
                        s.kind.name(),
                        s.id
                    );
                }
            }
        }
        let _ = writeln!(o, "results history: {}", self.history);
        o
    }

    fn table(&self) -> Table {
        let mut t = Table::named(&["folder", "study", "kind", "new", "samples", "write_ms"]);
        for folder in &self.folders {
            for s in &folder.studies {
                let row = ImportedRow {
                    folder: &folder.folder,
                    study: s.id,
                    kind: s.kind,
                    new: s.new,
                    samples: s.samples,
                    write_ms: s.write_ms,
                };
                t.push_row(&row);
            }
        }
        t
    }
}

impl Render for crate::history::Pushed {
    fn text(&self) -> String {
        let mut o = String::new();
        for s in &self.studies {
            let _ = writeln!(
                o,
                "{} {} ({}, {} samples) {} study #{}",
                if s.new { "pushed" } else { "already there:" },
                s.folder.display(),
                s.kind.name(),
                s.samples,
                if s.new { "as" } else { "is" },
                s.id
            );
        }
        let _ = writeln!(
            o,
            "{} pending {} sent to {} ({} already there); {} is empty",
            self.studies.len(),
            if self.studies.len() == 1 { "study" } else { "studies" },
            self.history,
            self.studies.iter().filter(|s| !s.new).count(),
            self.pending.display()
        );
        for w in &self.waiting {
            let n = format!("{} {}", w.studies, if w.studies == 1 { "study waits" } else { "studies wait" });
            let _ = if w.unnamed {
                writeln!(
                    o,
                    "{n} in {}, the outbox of an earlier abprof, which did not record their database: send them with `abprof history push --outbox {} --history URL`",
                    w.outbox.display(),
                    w.outbox.display()
                )
            } else {
                writeln!(o, "{n} in {}, another database's outbox", w.outbox.display())
            };
        }
        o
    }

    fn table(&self) -> Table {
        let mut t = Table::named(&["folder", "study", "kind", "new", "samples", "write_ms"]);
        for s in &self.studies {
            t.push_row(&ImportedRow {
                folder: &s.folder,
                study: s.id,
                kind: s.kind,
                new: s.new,
                samples: s.samples,
                write_ms: s.write_ms,
            });
        }
        t
    }
}

/// A row of the import's table: the folder, then what was recorded of it.
#[derive(Serialize)]
struct ImportedRow<'a> {
    folder: &'a std::path::Path,
    study: i64,
    kind: crate::history::RecordKind,
    new: bool,
    samples: usize,
    write_ms: f64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::testing::{study, variant};
    use crate::history::{StoredStudy, VerdictRow};
    use crate::summary::stats::Verdict;

    /// A stored "same within the margin" verdict is printed with the study's margin
    /// (docs/methodology.md §15 "The minimum effect of interest").
    #[test]
    fn the_listing_prints_a_same_verdicts_margin() {
        let mut s =
            study("one", 0, vec![variant("f16", "1", &[10.0, 10.1, 10.2]), variant("q8_0", "1", &[10.0, 10.1])]);
        s.mei_pct = Some(2.0);
        s.variants[1].verdicts = vec![VerdictRow {
            metric: VerdictOn::Metric(Metric::ServerDecodeTps),
            median: Some(10.05),
            mean: None,
            change_pct: Some(-0.5),
            ci: Some(crate::summary::stats::ChangeCi { lo_pct: -1.2, hi_pct: 0.4, ..Default::default() }),
            verdict: Some(Verdict::Same.word().into()),
        }];
        let stored = StoredStudy { id: 1, record: s, variant_ids: vec![1, 2] };
        let list = crate::history::list(&[stored], Vec::new(), "h.db".into(), Default::default());
        let text = list.text();
        assert!(text.contains("same within the margin ±2%"), "{text}");
        let json = serde_json::to_value(&list.rows[1]).unwrap();
        assert_eq!(json["mei_pct"], 2.0);
    }
}

/// The imported llama-bench results, one row a test.
fn bench_table(results: &[crate::history::BenchResult]) -> Table {
    let heads = ["build", "model", "backends", "test", "t/s", "sd", "n", "host", "file"];
    let mut t = Table::new(heads.iter().map(|h| Column::text(h)).collect());
    for b in results {
        let r = &b.row;
        let build = match r.build_number {
            Some(n) => format!("{} ({n})", short(Some(&r.build_commit))),
            None => short(Some(&r.build_commit)),
        };
        t.push_text(vec![
            build,
            r.model_filename.rsplit('/').next().unwrap_or(&r.model_filename).to_string(),
            r.backends.clone(),
            r.test(),
            format!("{:.2}", r.avg_ts),
            format!("{:.2}", r.stddev_ts),
            if r.samples_ts.is_empty() { "?".into() } else { r.samples_ts.len().to_string() },
            b.host.clone().unwrap_or_else(|| "?".into()),
            b.source.clone(),
        ]);
    }
    t
}

/// One llama-bench file imported: its format, tests and builds, and how many were new.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct BenchFile {
    pub(crate) file: std::path::PathBuf,
    pub(crate) format: String,
    pub(crate) tests: usize,
    pub(crate) new: usize,
    pub(crate) builds: Vec<String>,
}

impl BenchFile {
    pub(crate) fn of(file: std::path::PathBuf, results: &[crate::history::BenchResult], new: usize) -> BenchFile {
        let mut builds: Vec<String> = Vec::new();
        for r in results {
            let b = match r.row.build_number {
                Some(n) => format!("{} ({n})", r.row.build_commit),
                None => r.row.build_commit.clone(),
            };
            if !builds.contains(&b) {
                builds.push(b);
            }
        }
        BenchFile {
            file,
            format: results.first().map_or(String::new(), |r| r.format.clone()),
            tests: results.len(),
            new,
            builds,
        }
    }
}

/// `abprof history import-llama-bench`: what each file held and what was new.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct BenchImportReport {
    pub(crate) history: String,
    pub(crate) files: Vec<BenchFile>,
}

impl Render for BenchImportReport {
    fn text(&self) -> String {
        let mut o = String::new();
        for f in &self.files {
            let _ = writeln!(
                o,
                "imported {}: llama-bench {} output of build {}, {} tests, {} new ({} already in the history)",
                f.file.display(),
                f.format,
                f.builds.join(", "),
                f.tests,
                f.new,
                f.tests - f.new
            );
        }
        let _ = writeln!(o, "history: {}", self.history);
        o
    }

    fn table(&self) -> Table {
        let mut t = Table::named(&["file", "format", "builds", "tests", "new"]);
        for f in &self.files {
            t.push_text(vec![
                f.file.display().to_string(),
                f.format.clone(),
                f.builds.join(" "),
                f.tests.to_string(),
                f.new.to_string(),
            ]);
        }
        t
    }
}
