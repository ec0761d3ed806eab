//! Energy and power as metrics (docs/methodology.md §9.6), on readings of the recorded amdgpu
//! sysfs fixture: per-phase energy from the counter and from the power integral, the same interval
//! and verdict as speed, and "not measured on this host" where the telemetry read no power.
use super::stats::{change_ci, Measured, Verdict};
use super::{Metric, MetricInput};
use crate::clock::Stamp;
use crate::telemetry::amdgpu_sysfs::AmdgpuSysfs;
use crate::telemetry::phases::{split, EnergyFrom, PhaseStats, RequestMarks};
use crate::telemetry::sampler::TelemetrySample;
use crate::telemetry::{Reading, TelemetrySource};
use std::path::{Path, PathBuf};

const MS: u64 = 1_000_000;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// The dGPU fixture's reading (power 291 W instant, 287 W average, energy counter 1000 J).
fn fixture_reading() -> Reading {
    AmdgpuSysfs::open(&fixtures().join("sysfs/dgpu-v1_3"), 0).unwrap().read().unwrap()
}

fn at(ms: u64) -> Stamp {
    Stamp { mono_ns: ms * MS, boot_ns: ms * MS }
}

/// A request read every 10 ms over 0–3.5 s: prefill 0.5–1.5 s (500 prompt tokens), decode
/// 1.5–3.5 s (`tokens` output tokens) at the fixture's power × `scale`; the energy counter, when
/// kept, advances by that power from the fixture's value.
fn phases(scale: f64, tokens: u64, counter: bool) -> [PhaseStats; 2] {
    let base = fixture_reading();
    let watts = base.power_w.unwrap() * scale;
    let mut joules = base.energy_j.unwrap();
    let samples: Vec<TelemetrySample> = (0..=350)
        .map(|i| {
            let reading = Reading { power_w: Some(watts), energy_j: counter.then_some(joules), ..base };
            joules += watts * 0.01;
            TelemetrySample { at: at(i * 10), late_ns: 0, reading }
        })
        .collect();
    let marks = RequestMarks {
        start: at(500),
        first_token: at(1500),
        last_token: at(3500),
        prompt_tokens: 500,
        output_tokens: tokens,
    };
    split(&samples, &[], &marks)
}

#[test]
fn energy_per_phase_comes_from_the_counter_or_the_power_integral_and_says_which() {
    let [prefill, decode] = phases(1.0, 100, true);
    assert_eq!((prefill.energy_from, decode.energy_from), (EnergyFrom::Counter, EnergyFrom::Counter));
    // 291 W for 2 s over 100 tokens; 291 W for 1 s over 500 prompt tokens.
    assert!((decode.j_per_token.unwrap() - 5.82).abs() < 0.01, "{decode:?}");
    assert!((prefill.j_per_token.unwrap() - 0.582).abs() < 0.01, "{prefill:?}");
    let [prefill, decode] = phases(1.0, 100, false);
    assert_eq!(decode.energy_from, EnergyFrom::PowerIntegral);
    assert!((decode.j_per_token.unwrap() - 5.82).abs() < 1e-9, "{decode:?}");
    assert!((prefill.mean_power_w.unwrap() - 291.0).abs() < 1e-9);
    let words = super::phases::energy_from_line([EnergyFrom::Counter, EnergyFrom::PowerIntegral].into_iter());
    assert_eq!(words.as_deref(), Some("energy counter (1), power integral (sampled power) (1)"));
    assert_eq!(
        super::phases::energy_from_line([EnergyFrom::Counter; 3].into_iter()).as_deref(),
        Some("energy counter")
    );
}

/// A sample of the recorded study with its telemetry phases replaced.
fn sample_with(phases: Option<[PhaseStats; 2]>) -> crate::measure::Sample {
    let path =
        crate::study::sample_folder::SampleFolder::at(&fixtures().join("evidence-today-ab/study/samples/001-f16"))
            .record();
    let mut s: crate::measure::Sample = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    s.extra.telemetry.as_mut().unwrap().phases = phases;
    s
}

#[test]
fn each_energy_metric_reads_its_phase_and_a_cpu_only_sample_has_none() {
    let s = sample_with(Some(phases(1.0, 100, true)));
    let v = |m: Metric| m.of(MetricInput::record(&s)).unwrap();
    assert!((v(Metric::DecodeJPerToken) - 5.82).abs() < 0.01);
    assert!((v(Metric::PrefillJPerPromptToken) - 0.582).abs() < 0.01);
    assert!((v(Metric::DecodeMeanPowerW) - 291.0).abs() < 0.5);
    assert!((v(Metric::DecodeTokensPerJ) - 1.0 / 5.82).abs() < 1e-3);
    assert_eq!(Metric::DecodeJPerToken.energy_basis(&s).map(|b| b.from), Some(EnergyFrom::Counter));
    let cpu = sample_with(None);
    assert!(Metric::energy().all(|m| m.of(MetricInput::record(&cpu)).is_none()));
    // The recorded sample as it is: server CPU only, its phases without power.
    let path =
        crate::study::sample_folder::SampleFolder::at(&fixtures().join("evidence-today-ab/study/samples/001-f16"))
            .record();
    let recorded: crate::measure::Sample = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert!(Metric::energy().all(|m| m.of(MetricInput::record(&recorded)).is_none()));
}

/// The energy metrics go through the speed metrics' interval (§8): a candidate that draws 10% less
/// power at the same speed is more efficient, decided by the same t-interval on log values.
#[test]
fn an_energy_change_gets_the_speed_metrics_interval_and_a_verdict_in_its_own_words() {
    let side = |scale: f64| -> Vec<(crate::measure::Sample, usize)> {
        (0..4)
            .map(|block| {
                // A little noise per block, shared by both sides (a drift the pairing cancels).
                let noise = 1.0 + 0.01 * block as f64;
                (sample_with(Some(phases(scale * noise, 100, true))), block)
            })
            .collect()
    };
    let (base, cand) = (side(1.0), side(0.9));
    for (m, word) in [
        (Metric::DecodeJPerToken, "more efficient"),
        (Metric::DecodeTokensPerJ, "more efficient"),
        (Metric::DecodeMeanPowerW, "lower power"),
    ] {
        let measured = |xs: &[(crate::measure::Sample, usize)]| -> Vec<Measured> {
            xs.iter()
                .map(|(s, block)| Measured { block: *block, value: m.of(MetricInput::record(s)).unwrap() })
                .collect()
        };
        let ci = change_ci(&measured(&base), &measured(&cand), 0.95, None).expect("4 blocks a side");
        let verdict = Verdict::with_margin(Some(&ci), m.higher_is_better(), None);
        assert_eq!(m.verdict_word(verdict), word, "{m:?} {ci:?}");
        let expected = if m.higher_is_better() { 100.0 / 0.9 - 100.0 } else { -10.0 };
        assert!((ci.center_pct() - expected).abs() < 0.5, "{m:?} {ci:?}");
    }
    // More power is the worse side for the gate.
    assert_eq!(Metric::DecodeMeanPowerW.verdict_word(Verdict::Slower), "higher power");
    assert_eq!(Metric::DecodeJPerToken.verdict_word(Verdict::Slower), "less efficient");
}

/// A server on two GPUs (docs/methodology.md §9.11): the energy metrics read the devices' sum,
/// each device keeps its own figures, and the variant is not caveated as metered on one.
#[test]
fn a_two_device_sample_is_measured_as_their_sum_and_each_device_kept() {
    use crate::telemetry::record::DeviceTelemetry;
    let (a, b) = (phases(1.0, 100, true), phases(0.5, 100, false));
    let mut s = sample_with(crate::telemetry::phases::summed(&[a.clone(), b.clone()]));
    let device = |index: u32, phases: &[PhaseStats; 2]| DeviceTelemetry {
        index,
        phases: Some(phases.clone()),
        ..DeviceTelemetry::default()
    };
    s.extra.telemetry.as_mut().unwrap().devices = vec![device(0, &a), device(1, &b)];
    // 291 W and 145.5 W for 2 s over 100 tokens.
    assert!((Metric::DecodeJPerToken.of(MetricInput::record(&s)).unwrap() - 8.73).abs() < 0.01);
    assert!((Metric::DecodeMeanPowerW.of(MetricInput::record(&s)).unwrap() - 436.5).abs() < 0.5);
    let figures = super::devices::device_figures(&[&s, &s]);
    assert_eq!(figures.iter().map(|d| d.index).collect::<Vec<_>>(), [0, 1]);
    let j = |i: usize| figures[i].decode.as_ref().unwrap().j_per_token.unwrap();
    assert!((j(0) - 5.82).abs() < 0.01 && (j(1) - 2.91).abs() < 1e-9, "{figures:?}");
    assert_eq!(super::devices::metered_devices(&[&s]), 2);
    let argv: Vec<String> = ["-ts", "1,1"].map(String::from).to_vec();
    assert!(super::devices::one_device_caveat(&argv, &[], super::devices::metered_devices(&[&s])).is_none());
    assert!(super::devices::device_figures(&[&sample_with(Some(a))]).is_empty(), "one device: no list");
}

/// A window-based metric reads the sample's series: 20 windows of 32 tokens at 100 tok/s, the
/// first 18 at 200 W and the last 2 at 400 W, give 0.5 tok/J in most windows and 0.25 tok/J in the
/// least efficient tenth (§9.8); without a series the metric has no value.
#[test]
fn the_p10_window_metric_reads_the_series_power_in_each_window() {
    const MS: u64 = 1_000_000;
    let mut s = sample_with(None);
    s.token_mono_ns = (0..=640u64).map(|i| 1_000 * MS + i * 10 * MS).collect();
    let series: Vec<TelemetrySample> = (0..700u64)
        .map(|k| TelemetrySample {
            at: Stamp { mono_ns: 1_000 * MS + k * 10 * MS, boot_ns: k * 10 * MS },
            reading: Reading { power_w: Some(if k < 18 * 32 { 200.0 } else { 400.0 }), ..Reading::default() },
            late_ns: 0,
        })
        .collect();
    let m = Metric::DecodeP10WindowTokensPerJ;
    let v = m.of(MetricInput { sample: &s, series: &series }).unwrap();
    assert!((v - 0.25).abs() < 1e-9, "{v}");
    assert_eq!(m.of(MetricInput::record(&s)), None, "no series, no windows with power");
}
