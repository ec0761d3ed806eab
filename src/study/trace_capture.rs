//! `abprof trace` as a configuration of the study loop: samples of every variant run under a
//! kernel tracer (one block of them first; with `--traced N`, N blocks spread among the untraced
//! ones), and untraced samples of every variant at the same output length run interleaved under
//! exactly the study's conditions (hooks, idle gate, telemetry, rules), so the traces' shares can
//! be scaled by an honest ms/token (docs/methodology.md §10).
//!
//! The traced sample stops the server with exactly one SIGTERM and waits — patiently — for the
//! tracer to write its output. rocprofv3 `exec`s the application, so the PID abprof spawned *is*
//! the server; with `--disable-signal-handlers` it finalizes from `atexit` after llama-server's
//! clean exit. A second signal would make llama-server `exit(1)` and a SIGKILL would lose the
//! trace, so a tracer that outlives the finalize timeout is left running and reported, never
//! killed.
use super::chat::ChatStudy;
use super::drive::{StudyConfig, StudyContext};
use super::evidence::{NextBlock, Plan, SampleLayout};
use super::file::{StudyFile, TracerCommand};
use super::judge::Judge;
use super::trace_folder::TraceFolder;
use crate::measure::{AttachedLoad, ChatLoad, Sample, SampleFiles, SamplePhase, SampleSpec};
use crate::schedule::{interleaved, Slot};
use crate::trace::manifest::{TraceManifest, TracedRun, UntracedSamples};
use crate::trace::phase::BootWindow;
use crate::variant::Variant;
use anyhow::{bail, Context, Result};
use regex::Regex;
use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Shows how long the tracer has been finalizing and how big its output is, while abprof waits.
struct FinalizeWatch {
    running: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

fn dir_bytes(dir: &Path) -> u64 {
    walk(dir).iter().filter_map(|p| std::fs::metadata(p).ok()).map(|m| m.len()).sum()
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(walk(&p));
            } else {
                out.push(p);
            }
        }
    }
    out
}

impl FinalizeWatch {
    fn start(out: PathBuf, label: String) -> FinalizeWatch {
        let running = Arc::new(AtomicBool::new(true));
        let flag = running.clone();
        let (o, l) = (out, label);
        let thread = std::thread::spawn(move || {
            let t0 = Instant::now();
            let mut next = Duration::from_secs(2);
            while flag.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(50));
                if t0.elapsed() >= next {
                    eprintln!(
                        "abprof trace: {l}: one SIGTERM sent; waiting for the tracer to finish writing ({:.0} s, {:.1} MB so far)",
                        t0.elapsed().as_secs_f64(),
                        dir_bytes(&o) as f64 / 1e6
                    );
                    next += Duration::from_secs(5);
                }
            }
        });
        FinalizeWatch { running, thread: Some(thread) }
    }
}

impl Drop for FinalizeWatch {
    fn drop(&mut self) {
        self.running.store(false, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

static OPENED: std::sync::LazyLock<Regex> =
    std::sync::LazyLock::new(|| Regex::new(r"Opened result file: (\S+)").unwrap());

/// The trace file the tracer wrote: the path it logged, else the documented names, else any
/// trace-looking file in its output folder. An Nsight report is exported to SQLite first.
fn find_output(tracer: &TracerCommand, console: &Path, out: &Path) -> Result<PathBuf> {
    let text = std::fs::read_to_string(console).unwrap_or_default();
    let logged: Vec<PathBuf> =
        OPENED.captures_iter(&text).map(|c| PathBuf::from(&c[1])).filter(|p| p.is_file()).collect();
    let files = walk(out);
    let by_ext = |ext: &str| files.iter().find(|p| p.to_string_lossy().ends_with(ext)).cloned();
    let found = logged
        .into_iter()
        .find(|p| !p.to_string_lossy().ends_with(".pftrace"))
        .or_else(|| Some(out.join("trace_results.db")).filter(|p| p.is_file()))
        .or_else(|| by_ext("_results.db"))
        .or_else(|| by_ext("kernel_trace.csv"))
        .or_else(|| by_ext(".sqlite"))
        .or_else(|| by_ext(".nsys-rep"));
    let Some(path) = found else {
        bail!(
            "the tracer wrote no trace under {} (no \"Opened result file\" line in {}): check the tracer's output there",
            out.display(),
            console.display()
        );
    };
    if path.extension().is_some_and(|e| e == "nsys-rep") {
        let nsys = match tracer {
            TracerCommand::Nsys { program } => program.clone(),
            _ => PathBuf::from("nsys"),
        };
        let sqlite = path.with_extension("sqlite");
        let st = std::process::Command::new(&nsys)
            .args(["export", "--type", "sqlite", "--force-overwrite", "true", "--output"])
            .arg(&sqlite)
            .arg(&path)
            .stdin(std::process::Stdio::null())
            .output()
            .with_context(|| format!("running {} export", nsys.display()))?;
        if !st.status.success() || !sqlite.is_file() {
            bail!(
                "`nsys export --type sqlite` failed on {}: {}",
                path.display(),
                String::from_utf8_lossy(&st.stderr).trim()
            );
        }
        return Ok(sqlite);
    }
    Ok(path)
}

/// A trace study: the chat A/B configuration plus traced samples of every variant.
pub(crate) struct TraceStudy {
    chat: ChatStudy,
    tracer: TracerCommand,
    finalize_timeout: Duration,
    watch: RefCell<Option<FinalizeWatch>>,
    /// The tracer output folder of the traced sample being taken, for the finalize watch.
    tracing_into: RefCell<Option<PathBuf>>,
}

impl TraceStudy {
    /// `judge` retakes the untraced blocks a rule about the host spoiled (docs/methodology.md
    /// §7.19), as in an A/B study.
    pub(crate) fn new(file: &StudyFile, judge: Option<Judge>) -> Result<TraceStudy> {
        let Some(t) = file.kind.trace() else {
            bail!(
                "{} is not a trace study: `abprof {}` runs it",
                file.kind.name().a_study(),
                file.kind.name().command()
            )
        };
        Ok(TraceStudy {
            chat: ChatStudy::judged_by(judge),
            tracer: t.tracer.clone(),
            finalize_timeout: Duration::from_secs(t.finalize_timeout_s),
            watch: RefCell::new(None),
            tracing_into: RefCell::new(None),
        })
    }

    /// The untraced sample's spec with the tracer wrapped around the server.
    fn traced_spec(&self, ctx: &StudyContext<'_>, slot: &Slot, files: &SampleFiles) -> Result<SampleSpec> {
        let out = capture(ctx, slot).tracer_out(slot.repeat);
        std::fs::create_dir_all(&out).with_context(|| format!("cannot create {}", out.display()))?;
        *self.tracing_into.borrow_mut() = Some(out.clone());
        let mut spec = self.chat.spec(ctx, slot, files)?;
        // An attaching tracer leaves the server as it is, with the one variable that lets it attach;
        // the server stops like an untraced one, the tracer having detached after the request.
        if self.tracer.attaches() {
            let (k, v) = crate::measure::ATTACH_ENV;
            spec.launch.env.push((k.into(), v.into()));
            spec.expect = None;
            return Ok(spec);
        }
        let launch = &mut spec.launch;
        let (program, mut args) = self.tracer.prefix(&out);
        // nsys keeps the server as its child and writes its report once the child has exited: the
        // one SIGTERM goes to the server. rocprofv3 execs the server, so its pid is the server's.
        if matches!(self.tracer, TracerCommand::Nsys { .. }) {
            launch.signal_descendant = launch.program.file_name().map(|n| n.to_string_lossy().to_string());
        }
        args.push(launch.program.display().to_string());
        args.append(&mut launch.args);
        (launch.program, launch.args) = (program, args);
        // A tracer finalizes after the server's exit: wait, never kill (that would lose the trace).
        spec.stop_timeout = self.finalize_timeout;
        spec.kill_on_stop_timeout = false;
        // expect= is judged on the untraced samples, which the rules accept or reject.
        spec.expect = None;
        Ok(spec)
    }

    fn manifest(&self, ctx: &StudyContext<'_>, slot: &Slot, sample: &Sample, files: &SampleFiles) -> Result<()> {
        let v = &ctx.variants[slot.variant];
        let capture = capture(ctx, slot);
        let folder = capture.dir();
        if let Some(e) = &sample.error {
            bail!("traced run of {}: {e} (evidence in {})", v.label, files.dir.display());
        }
        let out = capture.tracer_out(slot.repeat);
        let console = self.tracer.attach_log(&out).unwrap_or_else(|| files.console_log());
        let trace = find_output(&self.tracer, &console, &out)?;
        // One parallel pass proves the file readable and not empty; attribution comes later.
        let kernels = crate::trace::detect::open_trace(&trace)
            .and_then(|source| source.aggregate(None))
            .with_context(|| format!("the trace {} is not readable", trace.display()))?
            .total()
            .calls;
        if kernels == 0 {
            bail!("the trace {} holds no kernels: was the tracer attached to the server?", trace.display());
        }
        let window = |a: Option<crate::clock::Stamp>, b: Option<crate::clock::Stamp>| match (a, b) {
            (Some(a), Some(b)) => Some(BootWindow { start_ns: a.boot_ns, end_ns: b.boot_ns }),
            _ => None,
        };
        let run = TracedRun {
            trace_file: trace.strip_prefix(folder).map(Path::to_path_buf).unwrap_or(trace.clone()),
            decode_window: window(sample.first_token, sample.last_token),
            prefill_window: window(sample.request_start, sample.first_token),
            traced_ms_per_token: sample.server.as_ref().map(|t| 1000.0 / t.decode_tps).filter(|x| x.is_finite()),
        };
        if slot.repeat > 0 {
            let mut manifest = capture.read_manifest()?;
            manifest.set_run(slot.repeat, run)?;
            capture.write_manifest(&manifest)?;
            return Ok(());
        }
        let manifest = TraceManifest {
            label: v.label.clone(),
            variant: v.spec.clone(),
            tracer: self.tracer.kind(),
            trace_file: run.trace_file,
            prompt_tokens: sample.prompt_tokens().unwrap_or(0) as u32,
            output_tokens: sample.completion_tokens().unwrap_or(0) as u32,
            decode_window: run.decode_window,
            prefill_window: run.prefill_window,
            untraced: None,
            created_at: chrono::Utc::now(),
            traced_ms_per_token: run.traced_ms_per_token,
            more_traces: Vec::new(),
            speculation: crate::variant::draft_context_requested(&sample.server_argv),
            model_layers: model_layers(&sample.server_argv),
            // The host's power state (host.json) names the driver and runtime; a sample's reads
            // only the conditions that may change between samples.
            runtime: ctx.evidence.read_host().ok().and_then(|h| h.power).and_then(|p| p.runtime()),
            runtime_libraries: sample.extra.runtime.clone(),
            dispatch_reference: None,
        };
        capture.write_manifest(&manifest)?;
        Ok(())
    }
}

/// The served model's layer count (its GGUF's `<arch>.block_count`; the server's log prints it
/// only at `-lv 4`): the floor of a complete decode's dispatches per token (docs/methodology.md
/// §10 "complete traces"). `None` where the header cannot be read: that trace is not checked.
fn model_layers(server_argv: &[String]) -> Option<u32> {
    let model = server_argv.windows(2).find(|w| w[0] == "-m" || w[0] == "--model").map(|w| Path::new(&w[1]))?;
    let header = crate::roofline::gguf::GgufHeader::read(model).ok()?;
    u32::try_from(header.require("block_count").ok()?).ok()
}

/// The capture folder of the slot's variant: `LABEL/` of the trace study's folder.
fn capture(ctx: &StudyContext<'_>, slot: &Slot) -> TraceFolder {
    TraceFolder::of(&ctx.evidence.traces_dir(&ctx.file.kind), &ctx.plan.labels[slot.variant])
}

/// The run order of a trace study: `untraced` interleaved blocks of every variant (indices as
/// [`interleaved`] gives them) with `traced` blocks of traced samples spread among them, the
/// first block traced. Traced block k sits at block ⌊k·B/traced⌋ of the B blocks and alternates
/// direction like the untraced ones; with one, it is the plan of earlier releases.
fn trace_plan(variants: usize, traced: usize, untraced: usize, seed: Option<u64>) -> (Vec<Slot>, Vec<usize>) {
    let blocks = traced + untraced;
    let traced_at: Vec<usize> = (0..traced).map(|k| k * blocks / traced).collect();
    let plain = interleaved(variants, untraced, seed);
    let mut plain = plain.chunks(variants.max(1));
    let (mut slots, mut traced_slots) = (Vec::new(), Vec::new());
    let mut k = 0;
    for b in 0..blocks {
        if traced_at.contains(&b) {
            let mut ids: Vec<usize> = (0..variants).collect();
            if k % 2 == 1 {
                ids.reverse();
            }
            for v in ids {
                traced_slots.push(slots.len());
                slots.push(Slot { index: slots.len(), variant: v, repeat: k });
            }
            k += 1;
        } else if let Some(block) = plain.next() {
            for s in block {
                slots.push(Slot { index: slots.len(), ..*s });
            }
        }
    }
    (slots, traced_slots)
}

/// The untraced samples' measured ms/token into each variant's manifest: `per_variant[i]` holds
/// variant i's accepted (rule-judged) samples, at the study's output length.
pub(crate) fn attach_untraced(
    root: &Path,
    labels: &[String],
    tokens: u32,
    per_variant: &[Vec<f64>],
) -> Result<Vec<(PathBuf, TraceManifest)>> {
    let mut out = Vec::new();
    for (label, ms) in labels.iter().zip(per_variant) {
        let capture = TraceFolder::of(root, label);
        let mut m = capture.read_manifest()?;
        m.untraced = UntracedSamples::from_samples(tokens, ms.clone());
        capture.write_manifest(&m)?;
        out.push((capture.dir().to_path_buf(), m));
    }
    Ok(out)
}

impl StudyConfig for TraceStudy {
    type Load = AttachedLoad<ChatLoad>;

    /// Traced blocks of every variant spread among the untraced blocks, a traced one first.
    fn plan(&self, file: &StudyFile, variants: &[Variant]) -> Plan {
        let traced = file.kind.trace().map_or(1, |t| t.traced.max(1) as usize);
        let (slots, traced) = trace_plan(variants.len(), traced, file.samples as usize, file.order_seed);
        Plan {
            labels: variants.iter().map(|v| v.label.clone()).collect(),
            order_seed: file.order_seed,
            slots,
            layout: SampleLayout::Study,
            traced,
            retakes: 0,
        }
    }

    async fn prepare(&mut self, ctx: &StudyContext<'_>) -> Result<()> {
        self.chat.prepare(ctx).await
    }

    fn spec(&self, ctx: &StudyContext<'_>, slot: &Slot, files: &SampleFiles) -> Result<SampleSpec> {
        if ctx.plan.is_traced(slot) {
            self.traced_spec(ctx, slot, files)
        } else {
            self.chat.spec(ctx, slot, files)
        }
    }

    /// The chat load; a traced sample's with the tracer attached around its request when the
    /// tracer attaches.
    fn load(&self, ctx: &StudyContext<'_>, slot: &Slot) -> Result<AttachedLoad<ChatLoad>> {
        let attach = ctx
            .plan
            .is_traced(slot)
            .then(|| self.tracer.attaching(&capture(ctx, slot).tracer_out(slot.repeat), self.finalize_timeout))
            .flatten();
        Ok(AttachedLoad::new(self.chat.load(ctx, slot)?, attach))
    }

    /// An untraced block a rule about the host spoiled is retaken (docs/methodology.md §7.19):
    /// the traces are scaled by the untraced samples, so they need their planned count.
    fn another_block(&mut self, ctx: &StudyContext<'_>) -> Result<Option<NextBlock>> {
        self.chat.another_block(ctx)
    }

    fn rejections(&self, ctx: &StudyContext<'_>, sample_dir: &Path) -> Option<Vec<String>> {
        self.chat.rejections(ctx, sample_dir)
    }

    fn phase(&self, label: &str, traced: bool, phase: SamplePhase) {
        // An attached tracer detached before the stop: nothing finalizes at the server's exit.
        if traced && phase == SamplePhase::Stopping && self.watch.borrow().is_none() && !self.tracer.attaches() {
            if let Some(out) = self.tracing_into.borrow().clone() {
                *self.watch.borrow_mut() = Some(FinalizeWatch::start(out, label.to_string()));
            }
        }
    }

    fn after_sample(&mut self, ctx: &StudyContext<'_>, slot: &Slot, sample: &Sample) -> Result<()> {
        self.watch.borrow_mut().take();
        self.tracing_into.borrow_mut().take();
        if ctx.plan.is_traced(slot) {
            self.manifest(ctx, slot, sample, &super::drive::sample_files(ctx, slot))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_without_a_readable_model_gives_no_layer_count() {
        let argv = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(model_layers(&argv(&["--port", "8080"])), None);
        assert_eq!(model_layers(&argv(&["-m", "/nonexistent/model.gguf"])), None);
        let not_gguf = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
        assert_eq!(model_layers(&argv(&["--model", not_gguf.to_str().unwrap()])), None);
    }

    fn order(slots: &[Slot], traced: &[usize]) -> String {
        slots
            .iter()
            .map(|s| {
                let c = (b'a' + s.variant as u8) as char;
                if traced.contains(&s.index) {
                    c.to_ascii_uppercase()
                } else {
                    c
                }
            })
            .collect()
    }

    #[test]
    fn one_traced_block_leads_as_before_and_more_are_spread_among_the_untraced() {
        // Upper case: traced. One traced block: the plan of earlier releases.
        let (slots, traced) = trace_plan(2, 1, 3, None);
        assert_eq!(order(&slots, &traced), "ABabbaab");
        assert_eq!(traced, vec![0, 1]);
        let (slots, traced) = trace_plan(2, 2, 2, None);
        assert_eq!(order(&slots, &traced), "ABabBAba");
        let (slots, traced) = trace_plan(2, 3, 3, None);
        assert_eq!(order(&slots, &traced), "ABabBAbaABab");
        assert!(slots.iter().enumerate().all(|(i, s)| s.index == i));
        let repeats = |v: usize, t: bool| -> Vec<usize> {
            slots.iter().filter(|s| s.variant == v && traced.contains(&s.index) == t).map(|s| s.repeat).collect()
        };
        assert_eq!((repeats(1, true), repeats(1, false)), (vec![0, 1, 2], vec![0, 1, 2]));
        // The untraced blocks keep their seeded shuffle.
        let (slots, traced) = trace_plan(3, 2, 4, Some(9));
        let untraced: Vec<usize> = slots.iter().filter(|s| !traced.contains(&s.index)).map(|s| s.variant).collect();
        assert_eq!(untraced, interleaved(3, 4, Some(9)).iter().map(|s| s.variant).collect::<Vec<_>>());
        assert_eq!(traced.len(), 6);
    }

    #[test]
    fn a_retaken_block_follows_the_traced_plan_and_is_the_next_untraced_block() {
        let (slots, traced) = trace_plan(2, 2, 2, None);
        let mut plan = Plan {
            labels: vec!["a".into(), "b".into()],
            order_seed: None,
            slots,
            layout: SampleLayout::Study,
            traced,
            retakes: 0,
        };
        plan.add_block(2, NextBlock::Retake);
        assert_eq!(order(&plan.slots, &plan.traced), "ABabBAbaab");
        assert!(plan.slots.iter().enumerate().all(|(i, s)| s.index == i));
        assert_eq!((plan.blocks(), plan.counted_blocks(), plan.retakes), (3, 2, 1));
        assert_eq!(plan.traced, vec![0, 1, 4, 5]);
        // Seeded: the added block is the one a plan of one more untraced block would have had.
        let (slots, traced) = trace_plan(3, 1, 2, Some(5));
        let mut plan = Plan { slots, traced, order_seed: Some(5), ..plan };
        plan.add_block(3, NextBlock::Retake);
        let untraced: Vec<usize> = plan.slots.iter().filter(|s| !plan.is_traced(s)).map(|s| s.variant).collect();
        assert_eq!(untraced, interleaved(3, 3, Some(5)).iter().map(|s| s.variant).collect::<Vec<_>>());
    }
}
