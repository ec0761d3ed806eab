//! Runs a study: per planned slot, isolation hooks → cold variant on the isolated port → health →
//! idle gate → one request → stop → parse → record. Restore hooks run on every exit path, and a
//! SIGINT/SIGTERM to abprof stops the sample in flight, restores, and leaves a resumable study.
use super::evidence::{read_json, write_json, Evidence, OrderEntry, Plan, Timeline};
use super::facts::{host_facts, variant_facts, VariantFacts};
use super::file::StudyFile;
use super::isolation::Hooks;
use super::observer::{open_gpu_source, PhaseSink, StudyObserver, TelemetrySlot};
use crate::client::calibrate::{save as save_prompt, sidecar_path, DEFAULT_SOURCE};
use crate::client::ChatRequest;
use crate::measure::calibrate::calibrate_on_fresh_server;
use crate::measure::{run_sample, SampleFiles, SamplePhase, SampleSpec};
use crate::schedule::{interleaved, Slot};
use crate::server::{free_port, LaunchSpec};
use crate::variant::{parse_variants, split_args, Variant};
use anyhow::{anyhow, bail, Context, Result};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Completed,
    /// Stopped by this signal number (SIGINT 2, SIGTERM 15).
    Interrupted(i32),
}

pub struct StudyRun {
    pub outcome: Outcome,
    pub evidence: Evidence,
    pub restored: bool,
    pub samples_taken: usize,
}

/// Where progress goes: an indicatif bar on a terminal, nothing otherwise.
pub struct Progress {
    bar: indicatif::ProgressBar,
}

impl Progress {
    pub fn new(total: u64) -> Progress {
        let bar = indicatif::ProgressBar::with_draw_target(Some(total), indicatif::ProgressDrawTarget::stderr());
        bar.set_style(
            indicatif::ProgressStyle::with_template("{bar:30} sample {pos}/{len} · {msg} · ETA {eta}")
                .expect("valid template"),
        );
        Progress { bar }
    }
}

impl PhaseSink for Progress {
    fn phase(&self, label: &str, phase: SamplePhase) {
        self.bar.set_message(format!("{label}: {}", phase.name()));
    }
}

fn now() -> String {
    chrono::Local::now().to_rfc3339()
}

/// Parses and checks everything before any server starts.
fn prepare(file: &StudyFile) -> Result<(Vec<Variant>, Vec<String>)> {
    file.check()?;
    let variants = parse_variants(&file.variants)?;
    let common = split_args(&file.server_args).ok_or_else(|| {
        anyhow!("cannot split server_args {:?} like a shell would: check its quotes", file.server_args)
    })?;
    for v in &variants {
        let m = v.model_or(&file.model);
        if !m.is_file() {
            bail!("model {} (variant {}) does not exist: pass a GGUF file", m.display(), v.label);
        }
    }
    Ok((variants, common))
}

fn record_facts(
    ev: &Evidence,
    file: &StudyFile,
    variants: &[Variant],
    common: &[String],
    resume: bool,
    telemetry: &str,
) -> Result<()> {
    let mut facts = Vec::new();
    for v in variants {
        facts.push(
            variant_facts(v, &file.model, common).with_context(|| format!("variant {}: hashing its files", v.label))?,
        );
    }
    let path = ev.path("variants.json");
    if resume {
        let before: Vec<VariantFacts> = read_json(&path)?;
        for (old, new) in before.iter().zip(&facts) {
            for (what, a, b) in
                [("binary", &old.binary.sha256, &new.binary.sha256), ("model", &old.model.sha256, &new.model.sha256)]
            {
                if a != b {
                    bail!(
                        "variant {}'s {what} changed since the study started (sha256 {} → {}): a resumed study must measure the same bytes; start a new study",
                        new.label,
                        &a[..12],
                        &b[..12]
                    );
                }
            }
        }
    } else {
        write_json(&path, &facts)?;
        write_json(&ev.path("host.json"), &host_facts(Some(telemetry.into())))?;
    }
    Ok(())
}

async fn prompt_for(
    ev: &Evidence,
    file: &StudyFile,
    base: &Variant,
    common: &[String],
    port: u16,
) -> Result<(String, Option<u64>)> {
    let dst = ev.prompt();
    if dst.is_file() {
        let text = std::fs::read_to_string(&dst)?;
        return Ok((text, ev.expected_prompt_tokens(file)));
    }
    if let Some(src) = &file.prompt {
        let text = std::fs::read_to_string(src)
            .with_context(|| format!("cannot read prompt file {}: make one with `abprof calibrate`", src.display()))?;
        // The calibration record first, so a resume never reads a prompt without its count.
        if sidecar_path(src).is_file() {
            std::fs::copy(sidecar_path(src), sidecar_path(&dst))?;
        }
        crate::atomic_file::write_atomic(&dst, text.as_bytes())?;
        return Ok((text, ev.expected_prompt_tokens(file)));
    }
    let n = file.prompt_tokens.expect("checked: prompt or prompt_tokens");
    let launch = LaunchSpec::for_variant(base, &file.model, common, port, &ev.path("calibration"));
    let cal = calibrate_on_fresh_server(&launch, Duration::from_secs(file.health_timeout_s), DEFAULT_SOURCE, n)
        .await
        .with_context(|| format!("calibrating a {n}-token prompt on the baseline {}", base.label))?;
    save_prompt(&cal, &dst)?;
    Ok((cal.text, Some(n)))
}

/// Runs (or resumes) the study in `root`.
pub fn run_study(file: &StudyFile, root: &Path, resume: bool) -> Result<StudyRun> {
    let (variants, common) = prepare(file)?;
    let ev = if resume { Evidence::open(root)? } else { Evidence::create(root)? };
    let plan: Plan = if resume {
        read_json(&ev.path("plan.json"))?
    } else {
        crate::atomic_file::write_atomic(&ev.study_toml(), file.to_toml().as_bytes())?;
        let plan = Plan {
            labels: variants.iter().map(|v| v.label.clone()).collect(),
            order_seed: file.order_seed,
            slots: interleaved(variants.len(), file.samples as usize, file.order_seed),
        };
        write_json(&ev.path("plan.json"), &plan)?;
        plan
    };
    let (gpu, telemetry_desc) = open_gpu_source(&file.telemetry)
        .map_err(|e| anyhow!("{e}: pass --telemetry none to run without GPU telemetry"))?;
    record_facts(&ev, file, &variants, &common, resume, &telemetry_desc)?;
    let mut telemetry = TelemetrySlot { gpu, hz: file.telemetry_hz as f64 };

    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    let hooks = Arc::new(Hooks::new(&ev.root, &file.isolation));
    let restore = hooks.restore_guard();
    // The signal number that interrupted the study (0: none), watched by the sample loop.
    let (signal_tx, signal) = tokio::sync::watch::channel(0i32);
    {
        let _guard = rt.enter();
        let mut int = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())?;
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
        rt.spawn(async move {
            let n = tokio::select! { _ = int.recv() => 2, _ = term.recv() => 15 };
            let _ = signal_tx.send(n);
        });
    }

    let port = match file.port {
        Some(p) => p,
        None => free_port("127.0.0.1")?,
    };
    let result =
        rt.block_on(drive(file, &ev, &plan, (&variants, &common), &hooks, &mut telemetry, port, signal.clone()));
    let restored = restore.finish();
    let taken = result?;
    let outcome = match *signal.borrow() {
        0 => Outcome::Completed,
        n => Outcome::Interrupted(n),
    };
    Ok(StudyRun { outcome, evidence: ev, restored, samples_taken: taken })
}

async fn drive(
    file: &StudyFile,
    ev: &Evidence,
    plan: &Plan,
    (variants, common): (&[Variant], &[String]),
    hooks: &Hooks,
    telemetry: &mut TelemetrySlot,
    port: u16,
    mut signal: tokio::sync::watch::Receiver<i32>,
) -> Result<usize> {
    let interrupted = |s: &tokio::sync::watch::Receiver<i32>| *s.borrow() != 0;
    let todo: Vec<Slot> = ev
        .samples(plan)
        .into_iter()
        .filter(|f| f.sample.as_ref().is_none_or(|s| s.error.is_some()))
        .map(|f| f.slot)
        .collect();
    if todo.is_empty() {
        return Ok(0);
    }
    hooks.before().map_err(|e| anyhow!(e))?;
    if interrupted(&signal) {
        return Ok(0);
    }
    let (prompt, expected_prompt_tokens) = prompt_for(ev, file, &variants[0], common, port).await?;

    let progress = Progress::new(plan.slots.len() as u64);
    progress.bar.set_position((plan.slots.len() - todo.len()) as u64);
    let mut taken = 0;
    for (i, slot) in todo.iter().enumerate() {
        if interrupted(&signal) {
            break;
        }
        let v = &variants[slot.variant];
        let t0 = Instant::now();
        let started_at = now();
        if i > 0 {
            hooks.before().map_err(|e| anyhow!(e))?;
        }
        let hooks_ms = t0.elapsed().as_secs_f64() * 1e3;
        let dir = ev.sample_dir(slot, &v.label);
        if dir.exists() {
            ev.set_aside(&dir)?;
        }
        let files = SampleFiles::new(&dir);
        let mut request = ChatRequest::benchmark(&prompt, file.tokens);
        request.ignore_eos = file.ignore_eos.then_some(true);
        request.cache_prompt = file.pure_decode;
        let spec = SampleSpec {
            launch: LaunchSpec::for_variant(v, &file.model, common, port, &files.dir),
            request,
            expected_prompt_tokens,
            health_timeout: Duration::from_secs(file.health_timeout_s),
            stop_timeout: Duration::from_secs(60),
            kill_on_stop_timeout: true,
            warm_prompt_cache: file.pure_decode,
            expect: v.expect.as_deref().map(regex::Regex::new).transpose()?,
        };
        let mut observer = StudyObserver::new(&v.label, &file.idle, &progress, telemetry, dir.clone());
        let outcome = tokio::select! {
            r = run_sample(&spec, &files, &mut observer) => Some(r),
            _ = signal.changed() => None,
        };
        let mut entry = OrderEntry {
            index: slot.index,
            label: v.label.clone(),
            repeat: slot.repeat,
            dir: dir.strip_prefix(&ev.root).unwrap_or(&dir).display().to_string(),
            started_at,
            ended_at: String::new(),
            status: "ok".into(),
            timeline: Timeline { hooks_ms, idle_gate_ms: observer.gate_ms, ..Timeline::default() },
        };
        drop(observer);
        match outcome {
            None => {
                entry.status = "interrupted".into();
                entry.ended_at = now();
                ev.append_order(&entry)?;
                break;
            }
            Some(Err(e)) => {
                entry.status = "error".into();
                entry.ended_at = now();
                ev.append_order(&entry)?;
                return Err(anyhow!(e).context(format!("sample {} ({})", slot.index + 1, v.label)));
            }
            Some(Ok(sample)) => {
                let t = &mut entry.timeline;
                t.startup_ms = sample.startup_ms.unwrap_or(0.0);
                t.request_ms = match (sample.request_start, sample.response_end) {
                    (Some(a), Some(b)) => a.ms_until(&b),
                    _ => 0.0,
                };
                t.stop_ms = sample.stop.as_ref().map_or(0.0, |s| s.stop_ms);
                t.total_ms = t0.elapsed().as_secs_f64() * 1e3;
                t.dead_ms = t.total_ms - t.startup_ms - t.request_ms;
                entry.status = if sample.error.is_some() { "error".into() } else { "ok".into() };
                entry.ended_at = now();
                ev.append_order(&entry)?;
                taken += 1;
                progress.bar.inc(1);
            }
        }
    }
    progress.bar.finish_and_clear();
    Ok(taken)
}
