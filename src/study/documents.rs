//! The documents of the evidence folders whose types live on the floors above (`summary/`,
//! `exactness/`, `bisect/`), each marked with its own trait here: a folder's reader and writer of
//! a document take the one type that document holds and no other, so a sweep's `summary.json`
//! cannot be written or read as a study's, nor a bench's facts as an exactness check's. Each trait
//! has one implementation, beside its type; the documents typed in `study/` itself (the plan, the
//! host's and variants' facts, a sample's record…) have plain typed readers in `evidence.rs`.
use serde::{de::DeserializeOwned, Serialize};

/// A study's `summary.json`: `summary::Summary`.
pub(crate) trait StudySummaryDoc: Serialize + DeserializeOwned {}

/// A sweep's `summary.json`, a table per metric over its points: `summary::sweep::SweepSummary`.
pub(crate) trait SweepSummaryDoc: Serialize {}

/// A Pi study's `pi.json`: `summary::pi::PiReport`.
pub(crate) trait PiReportDoc: Serialize + DeserializeOwned {}

/// An exactness check's `exactness.json`: `exactness::ExactnessReport`.
pub(crate) trait ExactnessReportDoc: Serialize + DeserializeOwned {}

/// What an exactness check's two sides ran on, `exactness/facts.json`: `summary::fingerprint::ExactnessFacts`.
pub(crate) trait ExactnessFactsDoc: Serialize + DeserializeOwned {}

/// What a bench ran on, `bench.json`: `summary::bench::BenchFacts`.
pub(crate) trait BenchFactsDoc: Serialize + DeserializeOwned {}

/// A bisect's log, `bisect.json`: `bisect::record::BisectLog`.
pub(crate) trait BisectLogDoc: Serialize {}
