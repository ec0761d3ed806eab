//! The results history: every finished study (`ab`, `trace`, `pi`, `bench`, `exactness`) in one
//! database — an embedded SQLite file, or a team's PostgreSQL server — written in one
//! transaction from the summary layer's typed result, and the queries over it: listings and
//! regressions between comparable studies (docs/methodology.md §15).
mod backend;
#[cfg(test)]
mod backend_bench;
mod bench_results;
mod bench_rows;
mod comparable;
mod error;
mod import;
mod location;
mod migrate;
mod outbox;
mod postgres;
mod query;
mod record;
mod regressions;
mod row;
mod schema;
mod sqlite;
mod tls;

pub(crate) use backend::{History, Recording};
pub(crate) use bench_results::{results_in, BenchResult};
pub(crate) use import::{import_folder, records_in, Imported};
pub(crate) use location::{default_path, pending_path, BadLocation, HistoryLocation};
pub(crate) use outbox::{push, Pushed};
pub(crate) use query::{list, Filters, HistoryList, HistoryRow};
#[cfg(test)]
pub(crate) use record::testing;
pub(crate) use record::{RecordKind, RecordedStudy, StudyRecord, VerdictOn, VerdictRow};
pub(crate) use regressions::{regressions, Move, NotCompared, Regressions, Series, SeriesFloor};
#[cfg(test)]
pub(crate) use row::StoredStudy;
