//! `abprof history`: the results history listed or its regressions (docs/methodology.md §15),
//! study folders imported into it, and a PostgreSQL history's outbox pushed.
use crate::history::{import_folder, list, regressions, Filters, History, HistoryList, HistoryLocation, StudyRecord};
use crate::refusal::refuse;
use crate::report::history::ImportReport;
use crate::report::{emit, Format};
use anyhow::Result;
use std::path::PathBuf;

pub(crate) enum HistoryRequest {
    /// The studies the filters keep, or with `regressions` each variant's moves between them.
    List {
        location: HistoryLocation,
        filters: Filters,
        regressions: bool,
    },
    Import {
        location: HistoryLocation,
        dirs: Vec<PathBuf>,
    },
    /// llama-bench output files, each test recorded as a result of its own kind.
    ImportLlamaBench {
        location: HistoryLocation,
        files: Vec<PathBuf>,
    },
    /// The outbox (`outbox`, else the location's own) into the PostgreSQL history it waits for.
    Push {
        location: HistoryLocation,
        outbox: Option<PathBuf>,
    },
}

pub(crate) fn history(r: HistoryRequest, format: Format) -> Result<i32> {
    match r {
        HistoryRequest::List { location, filters, regressions: moves } => {
            let path = location.to_string();
            let Some(mut history) = History::open_existing(&location)? else {
                eprintln!(
                    "abprof: no history at {path} yet: finished studies are recorded there (or `abprof history import DIR` loads earlier ones)"
                );
                if moves {
                    let empty =
                        crate::history::Regressions { history: path, filters, series: vec![], not_compared: vec![] };
                    emit(&empty, format);
                } else {
                    emit(
                        &HistoryList { history: path, filters, studies_total: 0, rows: vec![], llama_bench: vec![] },
                        format,
                    );
                }
                return Ok(0);
            };
            let studies = history.studies()?;
            if moves {
                emit(&regressions(&studies, path, filters), format);
            } else {
                let bench = history.bench_results()?;
                emit(&list(&studies, bench, path, filters), format);
            }
        }
        HistoryRequest::Import { location, dirs } => {
            let mut records: Vec<(PathBuf, Vec<StudyRecord>)> = Vec::new();
            for dir in &dirs {
                records.push((dir.clone(), crate::history::records_in(dir)?));
            }
            let mut history = History::open(&location)?;
            let mut folders = Vec::new();
            for (dir, rs) in records {
                folders.push(import_folder(&mut history, &dir, &rs)?);
            }
            emit(&ImportReport { history: location.to_string(), folders }, format);
        }
        HistoryRequest::ImportLlamaBench { location, files } => {
            // Every file read before anything is written: one that is not llama-bench's is refused.
            let host = nix::unistd::gethostname().ok().map(|h| h.to_string_lossy().into_owned());
            let mut parsed = Vec::new();
            for f in &files {
                match crate::history::results_in(f, host.clone()) {
                    Ok(r) => parsed.push((f.clone(), r)),
                    Err(why) => refuse!("{why}"),
                }
            }
            let mut history = History::open(&location)?;
            let mut imported = Vec::new();
            for (file, results) in parsed {
                let new = history.record_bench(&results)?;
                imported.push(crate::report::history::BenchFile::of(file, &results, new));
            }
            emit(&crate::report::history::BenchImportReport { history: location.to_string(), files: imported }, format);
        }
        HistoryRequest::Push { location, outbox } => {
            let target = match &location {
                HistoryLocation::Postgres(t) => t,
                HistoryLocation::Sqlite(path) => refuse!(
                    "--history {} is a SQLite file: only a PostgreSQL history keeps an outbox; pass --history postgres://USER@HOST:PORT/DB (or set ABPROF_HISTORY)",
                    path.display()
                ),
            };
            let pending = match outbox {
                Some(f) if !f.is_file() => refuse!(
                    "--outbox {}: no such file: name an outbox file (FILE.db) that `abprof history push` listed",
                    f.display()
                ),
                Some(f) => f,
                None => crate::history::pending_path(target)?,
            };
            let mut history = History::open(&location)?;
            emit(&crate::history::push(&mut history, &pending)?, format);
        }
    }
    Ok(0)
}
