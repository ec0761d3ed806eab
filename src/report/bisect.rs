//! What `abprof bisect` prints: every step with its build and A/B, then the first bad commit with
//! the verdict line of the A/B that convicts it.
use super::table::{Column, Table, Text};
use super::Render;
use crate::bisect::judge::{CalledBy, Reading};
use crate::bisect::record::{BisectLog, BisectOutcome, BuildRecord, Step, StepCall};
use std::fmt::Write;

fn short(sha: &str) -> &str {
    &sha[..12.min(sha.len())]
}

fn build_text(b: &BuildRecord) -> String {
    if b.error.is_some() {
        return "does not build".into();
    }
    if b.reused {
        return "artifact reused".into();
    }
    match b.ccache_hit_rate_pct {
        Some(r) => format!("built {:.0} s, ccache {r:.1}% hits", b.seconds),
        None => format!("built {:.0} s", b.seconds),
    }
}

fn change_text(r: &Option<Reading>) -> (String, String) {
    let Some(r) = r else { return ("—".into(), "—".into()) };
    (super::signed_pct(r.change_pct), super::ci_pct(r.ci))
}

/// "server decode TPS (tok/s) −30.81% [−34.02%, −27.20%] slower": the summary's verdict line.
pub(crate) fn verdict_line(r: &Reading) -> String {
    let (change, ci) = change_text(&Some(*r));
    format!("{} {change} {ci} {}", r.metric.title(), r.verdict.map_or("—", |v| v.word()))
}

/// One row per step: its commit, build, samples, the change with its interval, and the call.
fn steps_table(steps: &[Step]) -> Table {
    let mut t = Table::new(vec![
        Column::number("step"),
        Column::text("commit"),
        Column::text("build"),
        Column::number("samples"),
        Column::number("change"),
        Column::number("95% CI"),
        Column::text("call"),
        Column::text("subject"),
    ]);
    for s in steps {
        let (change, ci) = change_text(&s.reading);
        let samples = if s.samples_per_variant > 0 { s.samples_per_variant.to_string() } else { "—".into() };
        let call = match s.call {
            StepCall::Reference => "reference (bad vs good)".to_string(),
            c if s.called_by == Some(CalledBy::IntervalAtCap) => format!("{} (at the cap)", c.word()),
            c => c.word().to_string(),
        };
        t.push_text(vec![
            s.index.to_string(),
            short(&s.commit).to_string(),
            build_text(&s.build),
            samples,
            change,
            ci,
            call,
            s.subject.chars().take(48).collect(),
        ]);
    }
    t
}

impl Render for BisectLog {
    fn text(&self) -> String {
        let mut o = String::new();
        let _ = writeln!(
            o,
            "abprof bisect {} · repo {} · good {} · bad {} · {}",
            self.root.display(),
            self.repo.display(),
            short(&self.good),
            short(&self.bad),
            self.metric.title()
        );
        if let Some(b) = &self.good_build {
            let _ = writeln!(o, "good build: {}", build_text(b));
        }
        match &self.threshold {
            Some(t) => match t.half_of_pct {
                Some(c) => {
                    let _ = writeln!(o, "threshold {:+.2}% (half the good→bad change of {c:+.2}%)", t.pct);
                }
                None => {
                    let _ = writeln!(o, "threshold {:+.2}% (--threshold)", t.pct);
                }
            },
            None => {
                let _ = writeln!(o, "threshold: not set (the reference step did not finish)");
            }
        }
        let steps = steps_table(&self.steps);
        o.push_str(&steps.render(&Text::of(&steps, "  ", true)));
        let _ = writeln!(o);
        match &self.outcome {
            Some(BisectOutcome::FirstBad { commit, subject, step }) => {
                let _ = writeln!(o, "first bad commit: {commit} {subject}");
                if let Some(s) = self.step(*step) {
                    let study = s.study.as_deref().unwrap_or("—");
                    if let Some(r) = &s.reading {
                        let _ = writeln!(o, "  convicted by step {step} ({study}): {}", verdict_line(r));
                    }
                    if let Some(c) = s.confirmation {
                        let _ = writeln!(o, "  {}", c.line(s.samples_per_variant));
                    }
                }
            }
            Some(BisectOutcome::OnlySkipped { candidates }) => {
                let list: Vec<&str> = candidates.iter().map(|c| short(c)).collect();
                let _ = writeln!(
                    o,
                    "no single first bad commit: skipped commits (that do not build, or stayed inconclusive at the sample cap) hide the boundary; it is one of {}",
                    list.join(" ")
                );
            }
            Some(BisectOutcome::Inconclusive { commit, step }) => {
                let _ = writeln!(
                    o,
                    "inconclusive at step {step} ({}): its interval still reaches the threshold at {} samples per variant; pass a larger --max-samples or a --threshold",
                    short(commit),
                    self.max_samples
                );
            }
            Some(BisectOutcome::NoChange) => {
                let _ = writeln!(
                    o,
                    "good and bad do not differ clearly (beyond --threshold, where one was given) at {} samples per variant: nothing to bisect (see steps/00-bad)",
                    self.max_samples
                );
            }
            Some(BisectOutcome::Interrupted { signal }) => {
                let _ = writeln!(o, "interrupted by signal {signal}; the bisect's worktree was removed");
            }
            None => {
                let _ = writeln!(o, "the bisect did not finish");
            }
        }
        for s in self.steps.iter().filter(|s| s.call == StepCall::Skip) {
            let why = s.build.error.as_deref().unwrap_or("");
            let _ = writeln!(o, "skipped {} (does not build): {why}", short(&s.commit));
        }
        let count = |f: &dyn Fn(&Step) -> bool| self.steps.iter().filter(|s| f(s)).count();
        let called = count(&|s| matches!(s.call, StepCall::Good | StepCall::Bad));
        let at_cap = count(&|s| s.called_by == Some(CalledBy::IntervalAtCap) && s.call != StepCall::Inconclusive);
        let inconclusive = count(&|s| s.call == StepCall::Inconclusive);

        if at_cap + inconclusive > 0 {
            let _ = writeln!(
                o,
                "at the sample cap ({} per variant): {at_cap} of {called} calls made at its look, {inconclusive} probe(s) inconclusive and skipped (docs/methodology.md §19)",
                self.max_samples
            );
        }
        if self.git_log.is_some() {
            let file = crate::study::run_folders::BisectFolder::at(&self.root).git_log_file();
            let _ = writeln!(o, "git bisect log: {}", file.display());
        }
        let _ = writeln!(o, "wall time {:.0} s", self.wall_s);
        o
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bisect::record::Confirmation;
    use crate::bisect::record::{StepKind, Threshold};
    use crate::summary::stats::{ChangeCi, Verdict};
    use crate::summary::Metric;

    fn step(index: usize, commit: &str, call: StepCall, ci: Option<(f64, f64)>, error: Option<&str>) -> Step {
        Step {
            index,
            kind: if index == 0 { StepKind::Reference } else { StepKind::Probe },
            commit: commit.repeat(40 / commit.len()),
            subject: format!("commit {commit}"),
            build: BuildRecord {
                commit: commit.into(),
                artifact: None,
                reused: error.is_none(),
                seconds: 1.0,
                ccache: None,
                ccache_hit_rate_pct: None,
                error: error.map(str::to_string),
            },
            study: ci.map(|_| format!("steps/{index:02}")),
            samples_per_variant: if ci.is_some() { 3 } else { 0 },
            reading: ci.map(|(lo, hi)| Reading {
                metric: Metric::ServerDecodeTps,
                change_pct: Some((lo + hi) / 2.0),
                ci: Some(ChangeCi::bounds(lo, hi, 0.95)),
                verdict: Some(if hi < 0.0 { Verdict::Slower } else { Verdict::NoClearDifference }),
                accepted: [3, 3],
            }),
            call,
            called_by: None,
            confirmation: None,
        }
    }

    #[test]
    fn calls_at_the_cap_and_inconclusive_probes_are_reported_apart() {
        let mut log = log();
        log.steps[2].called_by = Some(CalledBy::IntervalAtCap);
        log.steps.push(step(4, "e", StepCall::Inconclusive, Some((-18.0, -9.0)), None));
        let text = log.text();
        let row = text.lines().find(|l| l.contains("cccccccccccc")).unwrap();
        assert!(row.contains("good (at the cap)"), "{row}");
        let row = text.lines().find(|l| l.contains("eeeeeeeeeeee")).unwrap();
        assert!(row.contains("inconclusive (skipped)"), "{row}");
        assert!(
            text.contains(
                "at the sample cap (9 per variant): 1 of 2 calls made at its look, 1 probe(s) inconclusive and skipped"
            ),
            "{text}"
        );
        assert!(!log_text_without_cap().contains("at the sample cap"), "no line when nothing reached the cap");
    }

    #[test]
    fn the_convicting_steps_confirmation_is_said_under_its_verdict() {
        let mut log = log();
        let Some(BisectOutcome::FirstBad { step, .. }) = log.outcome.clone() else { panic!("a first-bad log") };
        for (c, words) in [
            (Confirmation::Confirmed, "grown to 12 samples per variant, the interval does"),
            (Confirmation::Contradicted, "the bisect's answer is in doubt; bisect again"),
            (Confirmation::Unconfirmed, "at the sample cap (12 per variant) its interval still reaches the threshold"),
        ] {
            let s = log.steps.iter_mut().find(|s| s.index == step).unwrap();
            s.confirmation = Some(c);
            s.samples_per_variant = 12;
            let text = log.text();
            let at = text.find("convicted by step").expect("the convicting line");
            assert!(text[at..].lines().nth(1).unwrap().contains(words), "{text}");
        }
    }

    fn log_text_without_cap() -> String {
        log().text()
    }

    fn log() -> BisectLog {
        BisectLog {
            root: "/tmp/b".into(),
            repo: "/src/llama.cpp".into(),
            good: "a".repeat(40),
            bad: "f".repeat(40),
            patch: None,
            cmake_args: vec![],
            artifacts: "/tmp/art".into(),
            metric: Metric::ServerDecodeTps,
            samples: 3,
            max_samples: 9,
            good_build: None,
            threshold: Some(Threshold { pct: -15.0, half_of_pct: Some(-30.0) }),
            steps: vec![
                step(0, "f", StepCall::Reference, Some((-34.0, -26.0)), None),
                step(1, "b", StepCall::Skip, None, Some("cmake build failed (exited with status 1): x.cpp:1: error")),
                step(2, "c", StepCall::Good, Some((-3.0, 2.0)), None),
                step(3, "d", StepCall::Bad, Some((-33.0, -27.0)), None),
            ],
            outcome: Some(BisectOutcome::FirstBad { commit: "d".repeat(40), subject: "commit d".into(), step: 3 }),
            git_log: Some("git bisect start\n".into()),
            started_at: String::new(),
            wall_s: 12.0,
        }
    }

    #[test]
    fn names_the_first_bad_commit_with_the_ab_that_convicts_it() {
        let text = log().text();
        assert!(text.contains("threshold -15.00% (half the good→bad change of -30.00%)"), "{text}");
        assert!(text.contains(&format!("first bad commit: {} commit d", "d".repeat(40))), "{text}");
        assert!(
            text.contains(
                "convicted by step 3 (steps/03): server decode TPS (tok/s) -30.00% [-33.00%, -27.00%] slower"
            ),
            "{text}"
        );
        assert!(text.contains("skipped bbbbbbbbbbbb (does not build): cmake build failed"), "{text}");
        let row = text.lines().find(|l| l.contains("cccccccccccc")).unwrap();
        assert!(row.contains("[-3.00%, +2.00%]") && row.contains("good") && row.ends_with("commit c"), "{row}");
    }
}
