//! `abprof bisect` (docs/methodology.md §19): the first commit between a good and a bad one that
//! changed a metric, found by `git bisect` in a worktree of its own, every probed commit built
//! with `abprof build`'s machinery (artifacts reused across runs, ccache across builds) and
//! measured by a cold interleaved A/B against the good build through the one study loop.
//!
//! ```text
//! DIR/bisect.json        the log: every build and step, the threshold, the outcome
//! DIR/bisect-log.txt     `git bisect log` (git bisect replay re-runs it)
//! DIR/source.patch       the patch every build applied, when one was given
//! DIR/steps/00-bad/      the reference A/B: good against bad
//! DIR/steps/NN-SHA12/    one A/B study folder per probed commit that built
//! DIR/worktree/          git's bisect state while it runs; removed on every way out
//! ```
mod git;
pub(crate) mod judge;
pub(crate) mod record;
mod simulate;

use crate::artifact::ccache::CcacheCounters;
use crate::artifact::git::{is_ancestor, resolve_commit, subject};
use crate::artifact::{reuse_or_build, ArtifactError, BuildSpec};
use crate::stop_signal::StopSignal;
use crate::study::evidence::Evidence;
use crate::study::file::StudyFile;
use crate::study::run_folders::BisectFolder;
use crate::study::{run_ab, NextBlock, Outcome, StudyJudge};
use crate::summary::stats::{PooledSpread, MIN_VALUES, PROBE_FIRST_BLOCKS};
use crate::summary::{judge_with, summarize, Metric, TraceReading};
use crate::variant::spec_with_fields;
use anyhow::{bail, Context, Result};
use git::{BisectWorktree, Mark, Position};
use judge::{probe_call, reference_clear, reference_settled, threshold_pct, Call, CalledBy, Reading};
use record::{BisectLog, BisectOutcome, BuildRecord, Confirmation, Step, StepCall, StepKind, Threshold};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

/// Samples per variant a step may grow to when `--max-samples` is not given: sized by simulation
/// so that a −6% step at 3% noise is named at least 90% of the time with at most 1% wrong calls
/// per probe, and at least 85% with at most 1.5% where builds are noisier than the pool
/// (docs/methodology.md §19; `bisect/simulate.rs`). A probe rarely gets near it (7.4 blocks on
/// average at 3% noise); the reference step does (27).
pub(crate) const DEFAULT_MAX_SAMPLES: u32 = 60;

/// Everything a bisect needs, checked by `cli/` before anything is created.
#[derive(Debug, Clone)]
pub(crate) struct BisectPlan {
    pub(crate) root: PathBuf,
    pub(crate) repo: PathBuf,
    pub(crate) good: String,
    pub(crate) bad: String,
    pub(crate) patch: Option<PathBuf>,
    pub(crate) artifacts: PathBuf,
    pub(crate) cmake_args: Vec<String>,
    pub(crate) jobs: usize,
    /// The study every step runs; its variants are replaced by the good build and the probe.
    pub(crate) study: StudyFile,
    /// The variant fields every build runs with (`|kv=q8_0…`, or empty).
    pub(crate) variant_fields: String,
    pub(crate) metric: Metric,
    /// A given threshold magnitude, % (default: half the good→bad change).
    pub(crate) threshold_pct: Option<f64>,
    /// Samples per variant a step may grow to while undecided.
    pub(crate) max_samples: u32,
}

/// The commits, resolved and in order, before anything is created on disk.
pub(crate) fn check(plan: &BisectPlan) -> Result<(String, String)> {
    let good = resolve_commit(&plan.repo, &plan.good)?;
    let bad = resolve_commit(&plan.repo, &plan.bad)?;
    if good == bad {
        bail!("--good and --bad are the same commit {}: give the last known good and the first known bad", &good[..12]);
    }
    if !is_ancestor(&plan.repo, &good, &bad)? {
        bail!(
            "--good {} is not an ancestor of --bad {}: a bisect walks from a good commit forward to a bad one",
            &good[..12],
            &bad[..12]
        );
    }
    let top = crate::artifact::git::git(&plan.repo, &["rev-parse", "--show-toplevel"])?;
    let top = PathBuf::from(String::from_utf8_lossy(&top.stdout).trim());
    let root = std::path::absolute(&plan.root)?;
    if !top.as_os_str().is_empty() && root.starts_with(&top) {
        bail!(
            "--root {} is inside the repository {}: its files would change the repository's status; put it elsewhere",
            plan.root.display(),
            top.display()
        );
    }
    if std::fs::read_dir(&plan.root).is_ok_and(|mut d| d.next().is_some()) {
        bail!("{} already holds files: pass a new --root for the bisect's evidence", plan.root.display());
    }
    Ok((good, bad))
}

fn short(sha: &str) -> &str {
    &sha[..12.min(sha.len())]
}

fn say(line: &str) {
    eprintln!("abprof bisect: {line}");
}

enum Built {
    Ok(BuildRecord, PathBuf),
    DoesNotBuild(BuildRecord),
    Interrupted,
}

/// The artifact of `commit`, from an earlier run or built now with ccache's counters around it.
fn build(plan: &BisectPlan, patch: Option<&Path>, commit: &str, stop: &StopSignal) -> Result<Built> {
    let spec = BuildSpec {
        repo: plan.repo.clone(),
        commit: commit.into(),
        patch: patch.map(Path::to_path_buf),
        name: None,
        out: plan.artifacts.clone(),
        cmake_args: plan.cmake_args.clone(),
        jobs: plan.jobs,
        cancel: Some(stop.flag()),
    };
    let before = CcacheCounters::read();
    let t0 = Instant::now();
    let result = reuse_or_build(&spec, &mut |s| say(&format!("{}: {s}", short(commit))));
    let seconds = t0.elapsed().as_secs_f64();
    let mut rec = BuildRecord { seconds, ..BuildRecord::not_built(commit) };
    let counted = |rec: &mut BuildRecord| {
        if let (Some(b), Some(a)) = (before, CcacheCounters::read()) {
            let d = a.since(&b);
            rec.ccache = Some(d);
            rec.ccache_hit_rate_pct = d.hit_rate_pct();
        }
    };
    match result {
        Ok((artifact, reused)) => {
            rec.reused = reused;
            rec.artifact = Some(artifact.dir.clone());
            if !reused {
                counted(&mut rec);
            }
            let how = if reused {
                "artifact reused".to_string()
            } else {
                format!(
                    "built in {seconds:.0} s{}",
                    rec.ccache_hit_rate_pct.map_or(String::new(), |r| format!(", ccache {r:.1}% hits"))
                )
            };
            say(&format!("{}: {how}: {}", short(commit), artifact.dir.display()));
            Ok(Built::Ok(rec, artifact.dir))
        }
        Err(ArtifactError::Interrupted) => Ok(Built::Interrupted),
        Err(e) if e.is_build_failure() => {
            counted(&mut rec);
            rec.error = Some(e.to_string());
            say(&format!("{}: does not build: {e}", short(commit)));
            Ok(Built::DoesNotBuild(rec))
        }
        Err(e) => Err(anyhow::Error::new(e).context(format!("building {}", short(commit)))),
    }
}

struct Measured {
    reading: Reading,
    /// The step's within-block log ratios, for the pooled spread of later probes (§19).
    log_ratios: Vec<f64>,
    samples: u32,
    interrupted: Option<i32>,
}

/// A cold interleaved A/B of `cand` against the good build in `dir`, one interleaved block more
/// at a time (the study loop's adaptive hook, docs/methodology.md §17) while `decided` says no,
/// up to `plan.max_samples`. A probe (`pool` given) is read with its spread pooled with the
/// earlier steps' and starts from one block once the pool can carry its interval (§19).
fn measure(
    plan: &BisectPlan,
    dir: &Path,
    variants: [String; 2],
    prompt: Option<&Path>,
    pool: Option<PooledSpread>,
    decided: impl Fn(&Reading, &[f64]) -> bool + Send + Sync + 'static,
    resume: bool,
) -> Result<Measured> {
    // A step is read after every block, not by §17's repeated intervals: a probe's call is Wald's
    // test between the two ends, whose error bounds hold however often it looks; the reference's
    // interval only sets the threshold half-way between them (docs/methodology.md §19).
    let mut file = StudyFile { variants: variants.to_vec(), ..plan.study.clone() };
    if let (None, Some(p)) = (&file.prompt, prompt) {
        file.prompt = Some(p.to_path_buf());
    }
    if pool.is_some_and(|p| p.df >= (MIN_VALUES - 1) as f64) {
        file.samples = file.samples.min(PROBE_FIRST_BLOCKS as u32);
    }
    let (metric, max) = (plan.metric, plan.max_samples as usize);
    let read = move |s: &crate::summary::Summary| match pool {
        Some(p) => Reading::of_probe(s, metric, p),
        None => Reading::of(s, metric),
    };
    let shown = dir.display().to_string();
    let rule = move |ev: &Evidence| {
        let blocks = planned_blocks(ev)?;
        let summary = judge_with(ev, crate::study::StudyFacts::load(ev)?, TraceReading::Skip)?.summary;
        if blocks >= max || decided(&read(&summary), &judge::log_ratios(&summary, metric)) {
            return Ok(None);
        }
        say(&format!("{shown}: undecided, growing to {} samples per variant", blocks + 1));
        Ok(Some(NextBlock::Adaptive))
    };
    let run = run_ab(&file, dir, resume, Some(Arc::new(StepJudge(rule))))?;
    let summary = summarize(&run.evidence)?;
    run.evidence.write_study_summary(&summary)?;
    if !run.restored {
        bail!(
            "the restore/verify hooks failed, so the host may still be isolated: see {} and restore it by hand",
            run.evidence.isolation_file().display()
        );
    }
    let reading = read(&summary);
    let log_ratios = judge::log_ratios(&summary, metric);
    let samples = planned_blocks(&run.evidence)? as u32;
    let interrupted = match run.outcome {
        Outcome::Interrupted(n) => Some(n),
        Outcome::Completed => None,
    };
    Ok(Measured { reading, log_ratios, samples, interrupted })
}

/// Samples per variant the study's plan holds now.
fn planned_blocks(ev: &Evidence) -> Result<usize> {
    Ok(ev.read_plan()?.blocks())
}

fn reading_line(r: &Reading) -> String {
    match (r.change_pct, r.ci) {
        (Some(c), Some(ci)) => format!("{c:+.2}% [{:+.2}%, {:+.2}%]", ci.lo_pct, ci.hi_pct),
        (Some(c), None) => format!("{c:+.2}% (no interval: too few accepted samples)"),
        _ => "no reading (too few accepted samples)".into(),
    }
}

struct Bisect<'a> {
    plan: &'a BisectPlan,
    log: BisectLog,
    t0: Instant,
}

impl Bisect<'_> {
    fn save(&mut self) -> Result<()> {
        self.log.wall_s = self.t0.elapsed().as_secs_f64();
        let folder = BisectFolder::at(&self.plan.root);
        folder.write_log(&self.log).with_context(|| format!("writing {}", folder.log_file().display()))
    }

    fn finish(mut self, outcome: BisectOutcome) -> Result<BisectLog> {
        self.log.outcome = Some(outcome);
        self.save()?;
        Ok(self.log)
    }
}

/// Runs the bisect of `plan` (checked by [`check`], which gave `good` and `bad`).
pub(crate) fn run(plan: &BisectPlan, good: &str, bad: &str, stop: &StopSignal) -> Result<BisectLog> {
    let root = &plan.root;
    let folder = BisectFolder::at(root);
    std::fs::create_dir_all(folder.steps_dir()).with_context(|| format!("creating {}", root.display()))?;
    let patch = match &plan.patch {
        Some(p) => {
            // One copy, read once: a patch from a pipe cannot be read again for every build.
            let copy = folder.patch_copy();
            let bytes = std::fs::read(p).with_context(|| format!("cannot read patch {}", p.display()))?;
            std::fs::write(&copy, bytes)?;
            Some(copy)
        }
        None => None,
    };
    let mut b = Bisect {
        plan,
        log: BisectLog {
            root: root.clone(),
            repo: plan.repo.clone(),
            good: good.into(),
            bad: bad.into(),
            patch: plan.patch.clone(),
            cmake_args: plan.cmake_args.clone(),
            artifacts: plan.artifacts.clone(),
            metric: plan.metric,
            samples: plan.study.samples,
            max_samples: plan.max_samples,
            good_build: None,
            threshold: None,
            steps: Vec::new(),
            outcome: None,
            git_log: None,
            started_at: chrono::Local::now().to_rfc3339(),
            wall_s: 0.0,
        },
        t0: Instant::now(),
    };
    b.save()?;
    let (tree, first) = BisectWorktree::start(&plan.repo, &folder.worktree(), good, bad)?;
    let outcome = drive(&mut b, &tree, first, patch.as_deref(), stop)?;
    b.log.git_log = Some(tree.log());
    if let Some(l) = &b.log.git_log {
        std::fs::write(folder.git_log_file(), l)?;
    }
    drop(tree);
    b.finish(outcome)
}

/// A probe's study, kept to grow it again should it convict the first bad commit.
struct ProbeStudy {
    index: usize,
    dir: PathBuf,
    variants: [String; 2],
    /// The pooled spread of the steps before it, which its reading is read with.
    before: PooledSpread,
}

/// The convicting A/B (docs/methodology.md §19): where Wald's test called the probe bad before
/// its interval lay wholly beyond the threshold, its study grows, one block at a time, until the
/// interval leaves the threshold or the sample cap is reached, and the step records which
/// (`confirmation`). The user reads that A/B as the evidence; Wald's call alone would often show
/// an interval that still reaches the threshold. Some(signal) when a signal stopped it.
fn confirm(b: &mut Bisect<'_>, probe: &ProbeStudy, prompt: Option<&Path>, t: f64) -> Result<Option<i32>> {
    let plan = b.plan;
    let Some(step) = b.log.steps.iter().find(|s| s.index == probe.index) else { return Ok(None) };
    let Some(reading) = step.reading else { return Ok(None) };
    if step.call != StepCall::Bad || judge::call(&reading, t) == Call::Bad {
        return Ok(None);
    }
    say(&format!(
        "step {}: called bad by Wald's test with its interval {} reaching the threshold {t:+.2}%: growing its A/B until the interval leaves it",
        probe.index,
        reading_line(&reading)
    ));
    let decided = move |r: &Reading, _: &[f64]| judge::call(r, t) != Call::Undecided;
    let m = measure(plan, &probe.dir, probe.variants.clone(), prompt, Some(probe.before), decided, true)?;
    let step = b.log.steps.iter_mut().find(|s| s.index == probe.index).expect("found above");
    step.samples_per_variant = m.samples;
    step.reading = Some(m.reading);
    if let Some(signal) = m.interrupted {
        b.save()?;
        return Ok(Some(signal));
    }
    let confirmation = match judge::call(&m.reading, t) {
        Call::Bad => Confirmation::Confirmed,
        Call::Good => Confirmation::Contradicted,
        Call::Undecided => Confirmation::Unconfirmed,
    };
    step.confirmation = Some(confirmation);
    say(&format!("step {}: {}", probe.index, confirmation.line(m.samples)));
    b.save()?;
    Ok(None)
}

fn interrupted(stop: &StopSignal) -> Option<BisectOutcome> {
    stop.signal().map(|signal| BisectOutcome::Interrupted { signal })
}

fn drive(
    b: &mut Bisect<'_>,
    tree: &BisectWorktree,
    first: Position,
    patch: Option<&Path>,
    stop: &StopSignal,
) -> Result<BisectOutcome> {
    let plan = b.plan;
    let (good, bad) = (b.log.good.clone(), b.log.bad.clone());
    say(&format!("good {} · bad {}", short(&good), short(&bad)));
    let good_dir = match build(plan, patch, &good, stop)? {
        Built::Ok(rec, dir) => {
            b.log.good_build = Some(rec);
            dir
        }
        Built::DoesNotBuild(rec) => {
            let why = rec.error.clone().unwrap_or_default();
            b.log.good_build = Some(rec);
            b.save()?;
            bail!("the good commit {} does not build, so there is nothing to compare against: {why}", short(&good));
        }
        Built::Interrupted => return Ok(interrupted(stop).unwrap_or(BisectOutcome::Interrupted { signal: 2 })),
    };
    b.save()?;
    let spec = |label: &str, dir: &Path| spec_with_fields(label, dir, &plan.variant_fields);

    // The reference: good against bad, until the change is clear.
    let reference_rel = BisectFolder::step_rel(0, "bad");
    let reference_dir = BisectFolder::at(&plan.root).step(&reference_rel);
    let mut step = Step::before_build(0, StepKind::Reference, &bad, subject(&plan.repo, &bad), StepCall::Reference);
    let bad_dir = match build(plan, patch, &bad, stop)? {
        Built::Ok(rec, dir) => {
            step.build = rec;
            dir
        }
        Built::DoesNotBuild(rec) => {
            let why = rec.error.clone().unwrap_or_default();
            step.build = rec;
            b.log.steps.push(step);
            b.save()?;
            bail!("the bad commit {} does not build, so the change cannot be measured: {why}", short(&bad));
        }
        Built::Interrupted => return Ok(interrupted(stop).unwrap_or(BisectOutcome::Interrupted { signal: 2 })),
    };
    say(&format!("step 0: good against bad {}", short(&bad)));
    let given = plan.threshold_pct;
    let clear = move |r: &Reading| reference_clear(r, given);
    let settled = move |r: &Reading, _: &[f64]| reference_settled(r, given);
    let m =
        measure(plan, &reference_dir, [spec("good", &good_dir), spec("bad", &bad_dir)], None, None, settled, false)?;
    step.study = Some(reference_rel);
    step.samples_per_variant = m.samples;
    step.reading = Some(m.reading);
    if let Some(signal) = m.interrupted {
        step.call = StepCall::Interrupted;
        b.log.steps.push(step);
        return Ok(BisectOutcome::Interrupted { signal });
    }
    b.log.steps.push(step);
    let Some(change) = m.reading.reference_change().filter(|_| clear(&m.reading)) else {
        let how = match given {
            Some(g) => format!("is not clearly beyond --threshold {g}%"),
            None => "is not clear".to_string(),
        };
        say(&format!("the change good → bad in {} {how}: {}", plan.metric.title(), reading_line(&m.reading)));
        return Ok(BisectOutcome::NoChange);
    };
    let t = threshold_pct(change, given);
    b.log.threshold = Some(Threshold { pct: t, half_of_pct: given.is_none().then_some(change) });
    say(&format!("step 0: bad {} vs good: {} → threshold {t:+.2}%", short(&bad), reading_line(&m.reading)));
    b.save()?;
    // The reference's calibrated prompt, so every step sends the same text.
    let prompt =
        crate::study::evidence::Evidence::open(&reference_dir).ok().map(|ev| ev.prompt()).filter(|p| p.is_file());
    // Every step's pairs measure the same host's noise: pooled, they let a clear probe be called
    // from its first block (§19).
    let mut pool = PooledSpread::default().with(&m.log_ratios);

    let mut pos = first;
    let mut probes: Vec<ProbeStudy> = Vec::new();
    for index in 1.. {
        let sha = match pos {
            Position::FirstBad(commit) => {
                let convicting = b
                    .log
                    .steps
                    .iter()
                    .rev()
                    .find(|s| s.commit == commit && matches!(s.call, StepCall::Bad | StepCall::Reference))
                    .map_or(0, |s| s.index);
                if let Some(probe) = probes.iter().find(|p| p.index == convicting) {
                    if let Some(signal) = confirm(b, probe, prompt.as_deref(), t)? {
                        return Ok(BisectOutcome::Interrupted { signal });
                    }
                }
                let subject = subject(&plan.repo, &commit);
                return Ok(BisectOutcome::FirstBad { commit, subject, step: convicting });
            }
            Position::OnlySkipped(candidates) => return Ok(BisectOutcome::OnlySkipped { candidates }),
            Position::Probe(sha) => sha,
        };
        if let Some(o) = interrupted(stop) {
            return Ok(o);
        }
        let mut step = Step::before_build(index, StepKind::Probe, &sha, subject(&plan.repo, &sha), StepCall::Skip);
        say(&format!("step {index}: {} {}", short(&sha), step.subject));
        let cand_dir = match build(plan, patch, &sha, stop)? {
            Built::Ok(rec, dir) => {
                step.build = rec;
                dir
            }
            Built::DoesNotBuild(rec) => {
                step.build = rec;
                b.log.steps.push(step);
                b.save()?;
                pos = tree.mark(&sha, Mark::Skip)?;
                continue;
            }
            Built::Interrupted => return Ok(interrupted(stop).unwrap_or(BisectOutcome::Interrupted { signal: 2 })),
        };
        let rel = BisectFolder::step_rel(index, short(&sha));
        // The pool of the steps before this one: the probe's own ratios join it after its call.
        let before = pool;
        let decided =
            move |r: &Reading, ratios: &[f64]| probe_call(r, ratios, before, t, false).call != Call::Undecided;
        let variants = [spec("good", &good_dir), spec(short(&sha), &cand_dir)];
        let dir = BisectFolder::at(&plan.root).step(&rel);
        probes.push(ProbeStudy { index, dir: dir.clone(), variants: variants.clone(), before });
        let m = measure(plan, &dir, variants, prompt.as_deref(), Some(pool), decided, false)?;
        step.study = Some(rel);
        step.samples_per_variant = m.samples;
        step.reading = Some(m.reading);
        if let Some(signal) = m.interrupted {
            step.call = StepCall::Interrupted;
            b.log.steps.push(step);
            return Ok(BisectOutcome::Interrupted { signal });
        }
        // Wald's test calls a probe as it grows; undecided at the cap, only an interval wholly on
        // one side of the threshold calls it, else it is inconclusive and skipped as a commit
        // that does not build (§19): a call by the interval's centre there would be a coin toss
        // for a commit near the threshold.
        let at_cap = m.samples >= plan.max_samples;
        let probe = probe_call(&m.reading, &m.log_ratios, before, t, at_cap);
        let c = probe.call;
        pool = pool.with(&m.log_ratios);
        step.called_by = Some(probe.by);
        step.call = StepCall::from_call(c);
        let how = match (c, probe.by) {
            (Call::Undecided, _) => format!(" at the sample cap ({}): skipped", plan.max_samples),
            (_, CalledBy::IntervalAtCap) => " (at the sample cap's look)".into(),
            (_, CalledBy::Sequential) => String::new(),
        };
        say(&format!(
            "step {index}: {} vs good: {} → {}{how}",
            short(&sha),
            reading_line(&m.reading),
            step.call.word()
        ));
        b.log.steps.push(step);
        b.save()?;
        pos = match c {
            Call::Good => tree.mark(&sha, Mark::Good)?,
            Call::Bad => tree.mark(&sha, Mark::Bad)?,
            Call::Undecided => tree.mark(&sha, Mark::Skip)?,
        };
    }
    unreachable!("the loop returns")
}

/// A step's judge: its own rule for another block (Wald's test, docs/methodology.md §19), and
/// the summary's per-sample rules for each sample's progress line.
struct StepJudge<F>(F);

impl<F> StudyJudge for StepJudge<F>
where
    F: Fn(&Evidence) -> Result<Option<NextBlock>> + Send + Sync,
{
    fn another_block(&self, ev: &Evidence) -> Result<Option<NextBlock>> {
        (self.0)(ev)
    }

    fn rejections(&self, ev: &Evidence, sample_dir: &Path) -> Result<Vec<String>> {
        crate::summary::study_judge::SummaryJudge.rejections(ev, sample_dir)
    }
}
