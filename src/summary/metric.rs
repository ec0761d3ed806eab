//! The metrics a summary judges, each defined once (docs/methodology.md §1): its stored name,
//! title, unit, decimals, direction, `--metric` name and how it is computed from one sample's record and
//! its telemetry series. Every format reads a metric from [`Spec`]; adding one is a variant of
//! [`Metric`] and its row in [`Metric::spec`].
use super::phases;
use super::stats::Verdict;
use crate::llama_bench::BenchTest;
use crate::measure::Sample;
use crate::telemetry::phases::{EnergyBasis, PhaseStats};
use crate::telemetry::sampler::TelemetrySample;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Metric {
    ServerDecodeTps,
    ServerPrefillTps,
    StrictStreamedTps,
    TtftMs,
    /// Decode energy per output token, J (docs/methodology.md §9.6).
    DecodeJPerToken,
    /// Prefill energy per prompt token, J.
    PrefillJPerPromptToken,
    /// Decode's time-weighted mean power, W.
    DecodeMeanPowerW,
    /// Output tokens per joule of decode energy.
    DecodeTokensPerJ,
    /// Decode tokens per joule in the decode's least efficient tenth of windows.
    DecodeP10WindowTokensPerJ,
    /// Decode gfx-only energy per output token, J, where the source reads gfx power (an APU, §9.6).
    DecodeGfxJPerToken,
    /// A llama-bench test's tokens per second, as llama-bench measured it in a sample of one
    /// repetition (docs/methodology.md §4.4).
    LlamaBenchTps(BenchTest),
    /// A llama-bench test's energy per token, J, over the test's own window (its result line's
    /// moment less its measured time), where the telemetry read power or energy at least twice
    /// inside it (docs/methodology.md §4.4, §9.6).
    LlamaBenchJPerToken(BenchTest),
}

/// What a metric is computed from: one sample's record and its telemetry series (empty where the
/// sample recorded none; of a server on several GPUs, the server's series, §9.11).
#[derive(Debug, Clone, Copy)]
pub(crate) struct MetricInput<'a> {
    pub(crate) sample: &'a Sample,
    pub(crate) series: &'a [TelemetrySample],
}

/// What a metric measures, which decides its verdict's words and where a summary holds it.
#[cfg(test)]
impl<'a> MetricInput<'a> {
    /// A sample with no telemetry series.
    pub(crate) fn record(sample: &'a Sample) -> MetricInput<'a> {
        MetricInput { sample, series: &[] }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Family {
    /// A rate or a latency: every study has it; faster or slower.
    Speed,
    /// Energy per token or tokens per joule: only where the telemetry measured power or energy
    /// (§9.6); more or less efficient.
    Energy,
    /// Mean power: as energy; lower or higher power.
    Power,
}

/// Which phase's energy an energy metric integrates (§9.6, §9.7).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    Prefill,
    Decode,
}

/// One metric, defined once.
pub(crate) struct Spec {
    /// Its name in `summary.json`, the history and every machine format.
    pub(crate) stored: &'static str,
    /// Its name with its unit, as a table or chart titles it.
    pub(crate) title: &'static str,
    /// Its name in a sentence, without its unit: `server decode` (the one-line answer).
    pub(crate) short_title: &'static str,
    /// The unit a chart's axis carries.
    pub(crate) unit: &'static str,
    /// The decimals a value prints with.
    pub(crate) decimals: usize,
    pub(crate) higher_is_better: bool,
    pub(crate) family: Family,
    /// Its name after `--metric` (the judgement of the CI gate and of bisect) with that value's
    /// help; None: no judgement reads it.
    pub(crate) flag: Option<(&'static str, &'static str)>,
    /// Whether the study page draws it (its dots and change chart).
    pub(crate) charted: bool,
    /// What it measures in a pure-decode study, where that is not what its name says: the timed
    /// request re-prefills one token of a prompt already in the cache (§4).
    pub(crate) pure_decode_caveat: Option<&'static str>,
    /// The phase whose energy it is computed from, for its basis line (§9.6); None for a speed
    /// metric, or one computed from the series' power readings.
    pub(crate) energy_phase: Option<Phase>,
    /// Its value for one sample (a non-finite value is none).
    pub(crate) value: fn(MetricInput) -> Option<f64>,
}

fn decode_phase(i: MetricInput) -> Option<PhaseStats> {
    phases::sample_phases(i.sample).map(|[_, d]| d)
}

fn prefill_phase(i: MetricInput) -> Option<PhaseStats> {
    phases::sample_phases(i.sample).map(|[p, _]| p)
}

impl Metric {
    /// Every metric, in the order every table lists them.
    pub(crate) const EVERY: [Metric; 10] = [
        Metric::ServerDecodeTps,
        Metric::ServerPrefillTps,
        Metric::StrictStreamedTps,
        Metric::TtftMs,
        Metric::DecodeJPerToken,
        Metric::PrefillJPerPromptToken,
        Metric::DecodeMeanPowerW,
        Metric::DecodeTokensPerJ,
        Metric::DecodeP10WindowTokensPerJ,
        Metric::DecodeGfxJPerToken,
    ];

    pub(crate) fn spec(self) -> &'static Spec {
        if matches!(self, Metric::LlamaBenchTps(_) | Metric::LlamaBenchJPerToken(_)) {
            return llama_bench_spec(self);
        }
        const PREFILL_CAVEAT: &str =
            "pure decode: the one-token re-prefill of a cached prompt, not a prefill of the prompt";
        match self {
            Metric::ServerDecodeTps => &Spec {
                stored: "server-decode-tps",
                title: "server decode TPS (tok/s)",
                short_title: "server decode",
                unit: "tok/s",
                decimals: 2,
                higher_is_better: true,
                family: Family::Speed,
                flag: Some(("decode", "Server decode tokens per second (worse: fewer)")),
                charted: true,
                pure_decode_caveat: None,
                energy_phase: None,
                value: |i| i.sample.server.as_ref().map(|t| t.decode_tps),
            },
            Metric::ServerPrefillTps => &Spec {
                stored: "server-prefill-tps",
                title: "server prefill TPS (tok/s)",
                short_title: "server prefill",
                unit: "tok/s",
                decimals: 1,
                higher_is_better: true,
                family: Family::Speed,
                flag: Some(("prefill", "Server prefill tokens per second (worse: fewer)")),
                charted: true,
                pure_decode_caveat: Some(PREFILL_CAVEAT),
                energy_phase: None,
                value: |i| i.sample.server.as_ref().map(|t| t.prefill_tps),
            },
            Metric::StrictStreamedTps => &Spec {
                stored: "strict-streamed-tps",
                title: "strict streamed TPS (tok/s)",
                short_title: "strict streamed decode",
                unit: "tok/s",
                decimals: 2,
                higher_is_better: true,
                family: Family::Speed,
                flag: None,
                charted: false,
                pure_decode_caveat: None,
                energy_phase: None,
                value: |i| i.sample.stream.strict_tps,
            },
            Metric::TtftMs => &Spec {
                stored: "ttft-ms",
                title: "TTFT (ms)",
                short_title: "TTFT",
                unit: "ms",
                decimals: 2,
                higher_is_better: false,
                family: Family::Speed,
                flag: Some(("ttft", "Time to the first streamed token (worse: longer)")),
                charted: true,
                pure_decode_caveat: Some(
                    "pure decode: time to the first token after a one-token re-prefill of a cached prompt",
                ),
                energy_phase: None,
                value: |i| i.sample.stream.ttft_ms,
            },
            Metric::DecodeJPerToken => &Spec {
                stored: "decode-j-per-token",
                title: "decode energy (J/token)",
                short_title: "decode energy",
                unit: "J/token",
                decimals: 4,
                higher_is_better: false,
                family: Family::Energy,
                flag: Some((
                    "j-per-token",
                    "Decode energy per output token (worse: more joules); needs a source that reads power or energy (docs/methodology.md §9.6)",
                )),
                charted: true,
                pure_decode_caveat: None,
                energy_phase: Some(Phase::Decode),
                value: |i| decode_phase(i)?.j_per_token,
            },
            Metric::PrefillJPerPromptToken => &Spec {
                stored: "prefill-j-per-prompt-token",
                title: "prefill energy (J/prompt token)",
                short_title: "prefill energy",
                unit: "J/token",
                decimals: 4,
                higher_is_better: false,
                family: Family::Energy,
                flag: Some(("prefill-j-per-token", "Prefill energy per prompt token")),
                charted: true,
                pure_decode_caveat: Some("pure decode: the energy of a one-token re-prefill of a cached prompt"),
                energy_phase: Some(Phase::Prefill),
                value: |i| prefill_phase(i)?.j_per_token,
            },
            Metric::DecodeMeanPowerW => &Spec {
                stored: "decode-mean-power-w",
                title: "decode mean power (W)",
                short_title: "decode mean power",
                unit: "W",
                decimals: 1,
                higher_is_better: false,
                family: Family::Power,
                flag: Some(("power", "Decode mean power (worse: more watts)")),
                charted: true,
                pure_decode_caveat: None,
                energy_phase: Some(Phase::Decode),
                value: |i| decode_phase(i)?.mean_power_w,
            },
            Metric::DecodeTokensPerJ => &Spec {
                stored: "decode-tokens-per-j",
                title: "decode tokens per joule (tok/J)",
                short_title: "decode tokens per joule",
                unit: "tok/J",
                decimals: 3,
                higher_is_better: true,
                family: Family::Energy,
                flag: Some(("tokens-per-j", "Decode tokens per joule (worse: fewer)")),
                charted: true,
                pure_decode_caveat: None,
                energy_phase: Some(Phase::Decode),
                value: |i| {
                    let d = decode_phase(i)?;
                    d.energy_j.filter(|e| *e > 0.0).map(|e| d.tokens as f64 / e)
                },
            },
            // Each 32-token decode window's rate over its median power (§9.8), at the 10th
            // percentile (nearest rank) of the sample's windows: the efficiency the decode falls to
            // in its least efficient tenth, where heat or a power cap shows first. A sequence has
            // prefills between its decodes, so no windows (§4.1).
            Metric::DecodeP10WindowTokensPerJ => &Spec {
                stored: "decode-p10-window-tokens-per-j",
                title: "decode p10-window tokens per joule (tok/J)",
                short_title: "decode p10-window tokens per joule",
                unit: "tok/J",
                decimals: 3,
                higher_is_better: true,
                family: Family::Energy,
                flag: None,
                charted: true,
                pure_decode_caveat: None,
                energy_phase: None,
                value: |i| {
                    if i.sample.extra.sequence().is_some() {
                        return None;
                    }
                    let mut per_j: Vec<f64> = super::windows::decode_windows(&i.sample.token_mono_ns, i.series)
                        .iter()
                        .filter_map(|w| w.power_w.filter(|p| *p > 0.0).map(|p| w.tokens_per_s / p))
                        .collect();
                    per_j.sort_by(f64::total_cmp);
                    let rank = (per_j.len() as f64 * 0.1).ceil() as usize;
                    (per_j.len() >= 2).then(|| per_j[rank.max(1) - 1])
                },
            },
            // The gfx-only power's integral: on an APU the socket's power holds the CPU cores and
            // the SoC, which a GPU change does not move; its own energy basis is named in §9.6.
            Metric::DecodeGfxJPerToken => &Spec {
                stored: "decode-gfx-j-per-token",
                title: "decode gfx energy (J/token)",
                short_title: "decode gfx energy",
                unit: "J/token",
                decimals: 4,
                higher_is_better: false,
                family: Family::Energy,
                flag: Some((
                    "gfx-j-per-token",
                    "Decode gfx-only energy per output token on an APU (worse: more joules); needs a source that reads gfx power",
                )),
                charted: true,
                pure_decode_caveat: None,
                energy_phase: None,
                value: |i| {
                    let d = decode_phase(i)?;
                    d.gfx_energy_j.filter(|_| d.tokens > 0).map(|e| e / d.tokens as f64)
                },
            },
            Metric::LlamaBenchTps(_) | Metric::LlamaBenchJPerToken(_) => unreachable!("answered above"),
        }
    }

    /// Every metric, in [`Metric::EVERY`]'s order.
    pub(crate) fn every() -> impl Iterator<Item = Metric> {
        Metric::EVERY.into_iter()
    }

    /// The speed metrics: every study has them.
    #[cfg(test)]
    pub(crate) fn speed() -> impl Iterator<Item = Metric> {
        Metric::every().filter(|m| !m.is_energy())
    }

    /// The energy and power metrics: a summary holds them only where the telemetry source
    /// measured power or energy (docs/methodology.md §9.6).
    #[cfg(test)]
    pub(crate) fn energy() -> impl Iterator<Item = Metric> {
        Metric::every().filter(|m| m.is_energy())
    }

    /// The metric stored under `name`; None for a name that is no metric (`pi-wall-ms`,
    /// `exactness`, or a later abprof's).
    pub(crate) fn named(name: &str) -> Option<Metric> {
        Metric::every().find(|m| m.stored_name() == name).or_else(|| {
            let rest = name.strip_prefix(LLAMA_BENCH_PREFIX)?;
            match rest.strip_suffix(LLAMA_BENCH_SUFFIX) {
                Some(slug) => BenchTest::from_slug(slug).map(Metric::LlamaBenchTps),
                None => {
                    BenchTest::from_slug(rest.strip_suffix(LLAMA_BENCH_ENERGY_SUFFIX)?).map(Metric::LlamaBenchJPerToken)
                }
            }
        })
    }

    /// The llama-bench test whose rate this metric is, if it is one: what a llama-bench study
    /// judges (its answer, adaptive rule and gate) and tabulates as compare-llama-bench.py does.
    pub(crate) fn llama_bench_test(self) -> Option<BenchTest> {
        match self {
            Metric::LlamaBenchTps(t) => Some(t),
            _ => None,
        }
    }

    pub(crate) fn stored_name(self) -> &'static str {
        self.spec().stored
    }

    pub(crate) fn is_energy(self) -> bool {
        self.spec().family != Family::Speed
    }

    pub(crate) fn title(self) -> &'static str {
        self.spec().title
    }

    pub(crate) fn short_title(self) -> &'static str {
        self.spec().short_title
    }

    pub(crate) fn unit(self) -> &'static str {
        self.spec().unit
    }

    pub(crate) fn decimals(self) -> usize {
        self.spec().decimals
    }

    pub(crate) fn pure_decode_caveat(self) -> Option<&'static str> {
        self.spec().pure_decode_caveat
    }

    pub(crate) fn higher_is_better(self) -> bool {
        self.spec().higher_is_better
    }

    /// The verdict's word for this metric: a speed is faster or slower, an energy more or less
    /// efficient, a power lower or higher (the verdict's direction is the metric's).
    pub(crate) fn verdict_word(self, v: Verdict) -> &'static str {
        let power = self.spec().family == Family::Power;
        match (self.is_energy(), v) {
            (false, _) => v.word(),
            (true, Verdict::Faster) if power => "lower power",
            (true, Verdict::Slower) if power => "higher power",
            (true, Verdict::FasterWithinMargin) if power => "lower power, within the margin",
            (true, Verdict::SlowerWithinMargin) if power => "higher power, within the margin",
            (true, Verdict::SameLeansFaster) if power => "same within the margin, leans lower power",
            (true, Verdict::SameLeansSlower) if power => "same within the margin, leans higher power",
            (true, Verdict::Faster) => "more efficient",
            (true, Verdict::Slower) => "less efficient",
            (true, Verdict::FasterWithinMargin) => "more efficient, within the margin",
            (true, Verdict::SlowerWithinMargin) => "less efficient, within the margin",
            (true, Verdict::SameLeansFaster) => "same within the margin, leans more efficient",
            (true, Verdict::SameLeansSlower) => "same within the margin, leans less efficient",
            (true, _) => v.word(),
        }
    }

    /// The metric's value of one sample, where it has a finite one.
    pub(crate) fn of(self, input: MetricInput) -> Option<f64> {
        let value = match self {
            Metric::LlamaBenchTps(test) => input.sample.extra.llama_bench.as_ref().and_then(|r| r.tps(test)),
            Metric::LlamaBenchJPerToken(test) => llama_bench_window(input, test).and_then(|w| w.j_per_token),
            _ => (self.spec().value)(input),
        };
        value.filter(|x| x.is_finite())
    }

    /// Every metric's value of one sample, in [`Metric::EVERY`]'s order, then a llama-bench
    /// sample's tests in the order it asked them.
    pub(crate) fn values(input: MetricInput) -> Vec<(Metric, f64)> {
        let tests = input.sample.extra.llama_bench.iter().flat_map(|r| {
            let asked = r.asked.iter().copied();
            asked.clone().map(Metric::LlamaBenchTps).chain(asked.map(Metric::LlamaBenchJPerToken))
        });
        Metric::every().chain(tests).filter_map(|m| m.of(input).map(|v| (m, v))).collect()
    }

    /// Where an energy metric's value of `s` came from: the energy counter or an integral of
    /// power (docs/methodology.md §9.6), with the power an integral is of (§9.7); None for a
    /// speed metric.
    pub(crate) fn energy_basis(self, s: &Sample) -> Option<EnergyBasis> {
        let [p, d] = phases::sample_phases(s)?;
        match self.spec().energy_phase? {
            Phase::Prefill => Some(p.energy_basis()),
            Phase::Decode => Some(d.energy_basis()),
        }
    }
}

/// A llama-bench test's metrics are stored as `llama-bench-SLUG-tps` (`llama-bench-tg128@d4096-tps`)
/// and `llama-bench-SLUG-j-per-token`.
const LLAMA_BENCH_PREFIX: &str = "llama-bench-";
const LLAMA_BENCH_SUFFIX: &str = "-tps";
const LLAMA_BENCH_ENERGY_SUFFIX: &str = "-j-per-token";

/// The telemetry of a llama-bench test's own window: from its result line's moment back by the
/// time it measured (`avg_ns` of its one repetition), over its tokens; none where fewer than two
/// readings fall inside it (a window shorter than the telemetry's refresh).
fn llama_bench_window(i: MetricInput, test: BenchTest) -> Option<PhaseStats> {
    let result = i.sample.extra.llama_bench.as_ref()?.results.iter().find(|r| r.row.test_id() == test)?;
    let end = result.seen_mono_ns?;
    let took: u64 = result.row.settings.get("avg_ns")?.parse().ok()?;
    let tokens = u64::from(test.n_prompt) + u64::from(test.n_gen);
    let stats = crate::telemetry::phases::window_stats(i.series, end.checked_sub(took)?, end, tokens);
    (stats.samples >= 2).then_some(stats)
}

/// A llama-bench test's spec, made once per metric a process meets and kept for its life (a
/// study names a handful of tests), so that every reader takes it as it takes a built-in one's.
fn llama_bench_spec(metric: Metric) -> &'static Spec {
    use std::collections::HashMap;
    use std::sync::{LazyLock, Mutex};
    static SPECS: LazyLock<Mutex<HashMap<Metric, &'static Spec>>> = LazyLock::new(Default::default);
    let mut specs = SPECS.lock().unwrap_or_else(|e| e.into_inner());
    specs.entry(metric).or_insert_with(|| {
        let text = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
        let spec = match metric {
            Metric::LlamaBenchJPerToken(test) => Spec {
                stored: text(format!("{LLAMA_BENCH_PREFIX}{}{LLAMA_BENCH_ENERGY_SUFFIX}", test.slug())),
                title: text(format!("{} energy (J/token)", test.name())),
                short_title: text(format!("{} energy", test.name())),
                unit: "J/token",
                decimals: 4,
                higher_is_better: false,
                family: Family::Energy,
                flag: None,
                charted: true,
                pure_decode_caveat: None,
                energy_phase: None,
                value: |_| None,
            },
            Metric::LlamaBenchTps(test) => Spec {
                stored: text(format!("{LLAMA_BENCH_PREFIX}{}{LLAMA_BENCH_SUFFIX}", test.slug())),
                title: text(format!("{} (t/s)", test.name())),
                short_title: text(test.name()),
                unit: "t/s",
                decimals: 2,
                higher_is_better: true,
                family: Family::Speed,
                flag: None,
                charted: true,
                pure_decode_caveat: None,
                energy_phase: None,
                value: |_| None,
            },
            _ => unreachable!("a llama-bench metric"),
        };
        Box::leak(Box::new(spec))
    })
}

/// Stored by its [`Spec::stored`] name.
impl serde::Serialize for Metric {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.stored_name())
    }
}

impl<'de> serde::Deserialize<'de> for Metric {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Metric, D::Error> {
        let name = String::deserialize(d)?;
        Metric::named(&name).ok_or_else(|| {
            let known: Vec<&str> = Metric::every().map(Metric::stored_name).collect();
            serde::de::Error::custom(format!("unknown metric `{name}`, expected one of {}", known.join(", ")))
        })
    }
}

/// `--metric NAME`: the metrics whose [`Spec::flag`] names them.
impl clap::ValueEnum for Metric {
    fn value_variants<'a>() -> &'a [Metric] {
        static FLAGGED: std::sync::LazyLock<Vec<Metric>> =
            std::sync::LazyLock::new(|| Metric::every().filter(|m| m.spec().flag.is_some()).collect());
        &FLAGGED
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        let (name, help) = self.spec().flag?;
        Some(clap::builder::PossibleValue::new(name).help(help))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_metric_has_one_distinct_stored_name_title_and_flag() {
        let distinct = |f: fn(&Spec) -> Option<&'static str>| {
            let names: Vec<_> = Metric::every().filter_map(|m| f(m.spec())).collect();
            let mut d = names.clone();
            d.sort();
            d.dedup();
            assert_eq!(d.len(), names.len(), "{names:?}");
        };
        distinct(|s| Some(s.stored));
        distinct(|s| Some(s.title));
        distinct(|s| Some(s.short_title));
        distinct(|s| s.flag.map(|g| g.0));
        for m in Metric::every() {
            assert_eq!(Metric::named(m.stored_name()), Some(m));
            assert_eq!(serde_json::to_value(m).unwrap(), m.stored_name());
            assert_eq!(serde_json::from_value::<Metric>(m.stored_name().into()).unwrap(), m);
            assert!(
                m.is_energy() || m.spec().energy_phase.is_none(),
                "{m:?}: only an energy metric has an energy phase"
            );
        }
        assert!(serde_json::from_value::<Metric>("tok-per-parsec".into())
            .unwrap_err()
            .to_string()
            .contains("unknown metric"));
        use clap::ValueEnum;
        assert_eq!(Metric::from_str("decode", false), Ok(Metric::ServerDecodeTps));
        assert!(Metric::from_str("strict-streamed-tps", false).is_err(), "no judgement reads it");
    }

    /// A test's energy is its own window's: the result line's moment less the time the test
    /// measured, over its tokens; a window the telemetry read fewer than twice has none.
    #[test]
    fn a_llama_bench_tests_energy_is_its_windows_over_its_tokens() {
        use crate::measure::bench_run::{BenchResult, BenchRun};
        use crate::telemetry::Reading;
        const S: u64 = 1_000_000_000;
        let tg = BenchTest { n_prompt: 0, n_gen: 100, n_depth: 0 };
        // Seen at 5 s after 2 s of measuring: the window is [3 s, 5 s].
        let line = r#"{"build_commit": "c", "model_filename": "m", "model_type": "x", "n_prompt": 0, "n_gen": 100, "avg_ns": 2000000000, "avg_ts": 50.0, "samples_ts": [ 50.0 ]}"#;
        let row = crate::llama_bench::parse(line).unwrap().1.remove(0);
        let run = BenchRun {
            asked: vec![tg],
            cache_type: None,
            results: vec![BenchResult { row, seen_mono_ns: Some(5 * S) }],
            unreadable: None,
        };
        let sample = crate::summary::rules::tests::sample(crate::measure::SampleExtra {
            llama_bench: Some(run),
            ..Default::default()
        });
        // 100 W before and after the window, 300 W inside it, read every 100 ms.
        let series: Vec<TelemetrySample> = (0..=80)
            .map(|i| {
                let at = i * S / 10;
                let power_w = if (3 * S..=5 * S).contains(&at) { 300.0 } else { 100.0 };
                let reading = Reading { power_w: Some(power_w), ..Default::default() };
                TelemetrySample { at: crate::clock::Stamp { mono_ns: at, boot_ns: at }, late_ns: 0, reading }
            })
            .collect();
        let input = MetricInput { sample: &sample, series: &series };
        assert_eq!(Metric::LlamaBenchTps(tg).of(input), Some(50.0));
        let j = Metric::LlamaBenchJPerToken(tg).of(input).unwrap();
        assert!((j - 6.0).abs() < 0.05, "300 W for 2 s over 100 tokens is 6 J/token, got {j}");
        let sparse: Vec<TelemetrySample> = series.iter().step_by(30).cloned().collect();
        assert_eq!(Metric::LlamaBenchJPerToken(tg).of(MetricInput { sample: &sample, series: &sparse }), None);
    }

    #[test]
    fn a_llama_bench_test_is_a_metric_stored_by_its_name() {
        let tg = Metric::LlamaBenchTps(BenchTest { n_prompt: 0, n_gen: 128, n_depth: 4096 });
        assert_eq!(tg.stored_name(), "llama-bench-tg128@d4096-tps");
        assert_eq!(tg.title(), "tg128 @ d4096 (t/s)");
        assert_eq!(tg.short_title(), "tg128 @ d4096");
        assert!(tg.higher_is_better() && !tg.is_energy());
        assert_eq!(Metric::named("llama-bench-tg128@d4096-tps"), Some(tg));
        assert_eq!(serde_json::from_value::<Metric>(serde_json::to_value(tg).unwrap()).unwrap(), tg);
        assert!(std::ptr::eq(tg.spec(), tg.spec()), "one spec per test");
        assert_eq!(Metric::named("llama-bench-tg0-tps"), None);
        let energy = Metric::LlamaBenchJPerToken(BenchTest { n_prompt: 512, n_gen: 0, n_depth: 0 });
        assert_eq!(energy.stored_name(), "llama-bench-pp512-j-per-token");
        assert_eq!(Metric::named(energy.stored_name()), Some(energy));
        assert!(energy.is_energy() && !energy.higher_is_better() && energy.llama_bench_test().is_none());
    }
}
