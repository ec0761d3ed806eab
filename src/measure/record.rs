//! The typed result of one sample; summaries and reports only ever read these.
use super::pi::{CodeCheck, TimedExit};
use crate::client::{StreamRecord, Usage};
use crate::clock::{Span, Stamp};
use crate::server::log::{DraftAcceptance, ServerMemory, SpecStatistics, TimingBlock};
use crate::server::StopReport;
use crate::telemetry::record::{IdleGateRecord, TelemetryRecord};
use serde::{Deserialize, Serialize};

/// The server's own account of the request, from its log's timing block.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub(crate) struct ServerTiming {
    pub(crate) prompt_tokens: u64,
    pub(crate) prefill_ms: f64,
    pub(crate) prefill_tps: f64,
    pub(crate) decode_tokens: u64,
    pub(crate) decode_ms: f64,
    pub(crate) decode_tps: f64,
    pub(crate) decode_tps_n_minus_1: f64,
    /// The tokens-per-second figure the server printed. Builds since late 2025 print
    /// (N−1)/eval-seconds ("the first token is free"), older ones N/eval-seconds; abprof
    /// recomputes both from the interval so versions compare like with like.
    pub(crate) decode_tps_printed: f64,
    pub(crate) decode_ms_per_token: f64,
    pub(crate) total_ms: Option<f64>,
    pub(crate) graphs_reused: Option<u64>,
    pub(crate) spec_statistics: Vec<SpecStatistics>,
}

impl From<&TimingBlock> for ServerTiming {
    fn from(b: &TimingBlock) -> Self {
        ServerTiming {
            prompt_tokens: b.prompt_tokens,
            prefill_ms: b.prompt_ms,
            prefill_tps: b.prefill_tps(),
            decode_tokens: b.eval_tokens,
            decode_ms: b.eval_ms,
            decode_tps: b.decode_tps(),
            decode_tps_n_minus_1: b.decode_tps_n_minus_1(),
            decode_tps_printed: b.eval_tps,
            decode_ms_per_token: b.decode_ms_per_token(),
            total_ms: b.total_ms,
            graphs_reused: b.graphs_reused,
            spec_statistics: b.spec_statistics.clone(),
        }
    }
}

/// What the client saw on the wire (docs/methodology.md §1).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub(crate) struct StreamMetrics {
    /// First non-empty token − request start.
    pub(crate) ttft_ms: Option<f64>,
    /// Response end − request start.
    pub(crate) http_elapsed_ms: Option<f64>,
    /// (N−1) / (last token − first token): strict inter-token throughput.
    pub(crate) strict_tps: Option<f64>,
    /// N / (response end − first token): an external throughput indicator only.
    pub(crate) external_decode_tps: Option<f64>,
    /// Non-empty content/reasoning deltas received.
    pub(crate) content_deltas: usize,
    pub(crate) itl_p50_ms: Option<f64>,
    pub(crate) itl_p99_ms: Option<f64>,
    pub(crate) itl_max_ms: Option<f64>,
}

impl StreamMetrics {
    pub(crate) fn from_record(r: &StreamRecord) -> StreamMetrics {
        let n = r.usage.as_ref().map_or(r.content_deltas() as u64, |u| u.completion_tokens);
        let ms = |a: &Option<Stamp>, b: &Option<Stamp>| match (a, b) {
            (Some(a), Some(b)) => Some(a.ms_until(b)),
            _ => None,
        };
        let decode_ms = ms(&r.first_token, &r.last_token);
        let strict_tps = decode_ms.filter(|d| *d > 0.0 && n >= 2).map(|d| (n - 1) as f64 / (d / 1000.0));
        let external = ms(&r.first_token, &r.response_end).filter(|d| *d > 0.0).map(|d| n as f64 / (d / 1000.0));
        let mut gaps: Vec<f64> = r.token_mono_ns.windows(2).map(|w| (w[1] - w[0]) as f64 / 1e6).collect();
        gaps.sort_by(|a, b| a.total_cmp(b));
        let pct = |p: f64| (!gaps.is_empty()).then(|| gaps[((gaps.len() - 1) as f64 * p).round() as usize]);
        StreamMetrics {
            ttft_ms: ms(&r.request_start, &r.first_token),
            http_elapsed_ms: ms(&r.request_start, &r.response_end),
            strict_tps,
            external_decode_tps: external,
            content_deltas: r.content_deltas(),
            itl_p50_ms: pct(0.5),
            itl_p99_ms: pct(0.99),
            itl_max_ms: gaps.last().copied(),
        }
    }
}

/// One measured sample: everything a summary needs, nothing it must re-derive from files.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Sample {
    pub(crate) usage: Option<Usage>,
    pub(crate) finish_reason: Option<String>,
    /// Prompt tokens the prompt was calibrated to, when known.
    pub(crate) expected_prompt_tokens: Option<u64>,
    /// Output tokens asked for (`max_tokens`).
    pub(crate) max_tokens: u32,
    pub(crate) ignore_eos: bool,
    pub(crate) cache_prompt: bool,
    pub(crate) server: Option<ServerTiming>,
    pub(crate) draft: Option<DraftAcceptance>,
    /// The buffers the server's log sized while loading (model, KV, recurrent, output, compute;
    /// the MTP or draft context's apart), when it printed them (`-lv 4` on the pinned build).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) memory: Option<ServerMemory>,
    pub(crate) stream: StreamMetrics,
    /// Request timing blocks found in the log (exactly one for a valid sample).
    pub(crate) timing_blocks: usize,
    pub(crate) request_start: Option<Stamp>,
    pub(crate) first_token: Option<Stamp>,
    pub(crate) last_token: Option<Stamp>,
    pub(crate) response_end: Option<Stamp>,
    /// CLOCK_MONOTONIC ns of every non-empty streamed delta, as the stream stamped them (the
    /// first is `first_token`, the last `last_token`). Empty in records of releases before it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) token_mono_ns: Vec<u64>,
    pub(crate) server_started: Stamp,
    /// When each step of the lifecycle began and ended (docs/methodology.md §2), for the
    /// sample's timeline (`abprof timeline`). Empty in records of releases before it.
    #[serde(default, skip_serializing_if = "SampleSteps::is_empty")]
    pub(crate) steps: SampleSteps,
    /// The pid abprof spawned (the server, or the tracer that became or runs it).
    #[serde(default)]
    pub(crate) server_pid: u32,
    /// What abprof spawned: program and arguments, host, port and log file included.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) server_argv: Vec<String>,
    /// Spawn → first healthy `/health`, ms (model load; never part of a timing).
    pub(crate) startup_ms: Option<f64>,
    pub(crate) stop: Option<StopReport>,
    /// The server's `timings` JSON as sent in the usage chunk.
    pub(crate) timings: Option<serde_json::Value>,
    pub(crate) system_fingerprint: Option<String>,
    /// Why the sample is incomplete, when it is (the server died, the stream broke…).
    pub(crate) error: Option<String>,
    /// What was recorded around the request (idle gate, telemetry, `expect=`, the Pi run). The
    /// JSON key is `extra`, as in records written before these fields were typed.
    #[serde(default, skip_serializing_if = "SampleExtra::is_empty")]
    pub(crate) extra: SampleExtra,
}

/// The lifecycle's steps as they happened; a step the sample never reached stays `None`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct SampleSteps {
    /// The first healthy `/health` (the end of model load).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) healthy: Option<Stamp>,
    /// The load's untimed warm-up (a prompt-cache fill for pure decode; nothing for most loads).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) warm_up: Option<Span>,
    /// The idle gate before the request (docs/methodology.md §9.1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) idle_gate: Option<Span>,
    /// SIGTERM to the server's exit (or to the stop's failure).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) stop: Option<Span>,
}

impl SampleSteps {
    pub(crate) fn is_empty(&self) -> bool {
        *self == SampleSteps::default()
    }
}

/// Everything a sample's conditions and its load record beside the measurement.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct SampleExtra {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) idle_gate: Option<IdleGateRecord>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) telemetry: Option<TelemetryRecord>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) expect: Option<ExpectOutcome>,
    /// Whether `--backend-sampling` engaged, where the server asked for it (§7.20).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) backend_sampling: Option<super::backend_sampling::BackendSamplingProof>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) pi: Option<PiRun>,
    /// A speculative sample's draft counts by `/metrics` and by the log, where the server served
    /// them (started with `--metrics`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) spec_metrics: Option<super::spec_metrics::SpecMetrics>,
    /// The variant's binary changed on disk while this sample ran (docs/methodology.md §7
    /// "binary-changed").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) binary_changed: Option<BinaryChange>,
    /// The variant's model changed on disk while this sample ran (docs/methodology.md §7.14
    /// "model-changed").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) model_changed: Option<BinaryChange>,
    /// Where the server's busiest threads ran when the request ended (docs/methodology.md §2.1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) placement: Option<crate::server::placement::ServerPlacement>,
    /// The MTP yardstick's nine requests and their aggregate (docs/methodology.md §4.1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) mtp_yardstick: Option<super::mtp_yardstick::MtpYardstickRun>,
    /// The soak's requests (docs/methodology.md §4.2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) soak: Option<super::soak::SoakRun>,
    /// The SPEED-Bench-shaped workload's requests, one per category (docs/methodology.md §4.3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) speed_bench: Option<super::speed_bench::SpeedBenchRun>,
    /// A llama-bench sample's tests as it printed them (docs/methodology.md §4.4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) llama_bench: Option<super::bench_run::BenchRun>,
    /// The GPU runtime libraries the server's process mapped (docs/methodology.md §2.2): a
    /// change between samples of a variant is `runtime-changed` (§7.23).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) runtime: Option<crate::runtime_libraries::LoadedRuntime>,
    /// The power state read right after the request (docs/methodology.md §7.17
    /// "power-state-changed").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) power_state: Option<crate::telemetry::power_state::PowerState>,
}

/// What identifies a file's bytes cheaply: a rebuild in place changes at least one of these.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct FileStamp {
    pub(crate) size: u64,
    /// Modification time, ns since the epoch.
    pub(crate) mtime_ns: i128,
    pub(crate) inode: u64,
    pub(crate) dev: u64,
}

impl FileStamp {
    pub(crate) fn of(m: &std::fs::Metadata) -> FileStamp {
        use std::os::unix::fs::MetadataExt;
        FileStamp {
            size: m.size(),
            mtime_ns: m.mtime() as i128 * 1_000_000_000 + m.mtime_nsec() as i128,
            inode: m.ino(),
            dev: m.dev(),
        }
    }
}

/// A variant binary whose bytes differ from the sha256 the study recorded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct BinaryChange {
    pub(crate) path: std::path::PathBuf,
    pub(crate) recorded: FileStamp,
    /// None: the file is gone.
    pub(crate) now: Option<FileStamp>,
    pub(crate) recorded_sha256: String,
    pub(crate) now_sha256: Option<String>,
}

impl BinaryChange {
    /// "sha256 1a2b… → now": the one wording of a change, for the rule and the study's stop.
    pub(crate) fn hashes(&self) -> String {
        let short = |s: &str| s.chars().take(12).collect::<String>();
        let now = match (&self.now, &self.now_sha256) {
            (None, _) => "gone".to_string(),
            (Some(_), Some(s)) => format!("sha256 {}", short(s)),
            (Some(_), None) => "unreadable".to_string(),
        };
        format!("sha256 {} → {now}", short(&self.recorded_sha256))
    }
}

impl SampleExtra {
    pub(crate) fn is_empty(&self) -> bool {
        *self == SampleExtra::default()
    }

    /// The requests of a sample of several (the MTP yardstick's, the soak's, SPEED-Bench's), in
    /// the order sent.
    pub(crate) fn sequence(&self) -> Option<&[super::sequence::SequenceRequest]> {
        let yardstick = self.mtp_yardstick.as_ref().map(|y| y.requests.as_slice());
        let speed_bench = self.speed_bench.as_ref().map(|r| r.requests.as_slice());
        yardstick.or(speed_bench).or(self.soak.as_ref().map(|s| s.requests.as_slice()))
    }
}

/// A variant's `expect=` regex and whether the server log matched it (proof a feature engaged).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct ExpectOutcome {
    pub(crate) regex: String,
    pub(crate) matched: bool,
}

/// One run of the real Pi agent: the whole process timed, and what its JSONL and its answer's
/// Python showed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct PiRun {
    /// Spawn to exit of the whole pi process (it starts after /health: model load excluded).
    pub(crate) pi_wall_ms: f64,
    pub(crate) pi_exit: TimedExit,
    pub(crate) pi_argv: Vec<String>,
    /// Pi's usage of its answer (the server's counts are in `Sample::server`).
    pub(crate) pi_input_tokens: Option<u64>,
    pub(crate) pi_output_tokens: Option<u64>,
    pub(crate) stop_reason: Option<String>,
    pub(crate) assistant_messages: usize,
    pub(crate) tool_calls: Vec<String>,
    pub(crate) answer_chars: usize,
    pub(crate) code: Option<CodeCheck>,
    /// What is wrong with the answer (its JSONL, tool calls, its Python); empty when valid.
    pub(crate) answer_failures: Vec<String>,
}

impl Sample {
    pub(crate) fn prompt_tokens(&self) -> Option<u64> {
        self.usage.as_ref().map(|u| u.prompt_tokens)
    }

    pub(crate) fn completion_tokens(&self) -> Option<u64> {
        self.usage.as_ref().map(|u| u.completion_tokens)
    }
}
