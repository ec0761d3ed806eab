//! The metrics a summary judges, each read from one sample (docs/methodology.md §1).
use super::phases;
use super::stats::Verdict;
use crate::measure::Sample;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
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
}

impl Metric {
    /// The speed metrics: every study has them.
    pub(crate) const ALL: [Metric; 4] =
        [Metric::ServerDecodeTps, Metric::ServerPrefillTps, Metric::StrictStreamedTps, Metric::TtftMs];

    /// The energy and power metrics: a summary holds them only where the telemetry source measured
    /// power or energy (docs/methodology.md §9.6).
    pub(crate) const ENERGY: [Metric; 4] =
        [Metric::DecodeJPerToken, Metric::PrefillJPerPromptToken, Metric::DecodeMeanPowerW, Metric::DecodeTokensPerJ];

    /// [`Metric::ALL`] then [`Metric::ENERGY`].
    pub(crate) fn every() -> impl Iterator<Item = Metric> {
        Metric::ALL.into_iter().chain(Metric::ENERGY)
    }

    pub(crate) fn is_energy(self) -> bool {
        Metric::ENERGY.contains(&self)
    }

    pub(crate) fn title(self) -> &'static str {
        match self {
            Metric::ServerDecodeTps => "server decode TPS (tok/s)",
            Metric::ServerPrefillTps => "server prefill TPS (tok/s)",
            Metric::StrictStreamedTps => "strict streamed TPS (tok/s)",
            Metric::TtftMs => "TTFT (ms)",
            Metric::DecodeJPerToken => "decode energy (J/token)",
            Metric::PrefillJPerPromptToken => "prefill energy (J/prompt token)",
            Metric::DecodeMeanPowerW => "decode mean power (W)",
            Metric::DecodeTokensPerJ => "decode tokens per joule (tok/J)",
        }
    }

    /// The metric's name in a sentence, without its unit: `server decode` (the one-line answer).
    pub(crate) fn short_title(self) -> &'static str {
        match self {
            Metric::ServerDecodeTps => "server decode",
            Metric::ServerPrefillTps => "server prefill",
            Metric::StrictStreamedTps => "strict streamed decode",
            Metric::TtftMs => "TTFT",
            Metric::DecodeJPerToken => "decode energy",
            Metric::PrefillJPerPromptToken => "prefill energy",
            Metric::DecodeMeanPowerW => "decode mean power",
            Metric::DecodeTokensPerJ => "decode tokens per joule",
        }
    }

    /// What the metric measures in a pure-decode study, where it is not what its name says: the
    /// timed request re-prefills one token of a prompt already in the cache
    /// (docs/methodology.md §4).
    pub(crate) fn pure_decode_caveat(self) -> Option<&'static str> {
        match self {
            Metric::ServerPrefillTps => {
                Some("pure decode: the one-token re-prefill of a cached prompt, not a prefill of the prompt")
            }
            Metric::TtftMs => {
                Some("pure decode: time to the first token after a one-token re-prefill of a cached prompt")
            }
            Metric::PrefillJPerPromptToken => {
                Some("pure decode: the energy of a one-token re-prefill of a cached prompt")
            }
            _ => None,
        }
    }

    pub(crate) fn higher_is_better(self) -> bool {
        !matches!(
            self,
            Metric::TtftMs | Metric::DecodeJPerToken | Metric::PrefillJPerPromptToken | Metric::DecodeMeanPowerW
        )
    }

    /// The verdict's word for this metric: a speed is faster or slower, an energy smaller or larger
    /// (the verdict's direction is [`Metric::higher_is_better`]'s).
    pub(crate) fn verdict_word(self, v: Verdict) -> &'static str {
        let power = self == Metric::DecodeMeanPowerW;
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

    pub(crate) fn of(self, s: &Sample) -> Option<f64> {
        let phases = || phases::sample_phases(s);
        let v = match self {
            Metric::ServerDecodeTps => s.server.as_ref().map(|t| t.decode_tps),
            Metric::ServerPrefillTps => s.server.as_ref().map(|t| t.prefill_tps),
            Metric::StrictStreamedTps => s.stream.strict_tps,
            Metric::TtftMs => s.stream.ttft_ms,
            Metric::DecodeJPerToken => phases().and_then(|[_, d]| d.j_per_token),
            Metric::PrefillJPerPromptToken => phases().and_then(|[p, _]| p.j_per_token),
            Metric::DecodeMeanPowerW => phases().and_then(|[_, d]| d.mean_power_w),
            Metric::DecodeTokensPerJ => {
                phases().and_then(|[_, d]| d.energy_j.filter(|e| *e > 0.0).map(|e| d.tokens as f64 / e))
            }
        };
        v.filter(|x| x.is_finite())
    }

    /// Where an energy metric's value of `s` came from: the energy counter or an integral of
    /// power (docs/methodology.md §9.6), with the power an integral is of (§9.7); None for a
    /// speed metric.
    pub(crate) fn energy_basis(self, s: &Sample) -> Option<crate::telemetry::phases::EnergyBasis> {
        let [p, d] = phases::sample_phases(s)?;
        match self {
            Metric::PrefillJPerPromptToken => Some(p.energy_basis()),
            m if m.is_energy() => Some(d.energy_basis()),
            _ => None,
        }
    }
}
