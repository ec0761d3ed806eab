//! `abprof history`: the results history — list and filter, `--regressions`, and `import DIR...`
//! (docs/methodology.md §15).
use super::args::{HistoryDb, OutputArgs};
use crate::app::HistoryRequest;
use crate::history::Filters;
use crate::study::file::Workload;
use anyhow::Result;
use chrono::{DateTime, Local, NaiveDate, TimeZone};
use clap::{Args, Subcommand};
use std::path::PathBuf;

#[derive(Args, Debug)]
#[command(args_conflicts_with_subcommands = true)]
pub(crate) struct HistoryCommandArgs {
    #[command(subcommand)]
    pub(crate) action: Option<HistoryAction>,
    #[command(flatten)]
    pub(crate) db: HistoryDb,
    #[command(flatten)]
    pub(crate) filters: FilterArgs,
    /// How each variant's medians moved from one comparable study to the next, with the 95%
    /// interval of each move and the series' A/A noise floor; the filters pick moves by the study
    /// they land on (--since DATE: the moves since DATE).
    #[arg(long)]
    pub(crate) regressions: bool,
    #[command(flatten)]
    pub(crate) output: OutputArgs,
}

#[derive(Subcommand, Debug)]
pub(crate) enum HistoryAction {
    /// Load existing evidence folders (ab, trace, pi, exactness, bench) into the history; a study
    /// already there is recognized and not added twice.
    Import(ImportArgs),
    /// Load llama-bench outputs (-o json, jsonl, csv or sql; any llama.cpp version) into the
    /// history: each test a result of its own kind, listed beside abprof's studies of the same
    /// build and model, never judged with them; a result already there is not added twice.
    ImportLlamaBench(ImportLlamaBenchArgs),
    /// Send the studies kept while the PostgreSQL history could not be reached (its own outbox,
    /// $XDG_DATA_HOME/abprof/pending/USER@HOST_PORT_DB-HASH.db) to it; a study it already holds is
    /// not added twice.
    Push(PushArgs),
}

#[derive(Args, Debug)]
pub(crate) struct PushArgs {
    #[command(flatten)]
    pub(crate) db: HistoryDb,
    /// Send this outbox file instead of the database's own (e.g. the pending.db of an earlier
    /// abprof, which kept one outbox for every database).
    #[arg(long, value_name = "FILE")]
    pub(crate) outbox: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) output: OutputArgs,
}

#[derive(Args, Debug)]
pub(crate) struct ImportLlamaBenchArgs {
    /// Files llama-bench wrote (`llama-bench -o json > FILE`, or jsonl, csv, sql).
    #[arg(value_name = "FILE", required = true)]
    pub(crate) files: Vec<PathBuf>,
    #[command(flatten)]
    pub(crate) db: HistoryDb,
    #[command(flatten)]
    pub(crate) output: OutputArgs,
}

#[derive(Args, Debug)]
pub(crate) struct ImportArgs {
    /// Evidence folders: the --root of a study, or the --evidence of `abprof bench`.
    #[arg(value_name = "DIR", required = true)]
    pub(crate) dirs: Vec<PathBuf>,
    #[command(flatten)]
    pub(crate) db: HistoryDb,
    #[command(flatten)]
    pub(crate) output: OutputArgs,
}

/// Which recorded variants a listing (or, by their later study, the moves) keeps.
#[derive(Args, Debug, Clone)]
pub(crate) struct FilterArgs {
    /// Variants with this label.
    #[arg(long, value_name = "LABEL")]
    pub(crate) label: Option<String>,
    /// Binaries whose sha256 starts with this, or whose path contains it.
    #[arg(long, value_name = "SHA|PATH")]
    pub(crate) binary: Option<String>,
    /// Binaries built from this commit (a prefix).
    #[arg(long, value_name = "SHA")]
    pub(crate) commit: Option<String>,
    /// Models whose sha256 starts with this, or whose path contains it.
    #[arg(long, value_name = "SHA|PATH")]
    pub(crate) model: Option<String>,
    /// Studies run with this --workload.
    #[arg(long, value_enum)]
    pub(crate) workload: Option<Workload>,
    /// Studies run on this host (its hostname).
    #[arg(long, value_name = "HOSTNAME")]
    pub(crate) host: Option<String>,
    /// Studies whose GPU (the telemetry source abprof recorded) contains this, e.g. MI300X.
    #[arg(long, value_name = "TEXT")]
    pub(crate) gpu: Option<String>,
    /// Studies started on or after this date (YYYY-MM-DD, local time, or RFC 3339).
    #[arg(long, value_name = "DATE", value_parser = parse_date)]
    pub(crate) since: Option<DateArg>,
    /// Studies started on or before this date (a whole day when given as YYYY-MM-DD).
    #[arg(long, value_name = "DATE", value_parser = parse_date)]
    pub(crate) until: Option<DateArg>,
}

/// A date bound: a day (local time) or an instant.
#[derive(Debug, Clone, Copy)]
pub(crate) struct DateArg {
    start: DateTime<Local>,
    whole_day: bool,
}

fn parse_date(s: &str) -> Result<DateArg, String> {
    if let Ok(t) = DateTime::parse_from_rfc3339(s) {
        return Ok(DateArg { start: t.with_timezone(&Local), whole_day: false });
    }
    let day = NaiveDate::parse_from_str(s, "%Y-%m-%d")
        .map_err(|_| format!("{s:?} is not a date: write YYYY-MM-DD or an RFC 3339 time"))?;
    let midnight = day.and_hms_opt(0, 0, 0).expect("midnight exists");
    let start = Local
        .from_local_datetime(&midnight)
        .earliest()
        .ok_or_else(|| format!("{s} has no local midnight (a time-zone change): write an RFC 3339 time"))?;
    Ok(DateArg { start, whole_day: true })
}

fn unix(t: DateTime<Local>) -> f64 {
    t.timestamp_millis() as f64 / 1000.0
}

impl FilterArgs {
    fn filters(&self) -> Filters {
        Filters {
            label: self.label.clone(),
            binary: self.binary.clone(),
            commit: self.commit.clone(),
            model: self.model.clone(),
            workload: self.workload.and_then(|w| serde_json::to_value(w).ok()?.as_str().map(String::from)),
            host: self.host.clone(),
            gpu: self.gpu.clone(),
            since: self.since.map(|d| unix(d.start)),
            until: self.until.map(|d| unix(if d.whole_day { d.start + chrono::Days::new(1) } else { d.start })),
        }
    }
}

pub(crate) fn run(a: HistoryCommandArgs) -> Result<i32> {
    let (request, format) = match a.action {
        Some(HistoryAction::Import(i)) => {
            (HistoryRequest::Import { location: i.db.location()?, dirs: i.dirs }, i.output.format())
        }
        Some(HistoryAction::ImportLlamaBench(i)) => {
            (HistoryRequest::ImportLlamaBench { location: i.db.location()?, files: i.files }, i.output.format())
        }
        Some(HistoryAction::Push(p)) => {
            (HistoryRequest::Push { location: p.db.location()?, outbox: p.outbox }, p.output.format())
        }
        None => (
            HistoryRequest::List {
                location: a.db.location()?,
                filters: a.filters.filters(),
                regressions: a.regressions,
            },
            a.output.format(),
        ),
    };
    crate::app::history(request, format)
}
