//! The rejection rules (docs/methodology.md §7, one subsection per rule name used here): a sample
//! that breaks one is listed with its reason, never silently dropped.
use crate::measure::pi::TimedExit;
use crate::measure::Sample;
use serde::{Deserialize, Serialize};

/// What a sample is judged against.
#[derive(Debug, Clone, Default)]
pub(crate) struct Expectations {
    /// The calibrated prompt length every response must report.
    pub(crate) prompt_tokens: Option<u64>,
    /// Locked-length workload: must finish by `length` with exactly max_tokens output.
    pub(crate) locked_length: bool,
    /// Timing blocks the log must hold (2 when the prompt cache was warmed first).
    pub(crate) timing_blocks: usize,
    /// Other processes may use at most this much CPU (% of a core) during the request.
    pub(crate) foreign_cpu_max_pct: Option<f64>,
    /// The study's restore/verify hooks' outcome (None: no record).
    pub(crate) isolation_restored: Option<bool>,
    /// The power state the study recorded when it started (host.json, docs/methodology.md §9.7).
    pub(crate) power_state: Option<crate::telemetry::power_state::PowerState>,
}

/// A rejection rule's name (docs/methodology.md §7, one subsection per rule): one variant per rule,
/// its kebab-case name the one the evidence, the summaries and the history keep.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Rule {
    Incomplete,
    OneRequestPerLog,
    CalibratedPromptTokens,
    MinOutput,
    LockedLength,
    Expect,
    BackendSamplingNotEngaged,
    OtherWorkload,
    AbprofCpu,
    PiExit,
    PiAnswer,
    PowerStateChanged,
    BinaryChanged,
    NoDrafts,
    ModelChanged,
    IsolationRestored,
    CorruptRecord,
    PromptTokensDiffer,
    DraftCountsDiffer,
    EvidenceChanged,
    SupersededAttempt,
    /// A Pi sample's own checks, as the history records them.
    PiSampleCheck,
    RuntimeChanged,
    LlamaBenchNoResult,
    LlamaBenchTestMismatch,
    /// A rule this abprof does not know (a newer one's summary, a history row): kept by name.
    #[serde(untagged)]
    Other(String),
}

impl Rule {
    /// Every rule this abprof applies.
    pub(crate) const ALL: [Rule; 25] = [
        Rule::Incomplete,
        Rule::OneRequestPerLog,
        Rule::CalibratedPromptTokens,
        Rule::MinOutput,
        Rule::LockedLength,
        Rule::Expect,
        Rule::BackendSamplingNotEngaged,
        Rule::OtherWorkload,
        Rule::AbprofCpu,
        Rule::PiExit,
        Rule::PiAnswer,
        Rule::PowerStateChanged,
        Rule::BinaryChanged,
        Rule::NoDrafts,
        Rule::ModelChanged,
        Rule::IsolationRestored,
        Rule::CorruptRecord,
        Rule::PromptTokensDiffer,
        Rule::DraftCountsDiffer,
        Rule::EvidenceChanged,
        Rule::SupersededAttempt,
        Rule::PiSampleCheck,
        Rule::RuntimeChanged,
        Rule::LlamaBenchNoResult,
        Rule::LlamaBenchTestMismatch,
    ];

    /// The rule's name (its serde name).
    pub(crate) fn as_str(&self) -> &str {
        match self {
            Rule::Incomplete => "incomplete",
            Rule::OneRequestPerLog => "one-request-per-log",
            Rule::CalibratedPromptTokens => "calibrated-prompt-tokens",
            Rule::MinOutput => "min-output",
            Rule::LockedLength => "locked-length",
            Rule::Expect => "expect",
            Rule::BackendSamplingNotEngaged => "backend-sampling-not-engaged",
            Rule::OtherWorkload => "other-workload",
            Rule::AbprofCpu => "abprof-cpu",
            Rule::PiExit => "pi-exit",
            Rule::PiAnswer => "pi-answer",
            Rule::PowerStateChanged => "power-state-changed",
            Rule::BinaryChanged => "binary-changed",
            Rule::NoDrafts => "no-drafts",
            Rule::ModelChanged => "model-changed",
            Rule::IsolationRestored => "isolation-restored",
            Rule::CorruptRecord => "corrupt-record",
            Rule::PromptTokensDiffer => "prompt-tokens-differ",
            Rule::DraftCountsDiffer => "draft-counts-differ",
            Rule::EvidenceChanged => "evidence-changed",
            Rule::SupersededAttempt => "superseded-attempt",
            Rule::PiSampleCheck => "pi-sample-check",
            Rule::RuntimeChanged => "runtime-changed",
            Rule::LlamaBenchNoResult => "llama-bench-no-result",
            Rule::LlamaBenchTestMismatch => "llama-bench-test-mismatch",
            Rule::Other(name) => name,
        }
    }

    /// The rule named `name` (a history row's text), [`Rule::Other`] when this abprof has none.
    pub(crate) fn named(name: &str) -> Rule {
        Rule::ALL.into_iter().find(|r| r.as_str() == name).unwrap_or_else(|| Rule::Other(name.to_string()))
    }
}

/// Tests and the history compare a rule with its name.
impl PartialEq<&str> for Rule {
    fn eq(&self, name: &&str) -> bool {
        self.as_str() == *name
    }
}

impl std::fmt::Display for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub(crate) struct Rejection {
    pub(crate) rule: Rule,
    pub(crate) reason: String,
}

/// abprof's own CPU (its sampler, stream parsing and runtime) over the request, % of one core,
/// above which a sample is rejected `abprof-cpu` (docs/methodology.md §7.15): at the study's
/// bounded rates abprof stays under a few % on the 2-core test bed, and a fifth of a core taken
/// from a server that uses every core slows the request itself.
pub(crate) const ABPROF_CPU_MAX_PCT: f64 = 20.0;

fn reject(rule: Rule, reason: String) -> Rejection {
    Rejection { rule, reason }
}

/// Per-sample rules. The cross-variant ones are [`prompt_tokens_differ`] and, as a comparison
/// caveat rather than a rejection, acceptance differing materially (the study summary).
pub(crate) fn sample_rejections(s: &Sample, exp: &Expectations) -> Vec<Rejection> {
    let mut out = Vec::new();
    match &s.extra.llama_bench {
        Some(run) => llama_bench_rules(s, run, &mut out),
        None => request_rules(s, exp, &mut out),
    }
    engaged_rules(s, &mut out);
    host_rules(s, exp, &mut out);
    pi_rules(s, &mut out);
    condition_rules(s, exp, &mut out);
    artifact_rules(s, &mut out);
    out
}

/// A llama-bench sample's run (docs/methodology.md §4.4): complete, something printed, and what
/// it printed the tests asked, once each, of one repetition, at the asked KV cache type.
fn llama_bench_rules(s: &Sample, run: &crate::measure::bench_run::BenchRun, out: &mut Vec<Rejection>) {
    if let Some(e) = &s.error {
        out.push(reject(Rule::Incomplete, e.clone()));
    }
    if run.results.is_empty() {
        let why = match &run.unreadable {
            Some(e) => format!("llama-bench's output is not its JSONL ({e})"),
            None => "llama-bench printed no result (see llama-bench.stderr)".into(),
        };
        out.push(reject(Rule::LlamaBenchNoResult, why));
        return;
    }
    let mismatches = run.mismatches();
    if !mismatches.is_empty() {
        out.push(reject(Rule::LlamaBenchTestMismatch, mismatches.join("; ")));
    }
}

/// The request itself: complete, one per log, the calibrated prompt, the locked output length.
fn request_rules(s: &Sample, exp: &Expectations, out: &mut Vec<Rejection>) {
    if let Some(e) = &s.error {
        out.push(reject(Rule::Incomplete, e.clone()));
    }
    let want_blocks = exp.timing_blocks.max(1);
    if s.timing_blocks > want_blocks {
        out.push(reject(
            Rule::OneRequestPerLog,
            format!("{} request timing blocks in the server log, expected {want_blocks}", s.timing_blocks),
        ));
    }
    let sequence = s.extra.sequence();
    // A sequence's usage is its requests' summed; each request must carry the calibrated prompt.
    let each = sequence.map(|r| r.iter().map(|r| (r.name.as_str(), r.prompt_tokens)).collect::<Vec<_>>());
    match (exp.prompt_tokens, each) {
        (Some(want), Some(each)) => {
            for (name, got) in each.into_iter().filter(|(_, got)| *got != Some(want)) {
                let got = got.map_or("absent".into(), |g| g.to_string());
                out.push(reject(
                    Rule::CalibratedPromptTokens,
                    format!("{name}: usage.prompt_tokens {got} is not the calibrated {want}"),
                ));
            }
        }
        _ => prompt_tokens_rule(s, exp, out),
    }
    if let Some(n) = s.completion_tokens() {
        if n < 2 {
            out.push(reject(Rule::MinOutput, format!("{n} output tokens: decode TPS needs at least 2")));
        }
        if exp.locked_length && sequence.is_none() && n != s.max_tokens as u64 {
            out.push(reject(Rule::LockedLength, format!("{n} output tokens, not the locked {}", s.max_tokens)));
        }
    }
    if let Some(requests) = sequence.filter(|_| exp.locked_length && s.error.is_none()) {
        for (prompt, why) in crate::measure::sequence::short_requests(requests, s.max_tokens) {
            out.push(reject(
                Rule::LockedLength,
                format!(
                    "request {prompt}: {why}, not the locked {} by \"length\" (--ignore-eos locks it)",
                    s.max_tokens
                ),
            ));
        }
    }
    if let Some(why) = sequence.and_then(|r| draft_counts_differ(s, r)) {
        out.push(reject(Rule::DraftCountsDiffer, why));
    }
    if let Some(why) = s.extra.spec_metrics.as_ref().and_then(|m| m.disagreement()) {
        out.push(reject(Rule::DraftCountsDiffer, why));
    }
    if exp.locked_length && sequence.is_none() && s.error.is_none() && s.finish_reason.as_deref() != Some("length") {
        out.push(reject(
            Rule::LockedLength,
            format!("finish_reason {:?}, not \"length\"", s.finish_reason.as_deref().unwrap_or("none")),
        ));
    }
}

/// The feature the variant asked for engaged: its `expect=` line, the backend sampler.
fn engaged_rules(s: &Sample, out: &mut Vec<Rejection>) {
    if let Some(e) = s.extra.expect.as_ref().filter(|e| !e.matched) {
        out.push(reject(
            Rule::Expect,
            format!("expect= regex {:?} not in the server log: the feature did not engage", e.regex),
        ));
    }
    if let Some(p) = s.extra.backend_sampling.as_ref().filter(|p| !p.engaged) {
        out.push(reject(
            Rule::BackendSamplingNotEngaged,
            format!("--backend-sampling was asked for but not proven engaged: {}", p.reason()),
        ));
    }
}

/// The host was quiet: no other workload, and abprof's own work within its limit.
fn host_rules(s: &Sample, exp: &Expectations, out: &mut Vec<Rejection>) {
    let foreign = s.extra.telemetry.as_ref().and_then(|t| t.host_cpu.as_ref()).map(|h| h.foreign_pct);
    if let (Some(foreign), Some(max)) = (foreign, exp.foreign_cpu_max_pct) {
        if foreign > max {
            out.push(reject(
                Rule::OtherWorkload,
                format!("other processes used {foreign:.0}% of a core during the request (limit {max:.0}%): another workload was running"),
            ));
        }
    }
    let own = s.extra.telemetry.as_ref().and_then(|t| t.host_cpu.as_ref()).and_then(|h| h.abprof_pct);
    if let Some(own) = own.filter(|&p| p > ABPROF_CPU_MAX_PCT) {
        out.push(reject(
            Rule::AbprofCpu,
            format!("abprof itself used {own:.0}% of a core during the request (limit {ABPROF_CPU_MAX_PCT:.0}%): its own work slowed the sample"),
        ));
    }
}

/// The Pi agent ran to its end and answered.
fn pi_rules(s: &Sample, out: &mut Vec<Rejection>) {
    if let Some(pi) = &s.extra.pi {
        match pi.pi_exit {
            TimedExit::Exited(0) => {}
            TimedExit::TimedOut => out.push(reject(Rule::PiExit, "pi ran past its timeout".into())),
            TimedExit::Stalled(secs) => out.push(reject(
                Rule::PiExit,
                format!("pi wrote nothing for {secs} s, so its server stalled (or pi hung) and it was stopped: raise --stall-timeout (`stall_timeout_s`) if the model is only slow"),
            )),
            e => out.push(reject(Rule::PiExit, format!("pi {} (see pi.stderr)", e.describe()))),
        }
        for why in &pi.answer_failures {
            out.push(reject(Rule::PiAnswer, why.clone()));
        }
    }
}

/// The sample ran under the study's power state and isolation.
fn condition_rules(s: &Sample, exp: &Expectations, out: &mut Vec<Rejection>) {
    if let (Some(study), Some(now)) = (&exp.power_state, &s.extra.power_state) {
        // A sample reads only the conditions (PowerState::conditions_of_host); a sample of an
        // earlier release read everything, so both sides are compared as conditions.
        let (study, now) = (study.conditions(), now.conditions());
        if study != now {
            out.push(reject(
                Rule::PowerStateChanged,
                format!(
                    "the power state read after the request ({}) is not the study's first ({}): the sample ran under other conditions",
                    now.line(),
                    study.line()
                ),
            ));
        }
    }
    if exp.isolation_restored == Some(false) {
        out.push(reject(
            Rule::IsolationRestored,
            "the restore/verify hooks failed: isolation claims do not hold".into(),
        ));
    }
}

/// The bytes that ran are known (binary, model), and a speculative variant drafted.
fn artifact_rules(s: &Sample, out: &mut Vec<Rejection>) {
    if let Some(c) = &s.extra.binary_changed {
        out.push(reject(
            Rule::BinaryChanged,
            format!(
                "the binary {} changed on disk during the sample ({}): which bytes ran is unknown",
                c.path.display(),
                c.hashes()
            ),
        ));
    }
    if s.error.is_none() {
        if let Some(how) = crate::variant::speculation_requested(&s.server_argv).filter(|_| drafted(s) == 0) {
            out.push(reject(
                Rule::NoDrafts,
                format!("the server was asked for speculative decoding ({how}) but drafted no token: speculation was off or never engaged, so this decode is not the speculative one"),
            ));
        }
    }
    if let Some(c) = &s.extra.model_changed {
        out.push(reject(
            Rule::ModelChanged,
            format!(
                "the model {} changed on disk during the sample ({}): which model ran is unknown",
                c.path.display(),
                c.hashes()
            ),
        ));
    }
}

/// One request's `usage.prompt_tokens` against the calibrated count.
fn prompt_tokens_rule(s: &Sample, exp: &Expectations, out: &mut Vec<Rejection>) {
    match (exp.prompt_tokens, s.prompt_tokens()) {
        (Some(want), Some(got)) if want != got => out.push(reject(
            Rule::CalibratedPromptTokens,
            format!("usage.prompt_tokens {got} is not the calibrated {want}"),
        )),
        (Some(_), None) if s.error.is_none() => {
            out.push(reject(Rule::CalibratedPromptTokens, "the response carried no usage".into()))
        }
        _ => {}
    }
}

/// Tokens the sample's drafts proposed: the log's acceptance line(s), else the response's
/// `timings.draft_n` (a sequence's: its requests summed).
fn drafted(s: &Sample) -> u64 {
    let from_timings = || s.timings.as_ref()?.get("draft_n")?.as_u64();
    let from_sequence = || s.extra.sequence().map(|r| r.iter().map(|r| r.draft_n).sum());
    s.draft.as_ref().map(|d| d.generated).or_else(from_timings).or_else(from_sequence).unwrap_or(0)
}

/// A sequence's drafted and accepted tokens as its responses' `timings` sum them against the
/// server log's acceptance lines summed (§7.18), where both report any.
fn draft_counts_differ(s: &Sample, requests: &[crate::measure::sequence::SequenceRequest]) -> Option<String> {
    let log = s.draft.as_ref().filter(|d| d.generated > 0)?;
    let drafted: u64 = requests.iter().map(|r| r.draft_n).sum();
    let accepted: u64 = requests.iter().map(|r| r.draft_n_accepted).sum();
    (drafted > 0 && (drafted, accepted) != (log.generated, log.accepted)).then(|| {
        format!(
            "the responses' timings drafted {drafted} and accepted {accepted}, the server log {} and {}: one of them does not count this server's drafts",
            log.generated, log.accepted
        )
    })
}

/// A `sample.json` that exists but does not parse: listed, never taken for "not measured yet";
/// `--resume` measures the slot again.
pub(crate) fn corrupt_record(detail: &str) -> Rejection {
    reject(Rule::CorruptRecord, format!("corrupt: {detail}"))
}

/// A sample whose files are not the ones abprof sealed (docs/methodology.md §7.21): its figures
/// cannot be shown to be the measured ones.
pub(crate) fn evidence_changed(what: &[String]) -> Rejection {
    reject(
        Rule::EvidenceChanged,
        format!("{} since abprof wrote it (its SHA256SUMS says otherwise): left out of every figure; restore the files from a copy of the evidence folder", what.join(", ")),
    )
}

/// A sample whose server loaded other runtime libraries than its variant's first sample did
/// (docs/methodology.md §7.26): another HIP, CUDA or ggml build ran under the same label.
pub(crate) fn runtime_changed(
    got: &crate::runtime_libraries::LoadedRuntime,
    first: &crate::runtime_libraries::LoadedRuntime,
) -> Option<Rejection> {
    let changes = got.changes_from(first);
    (!changes.is_empty()).then(|| {
        reject(
            Rule::RuntimeChanged,
            format!(
                "the server loaded other runtime libraries than the variant's first sample: {}; which runtime ran is not one",
                changes.join("; ")
            ),
        )
    })
}

/// Without a calibrated count, every variant's prompt must still match the baseline's.
pub(crate) fn prompt_tokens_differ(got: Option<u64>, baseline: Option<u64>) -> Option<Rejection> {
    (got != baseline).then(|| {
        reject(Rule::PromptTokensDiffer, format!("prompt tokens {got:?} differ from the baseline's {baseline:?}"))
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::measure::{ExpectOutcome, Sample, SampleExtra, StreamMetrics};
    use crate::telemetry::record::{HostCpu, TelemetryRecord};

    /// A clean locked 64-token sample carrying `extra` (for other modules' tests too).
    pub(crate) fn sample(extra: SampleExtra) -> Sample {
        let t = crate::clock::Stamp { mono_ns: 0, boot_ns: 0 };
        Sample {
            usage: Some(crate::client::Usage {
                prompt_tokens: 300,
                completion_tokens: 64,
                total_tokens: 364,
                cached_tokens: None,
            }),
            finish_reason: Some("length".into()),
            expected_prompt_tokens: Some(300),
            max_tokens: 64,
            ignore_eos: true,
            cache_prompt: false,
            server: None,
            draft: None,
            memory: None,
            stream: StreamMetrics::from_record(&Default::default()),
            timing_blocks: 1,
            request_start: None,
            first_token: None,
            last_token: None,
            response_end: None,
            token_mono_ns: vec![],
            server_started: t,
            server_pid: 0,
            server_argv: vec![],
            startup_ms: None,
            stop: None,
            timings: None,
            system_fingerprint: None,
            error: None,
            steps: Default::default(),
            extra,
        }
    }

    /// A llama-bench sample's rules: a run that printed nothing, or not what it asked, is
    /// rejected by name; a run of its tests once each is judged by none of a request's rules.
    #[test]
    fn a_llama_bench_sample_is_rejected_for_no_result_and_for_tests_not_asked() {
        use crate::llama_bench::BenchTest;
        use crate::measure::bench_run::{BenchResult, BenchRun};
        let row = |n_prompt: u64, n_gen: u64| {
            let line = format!(
                r#"{{"build_commit": "0c1e570", "model_filename": "m", "model_type": "x", "n_prompt": {n_prompt}, "n_gen": {n_gen}, "n_depth": 0, "type_k": "f16", "avg_ts": 10.0, "samples_ts": [ 10.0 ]}}"#
            );
            BenchResult { row: crate::llama_bench::parse(&line).unwrap().1.remove(0), seen_mono_ns: None }
        };
        let asked =
            vec![BenchTest { n_prompt: 64, n_gen: 0, n_depth: 0 }, BenchTest { n_prompt: 0, n_gen: 16, n_depth: 0 }];
        let bench = |results: Vec<BenchResult>, unreadable: Option<&str>| {
            let run =
                BenchRun { asked: asked.clone(), cache_type: None, results, unreadable: unreadable.map(String::from) };
            let mut s = sample(SampleExtra { llama_bench: Some(run), ..Default::default() });
            (s.usage, s.finish_reason, s.timing_blocks) = (None, None, 0);
            s
        };
        let exp = Expectations { locked_length: true, timing_blocks: 1, ..Default::default() };
        assert!(rules_of(&bench(vec![row(64, 0), row(0, 16)], None), &exp).is_empty());
        let mut none = bench(Vec::new(), None);
        none.error = Some("llama-bench exited with status 1".into());
        assert_eq!(rules_of(&none, &exp), ["incomplete", "llama-bench-no-result"]);
        assert_eq!(rules_of(&bench(Vec::new(), Some("not JSONL")), &exp), ["llama-bench-no-result"]);
        let other = sample_rejections(&bench(vec![row(64, 0), row(0, 8)], None), &exp);
        assert_eq!(other.len(), 1, "{other:?}");
        assert_eq!(other[0].rule, Rule::LlamaBenchTestMismatch);
        assert_eq!(other[0].reason, "tg16 asked, not printed; tg8 printed, not asked");
    }

    #[test]
    fn every_rule_is_written_by_its_name_and_an_unknown_name_is_kept() {
        for rule in Rule::ALL {
            let json = serde_json::to_string(&rule).unwrap();
            assert_eq!(json, format!("\"{}\"", rule.as_str()), "{rule:?}");
            assert_eq!(serde_json::from_str::<Rule>(&json).unwrap(), rule);
            assert_eq!(Rule::named(rule.as_str()), rule);
        }
        let newer: Rule = serde_json::from_str("\"a-rule-of-tomorrow\"").unwrap();
        assert_eq!(newer, Rule::Other("a-rule-of-tomorrow".into()));
        assert_eq!(serde_json::to_string(&newer).unwrap(), "\"a-rule-of-tomorrow\"");
        let r: Rejection = serde_json::from_str(r#"{"rule": "other-workload", "reason": "busy"}"#).unwrap();
        assert_eq!(r.rule, Rule::OtherWorkload);
    }

    fn rules_of(s: &Sample, exp: &Expectations) -> Vec<String> {
        sample_rejections(s, exp).into_iter().map(|r| r.rule.to_string()).collect()
    }

    /// An MTP yardstick sample of nine `draft_n` 143 / `draft_n_accepted` 143 responses at 192
    /// tokens (the shape of tests/fixtures/mtp-yardstick/predictable-mtp-code.sse).
    #[test]
    fn the_mtp_yardstick_locks_each_request_and_checks_its_counts_against_the_log() {
        use crate::measure::mtp_yardstick::{MtpYardstickRun, YardstickTotals};
        use crate::measure::sequence::SequenceRequest;
        let request = |prompt: &str, n: u64, finish: &str| SequenceRequest {
            name: prompt.into(),
            wall_ms: Some(1.0),
            start_mono_ns: None,
            end_mono_ns: None,
            finish_reason: Some(finish.into()),
            completion_tokens: Some(n),
            prompt_tokens: None,
            prompt_n: None,
            prompt_ms: None,
            predicted_n: Some(n),
            predicted_ms: Some(100.0),
            draft_n: 143,
            draft_n_accepted: 143,
        };
        let run = |requests: Vec<SequenceRequest>| {
            let totals = YardstickTotals::of(&requests, Some(9.0));
            MtpYardstickRun { requests, totals }
        };
        let nine = || (0..9).map(|i| request(&format!("p{i}"), 192, "length")).collect::<Vec<_>>();
        let mut s = sample(SampleExtra { mtp_yardstick: Some(run(nine())), ..SampleExtra::default() });
        s.usage.as_mut().unwrap().completion_tokens = 9 * 192;
        s.max_tokens = 192;
        s.timing_blocks = 9;
        s.draft = Some(crate::server::log::DraftAcceptance {
            rate: 1.0,
            accepted: 9 * 143,
            generated: 9 * 143,
            mean_len: Some(3.98),
            per_position: None,
        });
        let exp = Expectations { locked_length: true, timing_blocks: 9, ..Expectations::default() };
        assert!(rules_of(&s, &exp).is_empty(), "{:?}", sample_rejections(&s, &exp));
        let mut early = nine();
        early[5] = request("translation", 87, "stop");
        let mut short = s.clone();
        short.extra.mtp_yardstick = Some(run(early));
        let why = sample_rejections(&short, &exp);
        assert_eq!(why.len(), 1, "{why:?}");
        assert_eq!(why[0].rule, "locked-length");
        assert!(why[0].reason.contains("request translation: 87 output tokens"), "{}", why[0].reason);
        let mut counted = s.clone();
        counted.draft.as_mut().unwrap().accepted -= 1;
        let why = sample_rejections(&counted, &exp);
        assert_eq!(why.iter().map(|r| r.rule.as_str()).collect::<Vec<_>>(), ["draft-counts-differ"]);
        assert!(
            why[0].reason.contains("drafted 1287 and accepted 1287, the server log 1287 and 1286"),
            "{}",
            why[0].reason
        );
        // The server's /metrics counting other drafts than its log: the same rule, the two named.
        let mut metered = s.clone();
        metered.extra.spec_metrics = Some(crate::measure::spec_metrics::SpecMetrics {
            drafted: 1287,
            accepted: 1280,
            verification_steps: 420,
            log_drafted: 1287,
            log_accepted: 1287,
        });
        let why = sample_rejections(&metered, &exp);
        assert_eq!(why.iter().map(|r| r.rule.as_str()).collect::<Vec<_>>(), ["draft-counts-differ"]);
        assert!(why[0].reason.contains("/metrics counted 1287 drafted and 1280 accepted"), "{}", why[0].reason);
        metered.extra.spec_metrics.as_mut().unwrap().accepted = 1287;
        assert!(rules_of(&metered, &exp).is_empty());
        s.timing_blocks = 10;
        assert_eq!(rules_of(&s, &exp), ["one-request-per-log"]);
    }

    #[test]
    fn a_clean_locked_sample_passes_and_each_rule_names_itself() {
        let exp = Expectations {
            prompt_tokens: Some(300),
            locked_length: true,
            timing_blocks: 1,
            foreign_cpu_max_pct: Some(50.0),
            isolation_restored: Some(true),
            power_state: None,
        };
        assert!(rules_of(&sample(SampleExtra::default()), &exp).is_empty());
        let host_cpu = Some(HostCpu { foreign_pct: 96.0, ..HostCpu::default() });
        let busy = sample(SampleExtra {
            telemetry: Some(TelemetryRecord { host_cpu, ..TelemetryRecord::default() }),
            ..SampleExtra::default()
        });
        assert_eq!(rules_of(&busy, &exp), ["other-workload"]);
        let expect = Some(ExpectOutcome { regex: "FlashHead".into(), matched: false });
        let unengaged = sample(SampleExtra { expect, ..SampleExtra::default() });
        assert_eq!(rules_of(&unengaged, &exp), ["expect"]);
        let mut short = sample(SampleExtra::default());
        short.usage.as_mut().unwrap().prompt_tokens = 299;
        short.finish_reason = Some("stop".into());
        short.timing_blocks = 2;
        assert_eq!(rules_of(&short, &exp), ["one-request-per-log", "calibrated-prompt-tokens", "locked-length"]);
        let unrestored = Expectations { isolation_restored: Some(false), ..exp.clone() };
        assert_eq!(rules_of(&sample(SampleExtra::default()), &unrestored), ["isolation-restored"]);
        let stamp = crate::measure::FileStamp { size: 1, mtime_ns: 1, inode: 1, dev: 1 };
        let binary_changed = Some(crate::measure::BinaryChange {
            path: "/bin/llama-server".into(),
            recorded: stamp,
            now: Some(crate::measure::FileStamp { inode: 2, ..stamp }),
            recorded_sha256: "a".repeat(64),
            now_sha256: Some("b".repeat(64)),
        });
        assert_eq!(
            rules_of(&sample(SampleExtra { binary_changed: binary_changed.clone(), ..SampleExtra::default() }), &exp),
            ["binary-changed"]
        );
        let model_changed = binary_changed.map(|c| crate::measure::BinaryChange { path: "/m.gguf".into(), ..c });
        assert_eq!(rules_of(&sample(SampleExtra { model_changed, ..SampleExtra::default() }), &exp), ["model-changed"]);
        let own = |pct: f64| {
            let host_cpu = Some(HostCpu { abprof_pct: Some(pct), ..HostCpu::default() });
            sample(SampleExtra {
                telemetry: Some(TelemetryRecord { host_cpu, ..TelemetryRecord::default() }),
                ..SampleExtra::default()
            })
        };
        assert!(rules_of(&own(3.0), &exp).is_empty());
        assert_eq!(rules_of(&own(45.0), &exp), ["abprof-cpu"]);
        assert!(prompt_tokens_differ(Some(300), Some(300)).is_none());
        assert_eq!(prompt_tokens_differ(Some(301), Some(300)).unwrap().rule, "prompt-tokens-differ");
    }

    /// `power-state-changed` (docs/methodology.md §7.17): a power limit lowered mid-study.
    #[test]
    fn a_power_limit_that_moved_during_the_study_rejects_the_sample() {
        use crate::telemetry::power_state::{PowerLimit, PowerState};
        let at = |watts: f64| PowerState {
            power_limits: vec![PowerLimit { source: "nvidia-smi gpu0 enforced.power.limit".into(), watts }],
            gpu_driver: Some("580.95.05".into()),
            ..PowerState::default()
        };
        let exp = Expectations { timing_blocks: 1, power_state: Some(at(700.0)), ..Expectations::default() };
        let with = |p: Option<PowerState>| sample(SampleExtra { power_state: p, ..SampleExtra::default() });
        assert!(rules_of(&with(Some(at(700.0))), &exp).is_empty());
        assert!(rules_of(&with(None), &exp).is_empty(), "a record of an earlier release has nothing to compare");
        // A sample reads the conditions only (no versions): the same limits are no change.
        assert!(rules_of(&with(Some(at(700.0).conditions())), &exp).is_empty());
        let r = sample_rejections(&with(Some(at(340.0))), &exp);
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].rule, "power-state-changed");
        assert!(r[0].reason.contains("340.0 W") && r[0].reason.contains("700.0 W"), "{}", r[0].reason);
    }

    /// `no-drafts` (docs/methodology.md §7.16): speculation asked for on the command line and no
    /// token drafted, in the log or the response's timings.
    #[test]
    fn speculation_asked_for_and_nothing_drafted_is_rejected() {
        let exp = Expectations {
            prompt_tokens: None,
            locked_length: false,
            timing_blocks: 1,
            foreign_cpu_max_pct: None,
            isolation_restored: None,
            power_state: None,
        };
        let argv = |a: &[&str]| a.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let with = |args: &[&str], draft: Option<(u64, u64)>, timings: Option<serde_json::Value>| {
            let mut s = sample(SampleExtra::default());
            s.server_argv = argv(args);
            s.draft = draft.map(|(accepted, generated)| crate::server::log::DraftAcceptance {
                rate: if generated == 0 { 0.0 } else { accepted as f64 / generated as f64 },
                accepted,
                generated,
                mean_len: None,
                per_position: None,
            });
            s.timings = timings;
            s
        };
        let mtp = ["llama-server", "-m", "m.gguf", "--spec-type", "draft-mtp", "--spec-draft-n-max", "3"];
        assert_eq!(rules_of(&with(&mtp, None, None), &exp), ["no-drafts"], "no acceptance line at all");
        assert_eq!(rules_of(&with(&mtp, Some((0, 0)), None), &exp), ["no-drafts"], "nothing drafted");
        assert!(rules_of(&with(&mtp, Some((0, 87)), None), &exp).is_empty(), "drafted, none accepted: a regime");
        let timed = Some(serde_json::json!({"draft_n": 24, "draft_n_accepted": 23}));
        assert!(rules_of(&with(&mtp, None, timed), &exp).is_empty(), "the response's timings count too");
        let md = ["llama-server", "-m", "t.gguf", "-md", "d.gguf"];
        assert_eq!(rules_of(&with(&md, None, None), &exp), ["no-drafts"]);
        let off = ["llama-server", "-m", "t.gguf", "--spec-type", "none"];
        assert!(rules_of(&with(&off, None, None), &exp).is_empty(), "speculation off is not asked for");
        assert!(rules_of(&with(&["llama-server", "-m", "t.gguf"], None, None), &exp).is_empty());
        assert_eq!(crate::variant::speculation_requested(&argv(&mtp)).as_deref(), Some("--spec-type draft-mtp"));
    }

    /// docs/methodology.md, the rulebook this file applies.
    fn methodology() -> String {
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/methodology.md")).unwrap()
    }

    /// Every rule the binary can print has its §7 section, anchored by its name as the others
    /// are (`<a id="NAME"></a>` over `### §7.N \`NAME\``): a new rule without one fails here.
    #[test]
    fn every_rule_has_its_section_in_the_rulebook() {
        let doc = methodology();
        let s7 = &doc[doc.find("\n## §7 ").expect("§7")..doc.find("\n## §8 ").expect("§8")];
        let lines: Vec<&str> = s7.lines().collect();
        let heading = regex::Regex::new(r"^### §7\.\d+ `([a-z-]+)`$").unwrap();
        let mut documented = Vec::new();
        for (i, line) in lines.iter().enumerate() {
            if let Some(c) = heading.captures(line) {
                let name = c[1].to_string();
                assert_eq!(lines[i - 1], format!("<a id=\"{name}\"></a>"), "§7 `{name}` has no anchor of its name");
                documented.push(name);
            }
        }
        let missing: Vec<&str> =
            Rule::ALL.iter().map(Rule::as_str).filter(|r| !documented.iter().any(|d| d == r)).collect();
        assert!(missing.is_empty(), "rules without a docs/methodology.md §7 section: {missing:?}");
        let unknown: Vec<&String> =
            documented.iter().filter(|d| Rule::named(d) == Rule::Other(d.to_string())).collect();
        assert!(unknown.is_empty(), "§7 sections of no rule the code has: {unknown:?}");
    }

    /// The methodology's index lists every § by its anchor, and each § carries that anchor.
    #[test]
    fn the_rulebooks_index_lists_every_section() {
        let doc = methodology();
        let sections: Vec<String> =
            regex::Regex::new(r"(?m)^## §(\d+) ").unwrap().captures_iter(&doc).map(|c| c[1].to_string()).collect();
        let indexed: Vec<String> = regex::Regex::new(r"(?m)^\| \[§(\d+)\]\(#s(\d+)\) \|")
            .unwrap()
            .captures_iter(&doc)
            .inspect(|c| assert_eq!(c[1], c[2], "the index's §{} links #s{}", &c[1], &c[2]))
            .map(|c| c[1].to_string())
            .collect();
        assert!(sections.len() >= 21, "{sections:?}");
        assert_eq!(indexed, sections, "the index of docs/methodology.md against its ## § headings");
        for n in &sections {
            assert!(doc.contains(&format!("<a id=\"s{n}\"></a>\n## §{n} ")), "§{n} has no anchor s{n}");
        }
    }
}
