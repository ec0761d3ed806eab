//! THE table of names of abprof's evidence folders: every file and folder a study, a sample, a
//! sweep, a trace capture, an exactness check, a bench and a bisect write is named here, and
//! nowhere else. The rest of the house asks a typed folder for a path —
//! [`Evidence`](super::evidence::Evidence), [`SampleFolder`](super::sample_folder::SampleFolder)
//! (and [`FoundSample`](super::evidence::FoundSample)), [`TraceFolder`](super::trace_folder::TraceFolder),
//! [`ExactnessFolder`](super::run_folders::ExactnessFolder),
//! [`BenchFolder`](super::run_folders::BenchFolder), [`BisectFolder`](super::run_folders::BisectFolder)
//! — and never joins a name itself: tests/layers.rs reads the names below (each `const` a line)
//! and refuses them spelled in product code outside `src/study/`. A lower floor that writes one
//! of these files (`measure/` a sample's, `server/` its log) is given the path from above.

// ── A study's folder (src/study/evidence.rs) ──────────────────────────────────────────────────
/// The study as run (`abprof ab --study DIR/study.toml` re-runs it); a sweep's, with `[sweep]`.
pub(super) const STUDY_FILE: &str = "study.toml";
/// The run order, fixed when the study starts.
pub(super) const PLAN_FILE: &str = "plan.json";
/// Host facts, abprof version, telemetry source.
pub(super) const HOST_FILE: &str = "host.json";
/// Per variant: binary, sha256, `--version`, model, argv, env.
pub(super) const VARIANTS_FILE: &str = "variants.json";
/// Per variant: decode bytes by class, KV shape, memory bandwidth.
pub(super) const ROOFLINE_FILE: &str = "roofline.json";
/// A study's summary (or a sweep's: another document of the same name).
pub(super) const SUMMARY_FILE: &str = "summary.json";
/// Every isolation hook run.
pub(super) const ISOLATION_FILE: &str = "isolation.json";
/// Each isolation hook's output, `isolation/NNNN-PHASE.log`.
pub(super) const ISOLATION_DIR: &str = "isolation";
/// A Pi study's report.
pub(super) const PI_REPORT_FILE: &str = "pi.json";
/// The study's page, written at the end of `ab` and `trace` and by `abprof report`.
pub(super) const HTML_FILE: &str = "report.html";
/// The page's tables in Markdown.
pub(super) const MARKDOWN_FILE: &str = "report.md";
/// One line per finished sample attempt.
pub(super) const ORDER_FILE: &str = "order.jsonl";
/// The calibrated prompt (its calibration record beside it).
pub(super) const PROMPT_FILE: &str = "prompt.txt";
/// The mark of a run in progress.
pub(super) const RUN_FILE: &str = "run.json";
/// The file a run holds an exclusive `flock` on.
pub(super) const LOCK_FILE: &str = "abprof.lock";
/// The logs of the server that calibrated the prompt (a sample folder's server logs).
pub(super) const CALIBRATION_DIR: &str = "calibration";
/// `samples/NNN-LABEL/`: an A/B study's samples.
pub(super) const SAMPLES_DIR: &str = "samples";
/// `pi/LABEL-N/`: a Pi study's samples.
pub(super) const PI_SAMPLES_DIR: &str = "pi";
/// `traces/LABEL/`: an A/B study's trace captures (`abprof trace --root DIR/traces`).
pub(super) const TRACES_DIR: &str = "traces";

/// What a new study writes before `plan.json`, its last start file (and their temporaries, as
/// src/atomic_file.rs names them): a folder holding only these, and no plan, is a start that failed.
pub(super) const PARTIAL_START: [&str; 9] = [
    STUDY_FILE,
    ".study.toml.tmp",
    VARIANTS_FILE,
    ".variants.json.tmp",
    HOST_FILE,
    ".host.json.tmp",
    ".plan.json.tmp",
    ".sweep.json.tmp",
    LOCK_FILE,
];

// ── A sweep's folder (src/study/sweep/) ──────────────────────────────────────────────────────
/// The axes, and every point's values, folder and state: what makes a folder a sweep.
pub(super) const SWEEP_RECORD: &str = "sweep.json";
/// `points/NN-AXIS=V,…/`: one study folder per point.
pub(super) const POINTS_DIR: &str = "points";

// ── A sample's folder (src/study/sample_folder.rs; written by src/measure/) ───────────────────
/// The server's `--log-file`: the timing block is parsed from it.
pub(super) const SERVER_LOG: &str = "server.log";
/// The server's stdout and stderr together.
pub(super) const SERVER_CONSOLE: &str = "server.console.log";
/// A llama-bench sample's stdout, its JSONL results, and its stderr (docs/methodology.md §4.4).
pub(super) const BENCH_OUTPUT: &str = "llama-bench.jsonl";
pub(super) const BENCH_STDERR: &str = "llama-bench.stderr";
/// The request as sent.
pub(super) const REQUEST_FILE: &str = "request.json";
/// The streamed response as received.
pub(super) const SSE_FILE: &str = "response.sse";
/// The sample's record.
pub(super) const SAMPLE_RECORD: &str = "sample.json";
/// The first device's telemetry series (the one every release has written).
pub(super) const TELEMETRY_CSV: &str = "telemetry.csv";
/// Device N's series of a server on several GPUs: `telemetry-gpuN.csv` ([`device_telemetry_csv`]).
pub(super) const DEVICE_TELEMETRY_PREFIX: &str = "telemetry-gpu";
/// Pi's JSON-lines transcript.
pub(super) const PI_TRANSCRIPT: &str = "pi.jsonl";
pub(super) const PI_STDERR: &str = "pi.stderr";
/// The agent configuration Pi ran with (copies of its `models.json` and `settings.json`).
pub(super) const PI_MODELS: &str = "pi-models.json";
pub(super) const PI_SETTINGS: &str = "pi-settings.json";
/// The Python an answer held, and what running it printed.
pub(super) const ANSWER_CODE: &str = "answer.py";
pub(super) const ANSWER_OUTPUT: &str = "answer.out";
/// A Pi sample's report view, written by the summary beside the sample's evidence.
pub(super) const PI_SAMPLE_VIEW: &str = "pi-sample.json";
/// The sample's seal: the sha256 of every file abprof wrote (`sha256sum -c` reads it).
pub(super) const SEAL_FILE: &str = "SHA256SUMS";

// ── A trace capture's folder, `LABEL/` (src/study/trace_folder.rs) ────────────────────────────
/// What the folder holds besides the trace: which variant, the windows, the untraced samples.
pub(super) const TRACE_MANIFEST: &str = "trace.json";
/// `traced/`, `traced-2/`, …: each traced sample's own folder.
pub(super) const TRACED_DIR: &str = "traced";
/// `tracer-out/`, `tracer-out-2/`, …: each traced sample's tracer output.
pub(super) const TRACER_OUT_DIR: &str = "tracer-out";
/// The attaching tracer's console, in its output folder.
pub(super) const ATTACH_LOG: &str = "attach.log";

// ── An exactness check's, beside a study's (src/study/run_folders.rs) ─────────────────────────
pub(super) const EXACTNESS_REPORT: &str = "exactness.json";
/// `exactness/`: facts, prompt, calibration logs and one folder per side.
pub(super) const EXACTNESS_DIR: &str = "exactness";
/// What the two sides ran on.
pub(super) const EXACTNESS_FACTS: &str = "facts.json";
/// Each side's captured tokens, in its folder.
pub(super) const TOKENS_FILE: &str = "tokens.json";
pub(super) const CALIBRATION_LOG: &str = "calibration.server.log";
pub(super) const CALIBRATION_CONSOLE: &str = "calibration.console.log";

// ── A bench's (src/study/run_folders.rs) ─────────────────────────────────────────────────────
/// What `abprof bench --evidence` ran on; its one sample's files lie beside it.
pub(super) const BENCH_FACTS: &str = "bench.json";

// ── A bisect's (src/study/run_folders.rs) ────────────────────────────────────────────────────
/// The log: every build and step, the threshold, the outcome.
pub(super) const BISECT_LOG: &str = "bisect.json";
/// `git bisect log` (`git bisect replay` re-runs it).
pub(super) const BISECT_GIT_LOG: &str = "bisect-log.txt";
/// The patch every build applied, when one was given.
pub(super) const BISECT_PATCH: &str = "source.patch";
/// `steps/00-bad/` (the reference A/B), `steps/NN-SHA12/`: one study folder per probed commit.
pub(super) const STEPS_DIR: &str = "steps";
/// Git's bisect state while it runs; removed on every way out.
pub(super) const WORKTREE_DIR: &str = "worktree";

/// The series file of device `index` of a server on several GPUs, as a sample's record names it.
pub(super) fn device_telemetry_csv(index: u32) -> String {
    format!("{DEVICE_TELEMETRY_PREFIX}{index}.csv")
}

/// `name` for the first of a variant's traced samples, `name-2`, `name-3`, … for the next.
pub(super) fn numbered(name: &str, repeat: usize) -> String {
    if repeat == 0 {
        name.to_string()
    } else {
        format!("{name}-{}", repeat + 1)
    }
}
