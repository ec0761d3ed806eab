//! What a running study tells the person or the CI log watching it: one line per sample on
//! stderr (which sample, variant and block, how long it took, the idle gate's wait, accepted or
//! the rules that rejected it), and on a terminal a bar below those lines with the time left,
//! estimated from the median sample so far (one slow sample moves a median little, so the
//! estimate does not jump as a mean or the last sample's time would).
use super::observer::PhaseSink;
use crate::measure::SamplePhase;
use crate::schedule::Slot;
use std::io::IsTerminal;
use std::sync::{Arc, Mutex};

/// The study's progress across its blocks: the bar (on a terminal) and the seconds each sample
/// took, kept from one block to the next and read from the evidence on a resume.
pub(crate) struct StudyProgress {
    bar: Option<indicatif::ProgressBar>,
    seconds: Vec<f64>,
    /// The time left, as the bar's message shows it beside the sample's phase.
    eta: Arc<Mutex<String>>,
}

/// How one taken sample went, for its line.
pub(crate) struct SampleLine<'a> {
    pub(crate) slot: &'a Slot,
    pub(crate) label: &'a str,
    pub(crate) planned: usize,
    pub(crate) seconds: f64,
    pub(crate) gate_seconds: f64,
    pub(crate) traced: bool,
    /// The rules that reject it (empty: accepted); `None`: the study has no judge to ask.
    pub(crate) rejections: Option<Vec<String>>,
}

impl SampleLine<'_> {
    pub(crate) fn text(&self) -> String {
        let s = self.slot;
        let mut line = format!(
            "sample {}/{} ({}, block {}): {:.1} s",
            s.index + 1,
            self.planned,
            self.label,
            s.repeat + 1,
            self.seconds
        );
        if self.gate_seconds >= 0.05 {
            line.push_str(&format!(", {:.1} s of it in the idle gate", self.gate_seconds));
        }
        let verdict = match (&self.rejections, self.traced) {
            (_, true) => "traced (the trace's evidence, never a median)".to_string(),
            (None, false) => "recorded".to_string(),
            (Some(r), false) if r.is_empty() => "accepted".to_string(),
            (Some(r), false) => format!("rejected {}", r.join(", ")),
        };
        format!("{line}; {verdict}")
    }
}

impl StudyProgress {
    /// Progress for a study whose earlier attempts took `seconds` each (a resume's, from its
    /// evidence); the bar only where stderr is a terminal.
    pub(crate) fn new(seconds: Vec<f64>) -> StudyProgress {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = indicatif::ProgressBar::new(0);
            bar.set_style(
                indicatif::ProgressStyle::with_template("{bar:30} sample {pos}/{len} · {msg}").expect("valid template"),
            );
            bar
        });
        StudyProgress { bar, seconds, eta: Arc::new(Mutex::new(String::new())) }
    }

    /// A block of `todo` samples starts, of `planned` in the plan so far.
    pub(crate) fn block(&mut self, planned: usize, todo: usize) {
        if let Some(bar) = &self.bar {
            bar.set_length(planned as u64);
            bar.set_position((planned - todo) as u64);
        }
        self.set_eta(todo);
    }

    /// One taken sample: its line (above the bar on a terminal), and the time left of `left`.
    pub(crate) fn taken(&mut self, line: &SampleLine<'_>, left: usize) {
        self.seconds.push(line.seconds);
        self.note(&line.text());
        if let Some(bar) = &self.bar {
            bar.inc(1);
        }
        self.set_eta(left);
    }

    fn set_eta(&self, left: usize) {
        *self.eta.lock().unwrap() = eta_text(&self.seconds, left);
    }

    fn note(&self, line: &str) {
        match &self.bar {
            Some(bar) => bar.suspend(|| eprintln!("abprof: {line}")),
            None => eprintln!("abprof: {line}"),
        }
    }

    /// The sink one sample's phases go to, each also told to `on_phase` (the configuration's
    /// own display).
    pub(crate) fn sink<'p>(&'p self, on_phase: &'p dyn Fn(&str, SamplePhase)) -> SampleSink<'p> {
        SampleSink { progress: self, on_phase }
    }

    pub(crate) fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// The time left of `left` samples at the median of `seconds`: "time left unknown" before the
/// first sample.
fn eta_text(seconds: &[f64], left: usize) -> String {
    if left == 0 {
        return "the last sample".into();
    }
    let Some(median) = crate::stats::median(seconds) else {
        return "time left known after the first sample".into();
    };
    format!("about {} left ({left} samples at {median:.0} s)", duration_text(median * left as f64))
}

/// Seconds as people say them: "40 s", "12 min", "1 h 05 min".
fn duration_text(s: f64) -> String {
    let s = s.round() as u64;
    match s {
        0..=89 => format!("{s} s"),
        90..=3599 => format!("{} min", (s + 30) / 60),
        _ => format!("{} h {:02} min", s / 3600, (s % 3600 + 30) / 60),
    }
}

/// Where one sample's phases go: the bar's message, and the configuration's own display.
pub(crate) struct SampleSink<'p> {
    progress: &'p StudyProgress,
    on_phase: &'p dyn Fn(&str, SamplePhase),
}

impl PhaseSink for SampleSink<'_> {
    fn phase(&self, label: &str, phase: SamplePhase) {
        if let Some(bar) = &self.progress.bar {
            bar.set_message(format!("{label}: {} · {}", phase.name(), self.progress.eta.lock().unwrap()));
        }
        (self.on_phase)(label, phase);
    }

    fn note(&self, line: &str) {
        // Above the bar on a terminal, and to stderr when there is none (a pipe, a log).
        self.progress.note(line);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(rejections: Option<Vec<String>>, traced: bool, gate: f64) -> String {
        let slot = Slot { index: 4, variant: 1, repeat: 2 };
        SampleLine { slot: &slot, label: "b", planned: 12, seconds: 41.24, gate_seconds: gate, traced, rejections }
            .text()
    }

    /// Each line names the sample, its variant and block, its time, and how it was judged.
    #[test]
    fn a_sample_line_says_which_sample_how_long_and_how_it_was_judged() {
        assert_eq!(line(Some(vec![]), false, 0.0), "sample 5/12 (b, block 3): 41.2 s; accepted");
        assert_eq!(
            line(Some(vec!["other-workload".into(), "locked-length".into()]), false, 12.34),
            "sample 5/12 (b, block 3): 41.2 s, 12.3 s of it in the idle gate; rejected other-workload, locked-length"
        );
        assert_eq!(line(None, false, 0.0), "sample 5/12 (b, block 3): 41.2 s; recorded");
        assert!(line(Some(vec![]), true, 0.0).ends_with("; traced (the trace's evidence, never a median)"));
    }

    /// The time left is the median sample's times the samples left: one slow sample (a retake's
    /// wait for a quiet host) moves it by less than an order of magnitude.
    #[test]
    fn the_time_left_follows_the_median_sample_not_the_slowest() {
        let mut seconds = vec![40.0, 41.0, 39.0, 40.5];
        let before = eta_text(&seconds, 8);
        seconds.push(900.0);
        let after = eta_text(&seconds, 7);
        assert_eq!(before, "about 5 min left (8 samples at 40 s)");
        assert_eq!(after, "about 5 min left (7 samples at 40 s)");
        assert_eq!(eta_text(&[], 8), "time left known after the first sample");
        assert_eq!(duration_text(40.0), "40 s");
        assert_eq!(duration_text(3725.0), "1 h 02 min");
    }
}
