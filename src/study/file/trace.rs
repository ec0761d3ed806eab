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
    /// The variant whose traces count a complete decode's dispatches per token (one traced with
    /// its graphs off, `--dispatch-reference LABEL`): every other variant's trace must hold at
    /// least 90% of it (docs/methodology.md §10 "complete traces"). Absent: the layer floor alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) dispatch_reference: Option<String>,
}

fn one_traced() -> u32 {
    1
}

fn is_one_traced(n: &u32) -> bool {
    *n == 1
}

use super::super::layout::ATTACH_LOG;

/// Which tracer wraps the server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub(crate) enum TracerCommand {
    /// `rocprofv3 --disable-signal-handlers --kernel-trace --output-format rocpd -d OUT -o trace --`
    /// wrapping the server; with `attach`, `rocprofv3 --attach PID …` on the loaded server for the
    /// request only (docs/methodology.md §10 "attached traces").
    Rocprofv3 {
        program: PathBuf,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        attach: bool,
    },
    /// `nsys profile -t cuda --cuda-graph-trace=node -o OUT/trace`, then `nsys export --type sqlite`.
    Nsys { program: PathBuf },
    /// A user template; `{out}` is replaced by the tracer's output folder and the server argv
    /// is appended.
    Template { argv: Vec<String> },
}

impl TracerCommand {
    /// The tracer attaches to the loaded server instead of wrapping its start.
    pub(crate) fn attaches(&self) -> bool {
        matches!(self, TracerCommand::Rocprofv3 { attach: true, .. })
    }

    /// The attaching tracer of a traced sample whose output goes to `out`, when the tracer
    /// attaches to the loaded server instead of wrapping its start.
    pub(crate) fn attaching(
        &self,
        out: &Path,
        detach_timeout: std::time::Duration,
    ) -> Option<crate::measure::AttachSpec> {
        match self {
            TracerCommand::Rocprofv3 { program, attach: true } => Some(crate::measure::AttachSpec {
                program: program.clone(),
                out: out.to_path_buf(),
                console: out.join(ATTACH_LOG),
                detach_timeout,
            }),
            _ => None,
        }
    }

    /// Where the tracer's console is logged for a traced sample whose output goes to `out`: an
    /// attaching tracer's own log there, else None (the server's console, which it wraps).
    pub(crate) fn attach_log(&self, out: &Path) -> Option<PathBuf> {
        self.attaches().then(|| out.join(ATTACH_LOG))
    }

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
            TracerCommand::Rocprofv3 { program, .. } => (
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A study file of an earlier release (no `attach`) reads as the classic launch; an attaching
    /// one round-trips and names its tracer's argv, with the detach waiting for the output.
    #[test]
    fn attach_is_off_unless_the_file_says_so_and_round_trips() {
        let old: TraceSection = toml::from_str(
            "finalize_timeout_s = 60\n[tracer]\nkind = \"rocprofv3\"\nprogram = \"/opt/rocm/bin/rocprofv3\"\n",
        )
        .unwrap();
        assert!(!old.tracer.attaches());
        assert!(old.tracer.attaching(Path::new("/o"), std::time::Duration::from_secs(1)).is_none());
        assert!(!toml::to_string(&old).unwrap().contains("attach"));
        let on = TraceSection {
            tracer: TracerCommand::Rocprofv3 { program: "/opt/rocm/bin/rocprofv3".into(), attach: true },
            ..old
        };
        let text = toml::to_string(&on).unwrap();
        assert!(text.contains("attach = true"), "{text}");
        assert_eq!(toml::from_str::<TraceSection>(&text).unwrap(), on);
        let a = on.tracer.attaching(Path::new("/o"), std::time::Duration::from_secs(1)).unwrap();
        assert_eq!(a.console, Path::new("/o/attach.log"));
        assert_eq!(
            a.argv(4242).join(" "),
            "--attach 4242 --kernel-trace --output-format rocpd -d /o -o trace --attach-sync-output"
        );
    }
}
