//! The `[trace]` section of a study file: the tracer that wraps each variant's traced sample
//! (docs/methodology.md §10).
use crate::trace::manifest::Tracer;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// A trace study: the tracer wrapping each variant's traced sample.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceSection {
    pub(crate) tracer: TracerCommand,
    /// Seconds to wait for the tracer to write its output after the one SIGTERM (never killed).
    pub(crate) finalize_timeout_s: u64,
    /// Traced samples per variant (`--traced N`), interleaved with the untraced ones; absent in
    /// study files of earlier releases, which took one.
    #[serde(default = "one_traced", skip_serializing_if = "is_one_traced")]
    pub(crate) traced: u32,
}

fn one_traced() -> u32 {
    1
}

fn is_one_traced(n: &u32) -> bool {
    *n == 1
}

/// Which tracer wraps the server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub(crate) enum TracerCommand {
    /// `rocprofv3 --disable-signal-handlers --kernel-trace --output-format rocpd -d OUT -o trace --`
    Rocprofv3 { program: PathBuf },
    /// `nsys profile -t cuda --cuda-graph-trace=node -o OUT/trace`, then `nsys export --type sqlite`.
    Nsys { program: PathBuf },
    /// A user template; `{out}` is replaced by the tracer's output folder and the server argv
    /// is appended.
    Template { argv: Vec<String> },
}

impl TracerCommand {
    pub(crate) fn kind(&self) -> Tracer {
        match self {
            TracerCommand::Rocprofv3 { .. } => Tracer::Rocprofv3,
            TracerCommand::Nsys { .. } => Tracer::Nsys,
            TracerCommand::Template { argv } => Tracer::Other(
                Path::new(&argv[0]).file_name().map_or("custom".into(), |n| n.to_string_lossy().to_string()),
            ),
        }
    }

    /// The tracer's program and its arguments up to (not including) the server argv.
    pub(crate) fn prefix(&self, out: &Path) -> (PathBuf, Vec<String>) {
        let o = out.display().to_string();
        match self {
            TracerCommand::Rocprofv3 { program } => (
                program.clone(),
                [
                    "--disable-signal-handlers",
                    "--kernel-trace",
                    "--output-format",
                    "rocpd",
                    "-d",
                    &o,
                    "-o",
                    "trace",
                    "--",
                ]
                .map(String::from)
                .to_vec(),
            ),
            TracerCommand::Nsys { program } => (
                program.clone(),
                vec![
                    "profile".into(),
                    "-t".into(),
                    "cuda".into(),
                    "--cuda-graph-trace=node".into(),
                    "--force-overwrite".into(),
                    "true".into(),
                    "-o".into(),
                    format!("{o}/trace"),
                ],
            ),
            TracerCommand::Template { argv } => {
                let v: Vec<String> = argv.iter().map(|a| a.replace("{out}", &o)).collect();
                (PathBuf::from(&v[0]), v[1..].to_vec())
            }
        }
    }
}
