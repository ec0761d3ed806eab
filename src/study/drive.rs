//! THE study loop (docs/methodology.md §2, §5, §6): per planned slot, isolation hooks → a cold
//! sample through `measure::run_sample` under the idle gate and telemetry → its record and
//! timeline. Restore hooks run on every exit path; one signal listener turns SIGINT/SIGTERM into
//! a stop of the sample in flight, a restore, and a resumable study. `ab`, `pi` and `trace` are
//! configurations of this loop ([`StudyConfig`]), never copies of it.
use super::binary_watch::{VariantFiles, WatchedBinary};
use super::evidence::{AttemptStatus, Evidence, OrderEntry, Plan, SampleLayout, Timeline};
use super::facts::{host_facts, variant_facts_with, FileFacts, VariantFacts};
use super::file::StudyFile;
use super::isolation::Hooks;
use super::observer::{open_gpu_source, StudyObserver, TelemetrySlot};
use super::port::StudyPort;
use super::preflight::{check_prompt_file, check_rate, check_servers, check_study, Probes};
use super::progress::{SampleLine, StudyProgress};
use super::run_record::{InFlight, RunFile};
use super::sample_folder::SampleFolder;
use crate::measure::{run_sample, save_record, Load, Sample, SampleError, SampleFiles, SamplePhase, SampleSpec};
use crate::refusal::Refusal;
use crate::schedule::{interleaved, Slot};
use crate::server::{LaunchSpec, ServerError};
use crate::variant::Variant;
use anyhow::{anyhow, bail, Context, Result};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    Completed,
    /// Stopped by this signal number (SIGHUP 1, SIGINT 2, SIGTERM 15).
    Interrupted(i32),
}

pub struct StudyRun {
    pub(crate) outcome: Outcome,
    pub evidence: Evidence,
    pub(crate) restored: bool,
    pub(crate) samples_taken: usize,
}

/// What a configuration sees of the running study.
pub(crate) struct StudyContext<'a> {
    pub(crate) file: &'a StudyFile,
    pub(crate) evidence: &'a Evidence,
    pub(crate) plan: &'a Plan,
    pub(crate) variants: &'a [Variant],
    pub(crate) common_args: &'a [String],
    pub(crate) port: &'a StudyPort,
    /// Set once SIGINT/SIGTERM/SIGHUP arrived: a load that blocks must end its work and return.
    pub(crate) cancel: &'a Arc<AtomicBool>,
}

impl StudyContext<'_> {
    /// The variant's own server on the study's loopback port.
    pub(crate) fn launch(&self, v: &Variant, files: &SampleFiles) -> LaunchSpec {
        LaunchSpec {
            cpus: self.file.server_cpus(),
            ..LaunchSpec::for_variant(
                v,
                &self.file.model,
                self.common_args,
                self.port.get(),
                (files.server_log(), files.console_log()),
            )
        }
    }

    /// Set once a signal arrived (the listener publishes its number first, then sets this).
    pub(crate) fn cancelled(&self) -> bool {
        self.cancel.load(Ordering::SeqCst)
    }
}

/// What distinguishes one kind of study: its plan, its load, and what happens around a sample.
#[allow(async_fn_in_trait)] // Static dispatch only.
pub(crate) trait StudyConfig {
    type Load: Load;
    /// How sample folders are named.
    fn layout(&self) -> SampleLayout {
        SampleLayout::Study
    }
    /// The run order of a new study.
    fn plan(&self, file: &StudyFile, variants: &[Variant]) -> Plan {
        Plan {
            labels: variants.iter().map(|v| v.label.clone()).collect(),
            order_seed: file.order_seed,
            slots: interleaved(variants.len(), file.samples as usize, file.order_seed),
            layout: self.layout(),
            traced: Vec::new(),
            retakes: 0,
        }
    }
    /// Once per run (new or resumed), before the first sample: e.g. the calibrated prompt.
    async fn prepare(&mut self, _ctx: &StudyContext<'_>) -> Result<()> {
        Ok(())
    }
    /// The prompt length every sample must report, when the load fixes one.
    fn expected_prompt_tokens(&self) -> Option<u64> {
        None
    }
    /// How one slot's server runs.
    fn spec(&self, ctx: &StudyContext<'_>, slot: &Slot, files: &SampleFiles) -> Result<SampleSpec> {
        let v = &ctx.variants[slot.variant];
        Ok(SampleSpec {
            expected_prompt_tokens: self.expected_prompt_tokens(),
            stop_timeout: Duration::from_secs(ctx.file.stop_timeout_s),
            expect: v.expect_regex(),
            ..SampleSpec::new(ctx.launch(v, files), Duration::from_secs(ctx.file.health_timeout_s))
        })
    }
    fn load(&self, ctx: &StudyContext<'_>, slot: &Slot) -> Result<Self::Load>;
    /// Shown beside the progress display (a tracer's finalize wait, say).
    fn phase(&self, _label: &str, _traced: bool, _phase: SamplePhase) {}
    /// The judge the configuration was handed (none: no more blocks, and progress lines without
    /// an acceptance), which the two methods below ask.
    fn judge(&self) -> Option<&super::judge::Judge> {
        None
    }
    /// Once every planned sample is taken (and nothing interrupted the study): whether to plan
    /// one more interleaved block, and why (`until_ci_pct`, docs/methodology.md §17; a retake,
    /// §7.19), as the judge says; without one, no more.
    fn another_block(&mut self, ctx: &StudyContext<'_>) -> Result<Option<super::evidence::NextBlock>> {
        self.judge().map_or(Ok(None), |judge| judge.another_block(ctx.evidence))
    }
    /// The rules that reject the sample just recorded in `sample_dir` (empty: accepted), for its progress line;
    /// `None`: this kind of study judges its samples only in its summary.
    fn rejections(&self, ctx: &StudyContext<'_>, sample_dir: &Path) -> Option<Vec<String>> {
        self.judge().and_then(|judge| judge.rejections(ctx.evidence, sample_dir).ok())
    }
    /// After each recorded sample; an error ends the study (restore hooks still run).
    fn after_sample(&mut self, _ctx: &StudyContext<'_>, _slot: &Slot, _sample: &Sample) -> Result<()> {
        Ok(())
    }
}

fn now() -> String {
    chrono::Local::now().to_rfc3339()
}

/// Hashes every variant's files (a resumed study must find the same bytes) and returns each
/// binary and model as recorded, to be watched around every sample.
fn record_facts(
    ev: &Evidence,
    file: &StudyFile,
    (variants, common, versions): Checked,
    resume: bool,
    telemetry: &str,
) -> Result<Vec<VariantFiles>> {
    let mut facts = Vec::new();
    for (v, version) in variants.iter().zip(versions) {
        facts.push(
            variant_facts_with(v, &file.model, common, version.clone())
                .with_context(|| format!("variant {}: hashing its files", v.label))?,
        );
    }
    // The stat recorded with each file's hash; a study of an earlier release has none, so the
    // file is watched from now on.
    let recorded: Vec<(FileFacts, FileFacts)> = if resume {
        let before: Vec<VariantFacts> = ev.read_variants()?;
        for (old, new) in before.iter().zip(&facts) {
            for (what, a, b) in
                [("binary", &old.binary.sha256, &new.binary.sha256), ("model", &old.model.sha256, &new.model.sha256)]
            {
                let is_sha256 = a.len() == 64 && a.bytes().all(|c| c.is_ascii_hexdigit());
                // Evidence a user may edit: refused before the resumed study measures anything.
                if !is_sha256 {
                    return Err(Refusal::of(format!(
                        "{} records variant {}'s {what} sha256 as {a:?}, which is not a sha256: the evidence was edited, so it cannot show what was measured; start a new study",
                        ev.variants_file().display(),
                        new.label
                    ))
                    .into());
                }
                if a != b {
                    bail!(
                        "variant {}'s {what} changed since the study started (sha256 {} → {}): a resumed study must measure the same bytes; start a new study",
                        new.label,
                        &a[..12],
                        b.get(..12).unwrap_or(b)
                    );
                }
            }
        }
        before
            .into_iter()
            .zip(&facts)
            .map(|(old, new)| {
                let binary = FileFacts { stamp: old.binary.stamp.or(new.binary.stamp), ..old.binary };
                (binary, FileFacts { stamp: old.model.stamp.or(new.model.stamp), ..old.model })
            })
            .collect()
    } else {
        ev.write_variants(&facts)?;
        ev.write_host(&host_facts(Some(telemetry.into())))?;
        facts.iter().map(|f| (f.binary.clone(), f.model.clone())).collect()
    };
    let watch = |f: FileFacts| -> Result<WatchedBinary> {
        let stamp = f.stamp.with_context(|| format!("cannot stat {}", f.real_path.display()))?;
        Ok(WatchedBinary { path: f.real_path, sha256: f.sha256, stamp })
    };
    recorded.into_iter().map(|(b, m)| Ok(VariantFiles { binary: watch(b)?, model: watch(m)? })).collect()
}

/// The variants, the common server arguments and each variant's binary's `--version`, as the
/// checks before the folder found them.
type Checked<'a> = (&'a [Variant], &'a [String], &'a [String]);

/// Runs (or resumes) the study in `root` under `config`. Everything knowable is checked before
/// the folder is created (src/study/preflight.rs): a bad input is refused (exit 2) with nothing
/// on disk.
pub(crate) fn run_study_with<C: StudyConfig>(
    file: &StudyFile,
    root: &Path,
    resume: bool,
    config: &mut C,
) -> Result<StudyRun> {
    if !resume {
        Evidence::check_new(root).map_err(Refusal::of)?;
    }
    let (variants, common) = check_study(file)?;
    // A resumed study sends the copy in its folder; a new one reads the file once it starts.
    if let Some(p) = file.prompt.as_ref().filter(|_| !resume) {
        check_prompt_file(p)?;
    }
    let (gpu, telemetry_desc) = open_gpu_source(file.telemetry)?;
    check_rate(file, gpu.as_deref())?;
    if file.idle.thermal.is_some() && gpu.is_none() {
        return Err(Refusal::of(format!("the thermal gate needs a device temperature and this host has no GPU telemetry source ({telemetry_desc}): pass --telemetry nvml, amd-smi, amdgpu-sysfs or rocm-smi, or leave out --thermal-gate")).into());
    }
    let versions = check_servers(file, &variants, &common, &mut Probes::default())?;
    // The source's refresh measured and the rate bounded by it (docs/methodology.md §9.2).
    let (gpu, telemetry_hz, telemetry_desc) = match gpu {
        Some(g) => {
            let (g, hz, desc, line) = crate::telemetry::refresh::study_rate(g, file.telemetry_hz, telemetry_desc);
            if let Some(line) = line {
                eprintln!("abprof: {line}");
            }
            (Some(g), hz, desc)
        }
        None => (None, file.telemetry_hz, telemetry_desc),
    };
    let mut telemetry = TelemetrySlot::new(gpu, f64::from(telemetry_hz));
    // Every variant's devices are known before anything is created (docs/methodology.md §9.11):
    // one the telemetry cannot meter is the user's to change (exit 2).
    for v in &variants {
        telemetry
            .devices_of(&v.server_args(&file.model, &common), &v.env)
            .map_err(|e| Refusal::of(format!("variant {}: {e}", v.label)))?;
    }
    // A port the study fixes that something else holds is the user's to change (exit 2).
    let port = StudyPort::new(file.port).map_err(|e| match e {
        e @ ServerError::PortInUse { .. } => anyhow::Error::from(Refusal::of(e)),
        e => e.into(),
    })?;
    let ev = if resume { Evidence::open(root)? } else { Evidence::create(root)? }.lock()?;
    let checked = (variants.as_slice(), common.as_slice(), versions.as_slice());
    let (mut plan, mut binaries) = if resume {
        let plan: Plan = ev.read_plan()?;
        (plan, record_facts(&ev, file, checked, resume, &telemetry_desc)?)
    } else {
        start(&ev, file, checked, &telemetry_desc, config).map_err(|e| {
            on_full_disk(e, || {
                format!(
                    "the disk holding {} is full, so the study did not start: free space, then run the same command again (it reuses the folder)",
                    ev.root.display()
                )
            })
        })?
    };

    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    let hooks = Arc::new(Hooks::new(&ev, &file.isolation));
    recover_previous_run(&ev, &hooks);
    // Declared before the restore guard, so dropped after it: run.json goes only once the
    // restore ran, on every exit path a process survives.
    let run_file = std::sync::Mutex::new(RunFile::begin(&ev)?);
    let restore = hooks.restore_guard();
    // The one signal listener: the number that interrupted the study, watched by the sample
    // loop, and a flag for loads that block (a Pi process).
    let stop = crate::stop_signal::StopSignal::listen(&rt)?;
    let (signal, cancel) = (stop.watch(), stop.flag());
    // After the runtime and the listener exist, so their threads move too (§2.1).
    if let Some(server) = file.server_cpus() {
        match crate::server::placement::keep_abprof_off(&server) {
            Some(own) => eprintln!("abprof: servers on CPUs {server}, abprof's own threads on CPUs {own}"),
            None => {
                eprintln!("abprof: servers on CPUs {server}, which are all of this host's: abprof's threads share them")
            }
        }
    }
    // The planned samples, then (adaptive studies) one more block at a time while the
    // configuration asks for it; the hooks, listener and restore guard span them all.
    let mut taken = 0;
    // A resumed study's ETA starts from the samples it already took.
    let earlier =
        ev.order().iter().filter(|o| o.status == AttemptStatus::Ok).map(|o| o.timeline.total_ms / 1e3).collect();
    let mut progress = StudyProgress::new(earlier);
    let state = RunState { hooks: &hooks, run_file: &run_file, attempted: Default::default() };
    let result = loop {
        let ctx = StudyContext {
            file,
            evidence: &ev,
            plan: &plan,
            variants: &variants,
            common_args: &common,
            port: &port,
            cancel: &cancel,
        };
        match rt.block_on(drive(&ctx, config, &state, &mut telemetry, &mut binaries, &mut progress, signal.clone())) {
            Ok(n) => taken += n,
            Err(e) => break Err(e),
        }
        if *signal.borrow() != 0 {
            break Ok(());
        }
        let why = match config.another_block(&ctx) {
            Ok(Some(why)) => why,
            Ok(None) => break Ok(()),
            Err(e) => break Err(e),
        };
        plan.add_block(variants.len(), why);
        if let Err(e) = ev.write_plan(&plan) {
            break Err(e.into());
        }
    };
    progress.finish();
    let restored = restore.finish();
    result.map_err(|e| {
        on_full_disk(e, || {
            let root = ev.root.display();
            format!("the disk holding {root} is full: free space, then `--resume {root}` continues the study (every finished sample is kept)")
        })
    })?;
    let outcome = match *signal.borrow() {
        0 => Outcome::Completed,
        n => Outcome::Interrupted(n),
    };
    Ok(StudyRun { outcome, evidence: ev, restored, samples_taken: taken })
}

/// A new study's first files. `plan.json` is written last: a folder without it is a start that
/// failed (a full disk, say), which the next run with the same `--root` reuses.
fn start<C: StudyConfig>(
    ev: &Evidence,
    file: &StudyFile,
    checked: Checked,
    telemetry: &str,
    config: &C,
) -> Result<(Plan, Vec<VariantFiles>)> {
    let toml = ev.study_toml();
    crate::atomic_file::write_atomic(&toml, file.to_toml().as_bytes())
        .map_err(|e| super::evidence::EvidenceError::Write { path: toml, source: e })?;
    let binaries = record_facts(ev, file, checked, false, telemetry)?;
    let plan = config.plan(file, checked.0);
    ev.write_plan(&plan)?;
    Ok((plan, binaries))
}

/// `e` led by `what_to_do` when a full disk (or an exhausted quota) caused it: the io error alone
/// names neither the fix nor what became of the study.
fn on_full_disk(e: anyhow::Error, what_to_do: impl FnOnce() -> String) -> anyhow::Error {
    let full = e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .and_then(std::io::Error::raw_os_error)
            .is_some_and(|n| n == nix::libc::ENOSPC || n == nix::libc::EDQUOT)
    });
    if full {
        e.context(what_to_do())
    } else {
        e
    }
}

/// A run that died without its restore (SIGKILL, a crash) left `run.json`: say so, stop a server
/// of this study that outlived it, then run the restore it never ran (docs/methodology.md §6).
fn recover_previous_run(ev: &Evidence, hooks: &Arc<Hooks>) {
    let Some(prev) = super::run_record::previous(ev) else { return };
    eprintln!(
        "abprof: the previous run of {} (pid {}) ended without restoring (killed?): running its restore hooks now",
        ev.root.display(),
        prev.abprof_pid
    );
    if let Some(server) = &prev.server {
        let pids = super::run_record::leftover_servers(server.pgid, &ev.root);
        if !pids.is_empty() {
            let n = super::run_record::stop_leftovers(&pids);
            eprintln!(
                "abprof: stopped {n} leftover server process(es) of this study (process group {}, sample {})",
                server.pgid,
                relative(ev, &server.sample_dir)
            );
        }
    }
    hooks.restore_guard().finish();
}

fn relative(ev: &Evidence, dir: &Path) -> String {
    dir.strip_prefix(&ev.root).unwrap_or(dir).display().to_string()
}

/// What one run of the study keeps across its blocks: the isolation hooks around every sample and
/// `run.json`, which names the server in flight for a run that is killed (docs/methodology.md §6),
/// and the slots this run has attempted.
struct RunState<'g> {
    hooks: &'g Hooks,
    run_file: &'g std::sync::Mutex<RunFile>,
    /// An errored sample is measured again only by a later run (a resume, §5): within one run a
    /// block added after it (a retake, an adaptive block) never re-measures it, or its crash would
    /// be hidden as a superseded attempt (§7.19: `incomplete` is never retaken).
    attempted: std::cell::RefCell<std::collections::HashSet<usize>>,
}

async fn drive<C: StudyConfig>(
    ctx: &StudyContext<'_>,
    config: &mut C,
    RunState { hooks, run_file, attempted }: &RunState<'_>,
    telemetry: &mut TelemetrySlot,
    binaries: &mut [VariantFiles],
    progress: &mut StudyProgress,
    mut signal: tokio::sync::watch::Receiver<i32>,
) -> Result<usize> {
    let (ev, plan) = (ctx.evidence, ctx.plan);
    let todo: Vec<Slot> = ev
        .samples(plan)
        .into_iter()
        .filter(|f| f.sample.as_ref().is_none_or(|s| s.error.is_some() && !attempted.borrow().contains(&f.slot.index)))
        .map(|f| f.slot)
        .collect();
    if todo.is_empty() {
        return Ok(0);
    }
    let before = hooks.before(ctx.cancel);
    if ctx.cancelled() {
        return Ok(0);
    }
    before.map_err(|e| anyhow!(e))?;
    // Under the study's isolation and before any of its servers runs (docs/methodology.md §18).
    let gpu = telemetry.kind();
    tokio::task::block_in_place(|| super::roofline::record(ev, ctx.file, ctx.variants, ctx.common_args, gpu))?;
    // Under the listener: a calibration starts a server of its own, and a signal while it loads
    // must end it at once (dropping the future stops that server), as it ends a sample.
    tokio::select! {
        r = config.prepare(ctx) => r?,
        _ = signal.changed() => return Ok(0),
    }

    progress.block(plan.slots.len(), todo.len());
    let mut taken = 0;
    for (i, slot) in todo.iter().enumerate() {
        if ctx.cancelled() {
            break;
        }
        let label = &plan.labels[slot.variant];
        let t0 = Instant::now();
        let started_at = now();
        if i > 0 {
            // A signal during the hooks ends them, and no server starts after them.
            let before = hooks.before(ctx.cancel);
            if ctx.cancelled() {
                break;
            }
            before.map_err(|e| anyhow!(e))?;
        }
        let hooks_ms = t0.elapsed().as_secs_f64() * 1e3;
        attempted.borrow_mut().insert(slot.index);
        binaries[slot.variant].check().map_err(|c| anyhow!(c.describe(label)))?;
        ctx.port.ensure_free().map_err(|e| anyhow!(e).context(format!("sample {} ({label})", slot.index + 1)))?;
        let dir = ev.sample_dir(plan, slot);
        if dir.exists() {
            ev.set_aside(&dir)?;
        }
        let files = SampleFolder::at(&dir).files();
        let spec = config.spec(ctx, slot, &files)?;
        let mut load = config.load(ctx, slot)?;
        let traced = plan.is_traced(slot);
        let on_phase = |label: &str, phase: SamplePhase| config.phase(label, traced, phase);
        let sink = progress.sink(&on_phase);
        let in_flight = dir.clone();
        let devices = telemetry.devices_of(&spec.launch.args, &spec.launch.env).map_err(|e| anyhow!("{label}: {e}"))?;
        let mut observer = StudyObserver::new(label, &ctx.file.idle, &sink, telemetry, dir.clone(), devices)
            .on_spawn(move |pid| {
                let server = InFlight { pid, pgid: pid, sample_dir: in_flight.clone() };
                run_file.lock().unwrap().set_server(Some(server));
            })
            .cancel_on(ctx.cancel.clone());
        let outcome = tokio::select! {
            r = run_sample(&spec, &files, &mut load, &mut observer) => Some(r),
            _ = signal.changed() => None,
        };
        let mut entry = OrderEntry {
            index: slot.index,
            label: label.clone(),
            repeat: slot.repeat,
            dir: relative(ev, &dir),
            started_at,
            ended_at: String::new(),
            status: AttemptStatus::Ok,
            timeline: Timeline { hooks_ms, idle_gate_ms: observer.gate_ms, ..Timeline::default() },
        };
        drop(observer);
        run_file.lock().unwrap().set_server(None);
        match outcome {
            None | Some(Err(SampleError::Interrupted)) => {
                entry.status = AttemptStatus::Interrupted;
                entry.ended_at = now();
                ev.append_order(&entry)?;
                break;
            }
            Some(Err(e)) => {
                entry.status = AttemptStatus::Error;
                entry.ended_at = now();
                // The sample's own error is the cause to report, even when its order line cannot
                // be written either (a full disk fails both).
                let _ = ev.append_order(&entry);
                return Err(anyhow!(e).context(format!("sample {} ({label})", slot.index + 1)));
            }
            Some(Ok(mut sample)) => {
                let changed = binaries[slot.variant].check().err();
                if let Some(c) = &changed {
                    c.mark(&mut sample.extra);
                }
                // Read after the request, outside its timing (docs/methodology.md §7.17).
                sample.extra.power_state = Some(crate::telemetry::power_state::PowerState::conditions_of_host());
                save_record(&files, &sample)?;
                let t = &mut entry.timeline;
                t.startup_ms = sample.startup_ms.unwrap_or(0.0);
                t.request_ms = match (sample.request_start, sample.response_end) {
                    (Some(a), Some(b)) => a.ms_until(&b),
                    _ => sample.extra.pi.as_ref().map_or(0.0, |p| p.pi_wall_ms),
                };
                t.stop_ms = sample.stop.as_ref().map_or(0.0, |s| s.stop_ms);
                t.total_ms = t0.elapsed().as_secs_f64() * 1e3;
                t.dead_ms = t.total_ms - t.startup_ms - t.request_ms;
                entry.status =
                    if sample.error.is_some() || changed.is_some() { AttemptStatus::Error } else { AttemptStatus::Ok };
                entry.ended_at = now();
                ev.append_order(&entry)?;
                if let Some(c) = changed {
                    bail!(c.describe(label));
                }
                taken += 1;
                let line = SampleLine {
                    slot,
                    label,
                    planned: plan.slots.len(),
                    seconds: entry.timeline.total_ms / 1e3,
                    gate_seconds: entry.timeline.idle_gate_ms / 1e3,
                    traced,
                    rejections: config.rejections(ctx, &dir),
                };
                progress.taken(&line, todo.len() - i - 1);
                config.after_sample(ctx, slot, &sample)?;
                // Every file of the sample is written: its seal lets a later reader tell these
                // files from edited ones (docs/methodology.md §7.21).
                super::seal::seal(&dir).with_context(|| format!("sealing {}", dir.display()))?;
            }
        }
    }
    Ok(taken)
}

/// The folder a sample of `slot` is written to, for configurations that name files beside it.
pub(crate) fn sample_files(ctx: &StudyContext<'_>, slot: &Slot) -> SampleFiles {
    SampleFolder::at(&ctx.evidence.sample_dir(ctx.plan, slot)).files()
}
