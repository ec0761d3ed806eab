//! Why a trace could not be read. Each message names the file, what it is (or what is wrong with
//! it) and what to do, so the CLI can print it as one line.
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub(crate) enum TraceError {
    #[error("{p}: {source}: check the path", p = .path.display())]
    Io { path: PathBuf, source: std::io::Error },

    #[error("{p}: the file is empty: the tracer wrote nothing; re-capture and let the tracer exit on its own", p = .path.display())]
    Empty { path: PathBuf },

    #[error(
        "{path}: a legacy rocmProfileData (RPD) database (it has rocpd_op but no rocpd_kernel_dispatch), not a \
         rocprofv3 rocpd database: re-capture with `rocprofv3 --kernel-trace --output-format rocpd` (ROCm >= 7.0) \
         or `abprof trace`"
    )]
    LegacyRpd { path: PathBuf },

    #[error(
        "{path}: a rocprof v1 results database (table KERN), not a rocprofv3 trace: re-capture with \
         `rocprofv3 --kernel-trace --output-format rocpd` or `abprof trace`"
    )]
    RocprofV1 { path: PathBuf },

    #[error(
        "{p}: a rocprof (v1) --stats summary (results.stats.csv: per-kernel totals, no per-dispatch \
         timestamps), not a rocprofv3 kernel trace: re-capture with `rocprofv3 --kernel-trace --output-format rocpd` \
         (ROCm >= 7.0) or `abprof trace`",
        p = .path.display()
    )]
    RocprofV1Stats { path: PathBuf },

    #[error(
        "{path}: an Nsight Systems export without kernel records (no CUPTI_ACTIVITY_KIND_KERNEL table): \
         profile with `nsys profile -t cuda --cuda-graph-trace=node` so CUDA kernels are traced"
    )]
    NsysWithoutKernels { path: PathBuf },

    #[error("{p}: an Nsight Systems report, not its SQLite export: run `nsys export --type sqlite {p}` and pass the .sqlite file", p = .path.display())]
    NsysReport { path: PathBuf },

    #[error("{p}: SQLite database is corrupt or truncated ({detail}): re-capture the trace and wait for the tracer to finish writing", p = .path.display())]
    CorruptDatabase { path: PathBuf, detail: String },

    #[error(
        "{path}: an SQLite database with none of the known kernel tables (rocpd_kernel_dispatch, \
         CUPTI_ACTIVITY_KIND_KERNEL){hint}: pass a rocprofv3 rocpd .db, a kernel_trace.csv or an nsys .sqlite export"
    )]
    ForeignDatabase { path: PathBuf, hint: String },

    #[error("{p}: {what}, not a kernel trace: pass the rocprofv3 *_kernel_trace.csv (or the rocpd .db) instead", p = .path.display())]
    NotKernelTrace { path: PathBuf, what: String },

    #[error(
        "{path}: {what}: abprof reads rocprofv3 rocpd databases (.db), rocprofv3 kernel_trace.csv and Nsight Systems \
         SQLite exports; re-capture with `abprof trace`"
    )]
    UnknownFormat { path: PathBuf, what: String },

    #[error(
        "{path}: ends in the middle of line {line} (a partial write: the tracer was stopped before it finished): \
         re-capture and wait for the tracer to exit after a single SIGTERM"
    )]
    TruncatedCsv { path: PathBuf, line: u64 },

    #[error("{p}: line {line}: {detail}: the file is not a well-formed rocprofv3 kernel trace; re-capture it", p = .path.display())]
    MalformedCsv { path: PathBuf, line: u64, detail: String },

    #[error("{p}: table {table} has no column {column}: this schema version is not supported; please report it with the file", p = .path.display())]
    MissingColumn { path: PathBuf, table: String, column: String },

    #[error("{p}: table {table} is missing: the database is incomplete (was the tracer stopped while writing?) or of an unsupported schema", p = .path.display())]
    MissingTable { path: PathBuf, table: String },

    #[error("{p}: no kernel dispatches recorded: was kernel tracing on (`rocprofv3 --kernel-trace`, `nsys profile -t cuda`)?", p = .path.display())]
    NoKernels { path: PathBuf },

    #[error("{p}: {detail}: not an `abprof trace` output folder; pass a trace file or a folder with trace.json", p = .path.display())]
    NotTraceFolder { path: PathBuf, detail: String },

    #[error(
        "{p}: {per_token:.1} kernel dispatches per generated token in decode, fewer than {floor} (every decode step \
         runs at least one kernel for each of the model's {layers} layers): the trace lost kernels; {cause}; runtime: \
         {runtime}",
        p = .path.display()
    )]
    Incomplete { path: PathBuf, per_token: f64, floor: u32, layers: u32, cause: &'static str, runtime: String },

    #[error("{0}")]
    PartialLoss(Box<PartialLoss>),

    #[error(transparent)]
    Manifest(#[from] super::manifest::ManifestError),

    #[error("{p}: SQLite: {source}", p = .path.display())]
    Sqlite { path: PathBuf, source: rusqlite::Error },
}

impl TraceError {
    /// Maps an SQLite error to `CorruptDatabase` when SQLite says the file is damaged, so the user
    /// hears "corrupt" rather than an error code.
    pub(crate) fn sqlite(path: &std::path::Path, e: rusqlite::Error) -> TraceError {
        use rusqlite::ffi::ErrorCode;
        if let rusqlite::Error::SqliteFailure(f, msg) = &e {
            if matches!(f.code, ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt) {
                let detail = msg.clone().unwrap_or_else(|| f.to_string());
                return TraceError::CorruptDatabase { path: path.to_path_buf(), detail };
            }
        }
        TraceError::Sqlite { path: path.to_path_buf(), source: e }
    }
}

/// A trace that holds less than the least share (`least`) of its reference's decode
/// dispatches per token (docs/methodology.md §10 "complete traces"), boxed: the error's other
/// kinds are small.
#[derive(Debug)]
pub struct PartialLoss {
    pub(crate) path: PathBuf,
    pub(crate) per_token: f64,
    pub(crate) reference: f64,
    pub(crate) from: String,
    pub(crate) ratio: f64,
    /// The least share a complete trace holds.
    pub(crate) least: f64,
    pub(crate) cause: &'static str,
    pub(crate) runtime: String,
}

impl std::fmt::Display for PartialLoss {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: {:.1} kernel dispatches per generated token in the decode, {:.1}% of the {:.1} of {} (a complete trace holds at least {:.0}%): the trace lost kernels; {}; runtime: {}",
            self.path.display(),
            self.per_token,
            100.0 * self.ratio,
            self.reference,
            self.from,
            100.0 * self.least,
            self.cause,
            self.runtime
        )
    }
}
