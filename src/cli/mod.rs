//! Argument parsing only: each subcommand hands its parsed arguments to one function below.
use clap::{CommandFactory, Parser, Subcommand};

mod ab;
mod args;
mod attribute;
mod bench;
mod bisect;
mod build;
mod calibrate;
mod common;
mod compare_traces;
mod completions;
mod conditions;
mod doctor;
mod exactness;
mod history;
mod monitor;
mod parse_log;
mod pi;
mod report;
mod roofline;
mod summarize;
mod timeline;
mod trace;
mod usage;

#[derive(Parser, Debug)]
#[command(name = "abprof", version = concat!(env!("CARGO_PKG_VERSION"), " (", env!("ABPROF_GIT_COMMIT"), ")"),
          about = "Is llama-server variant B faster than A, by how much, and which kernels are responsible?")]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Subcommand, Debug)]
pub(crate) enum Command {
    /// The A/B study: cold interleaved samples of every variant, isolation, evidence, verdict.
    Ab(ab::AbArgs),
    /// One cold sample: start the server, one timed streaming request, stop, parse its log.
    Bench(bench::BenchArgs),
    /// Make a prompt of exactly N chat-template tokens.
    Calibrate(calibrate::CalibrateArgs),
    /// Parse the one request timing block of a llama-server log.
    ParseLog(parse_log::ParseLogArgs),
    /// Summarize a study's evidence folder: medians, % change, confidence, rejections.
    Summarize(summarize::SummarizeArgs),
    /// A study's report: one self-contained HTML page with charts, and its tables as Markdown.
    Report(report::ReportArgs),
    /// Kernel-trace variants (rocprofv3 / Nsight Systems) with trace-matched untraced samples.
    Trace(trace::TraceArgs),
    /// Exactness gate: same deterministic request to two variants; exact, equal tokens or diverged at k, plus top-k cosine.
    Exactness(exactness::ExactnessArgs),
    /// The real Pi coding agent against each variant: cold server per sample, whole-process wall time, one request, no tools, the answer's Python run.
    Pi(pi::PiArgs),
    /// The results history: every finished study; list and filter, --regressions between comparable studies, import DIR.
    History(history::HistoryCommandArgs),
    /// Build an immutable llama-server artifact from a commit (+ one patch) in a detached worktree, never touching the source tree.
    Build(build::BuildArgs),
    /// The first commit between --good and --bad that changed a metric: git bisect in its own worktree, each commit built (artifacts reused, ccache) and A/B'd cold against the good build.
    Bisect(bisect::BisectArgs),
    /// Attribute one kernel trace's decode time to kernel categories, per token.
    Attribute(attribute::Args),
    /// Compare variants' kernel traces in measured ms/token: which categories moved.
    CompareTraces(compare_traces::Args),
    /// One sample as a Chrome trace-event JSON (ui.perfetto.dev, chrome://tracing): lifecycle, request phases, tokens, telemetry counters, kernels.
    Timeline(timeline::TimelineArgs),
    /// The decode floor: bytes one decode step reads (from the GGUF header) over the measured memory bandwidth.
    Roofline(roofline::RooflineArgs),
    /// Live GPU telemetry view and CSV recorder; ends with read rate, real update intervals, jitter and CPU cost.
    Monitor(monitor::Args),
    /// Is this host ready to measure: telemetry, power state, CPU governor and load, GPU processes,
    /// ports, disk, the llama-server's flags, the last A/A spread; each finding with its fix.
    /// Changes nothing; exits 0 ready, 3 when a finding warns.
    Doctor(doctor::DoctorArgs),
    /// Shell completions for bash, zsh, fish, elvish or PowerShell, on stdout.
    Completions(completions::CompletionsArgs),
    /// The man page (roff) of abprof and every subcommand, on stdout.
    Man,
}

/// Runs the CLI and returns the process exit code. Errors are printed as one line naming the
/// cause (and, where the error carries one, the fix); a usage error exits 2 before anything ran.
pub fn main() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => e.exit(),
        Err(e) if e.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => e.exit(),
        Err(e) => {
            eprintln!("abprof: error: {} (see --help)", usage::one_line(&e));
            return e.exit_code();
        }
    };
    let e = match run(cli) {
        Ok(code) => return code,
        Err(e) => e,
    };
    // One question decides the status: a stop signal (128+N), a refusal before anything ran (2,
    // crate::refusal), or any other error (1).
    match (e.downcast_ref::<crate::stop_signal::Interrupted>(), e.is::<crate::refusal::Refusal>()) {
        (Some(signal), _) => {
            eprintln!("abprof: {}", crate::cli::one_line(&e));
            128 + signal.0
        }
        (None, refused) => {
            eprintln!("abprof: error: {}", crate::cli::one_line(&e));
            if refused {
                2
            } else {
                1
            }
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<i32> {
    match cli.command {
        Command::Ab(a) => ab::run(a),
        Command::Bench(a) => bench::run(a),
        Command::Calibrate(a) => calibrate::run(a),
        Command::ParseLog(a) => parse_log::run(a),
        Command::Summarize(a) => summarize::run(a),
        Command::Report(a) => report::run(a),
        Command::Trace(a) => trace::run(a),
        Command::Monitor(args) => monitor::run(args),
        Command::Roofline(a) => roofline::run(a),
        Command::Exactness(a) => exactness::run(a),
        Command::Pi(a) => pi::run(a),
        Command::History(a) => history::run(a),
        Command::Build(a) => build::run(a),
        Command::Bisect(a) => bisect::run(a),
        Command::Attribute(a) => attribute::run(a),
        Command::CompareTraces(a) => compare_traces::run(a),
        Command::Timeline(a) => timeline::run(a),
        Command::Doctor(a) => doctor::run(a),
        Command::Completions(a) => completions::completions(a, Cli::command()),
        Command::Man => completions::man(Cli::command()),
    }
}

pub(crate) use crate::report::one_line;
