//! `abprof trace` as a configuration of the study loop: one sample of every variant runs under a
//! kernel tracer, then untraced samples of every variant at the same output length run
//! interleaved under exactly the study's conditions (hooks, idle gate, telemetry, rules), so the
//! trace's shares can be scaled by an honest ms/token (docs/methodology.md §10).
//!
//! The traced sample stops the server with exactly one SIGTERM and waits — patiently — for the
//! tracer to write its output. rocprofv3 `exec`s the application, so the PID abprof spawned *is*
//! the server; with `--disable-signal-handlers` it finalizes from `atexit` after llama-server's
//! clean exit. A second signal would make llama-server `exit(1)` and a SIGKILL would lose the
//! trace, so a tracer that outlives the finalize timeout is left running and reported, never
//! killed.
use super::chat::ChatStudy;
use super::drive::{StudyConfig, StudyContext};
use super::evidence::{Plan, SampleLayout};
use super::file::StudyFile;
use crate::measure::{ChatLoad, Sample, SampleFiles, SamplePhase, SampleSpec};
use crate::schedule::{interleaved, Slot};
use crate::trace::manifest::{TraceManifest, Tracer, UntracedSamples};
use crate::trace::phase::BootWindow;
use crate::variant::Variant;
use anyhow::{bail, Context, Result};
use regex::Regex;
use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Which tracer wraps the server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub(crate) enum TracerCommand {
    /// `rocprofv3 --disable-signal-handlers --kernel-trace --output-format rocpd -d OUT -o trace --`
    Rocprofv3 { program: PathBuf },
    /// `nsys profile -t cuda --cuda-graph-trace=node -o OUT/trace`, then `nsys export --type sqlite`.
    Nsys { program: PathBuf },
    /// A user template; `{out}` is replaced by the tracer's output folder and the server argv
    /// is appended.
    Template { argv: Vec<String> },
}

impl TracerCommand {
    pub(crate) fn kind(&self) -> Tracer {
        match self {
            TracerCommand::Rocprofv3 { .. } => Tracer::Rocprofv3,
            TracerCommand::Nsys { .. } => Tracer::Nsys,
            TracerCommand::Template { argv } => Tracer::Other(
                Path::new(&argv[0]).file_name().map_or("custom".into(), |n| n.to_string_lossy().to_string()),
            ),
        }
    }

    /// The tracer's program and its arguments up to (not including) the server argv.
    pub(crate) fn prefix(&self, out: &Path) -> (PathBuf, Vec<String>) {
        let o = out.display().to_string();
        match self {
            TracerCommand::Rocprofv3 { program } => (
                program.clone(),
                [
                    "--disable-signal-handlers",
                    "--kernel-trace",
                    "--output-format",
                    "rocpd",
                    "-d",
                    &o,
                    "-o",
                    "trace",
                    "--",
                ]
                .map(String::from)
                .to_vec(),
            ),
            TracerCommand::Nsys { program } => (
                program.clone(),
                vec![
                    "profile".into(),
                    "-t".into(),
                    "cuda".into(),
                    "--cuda-graph-trace=node".into(),
                    "--force-overwrite".into(),
                    "true".into(),
                    "-o".into(),
                    format!("{o}/trace"),
                ],
            ),
            TracerCommand::Template { argv } => {
                let v: Vec<String> = argv.iter().map(|a| a.replace("{out}", &o)).collect();
                (PathBuf::from(&v[0]), v[1..].to_vec())
            }
        }
    }
}

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

/// A trace study: the chat A/B configuration plus one traced sample of every variant first.
pub(crate) struct TraceStudy {
    chat: ChatStudy,
    tracer: TracerCommand,
    finalize_timeout: Duration,
    watch: RefCell<Option<FinalizeWatch>>,
    root: PathBuf,
}

impl TraceStudy {
    pub(crate) fn new(file: &StudyFile) -> Result<TraceStudy> {
        let t = file.trace.as_ref().context("not a trace study: its study file has no [trace] section")?;
        Ok(TraceStudy {
            chat: ChatStudy::default(),
            tracer: t.tracer.clone(),
            finalize_timeout: Duration::from_secs(t.finalize_timeout_s),
            watch: RefCell::new(None),
            root: PathBuf::new(),
        })
    }

    /// The untraced sample's spec with the tracer wrapped around the server.
    fn traced_spec(&self, ctx: &StudyContext<'_>, slot: &Slot, files: &SampleFiles) -> Result<SampleSpec> {
        let out = tracer_out(ctx, &ctx.plan.labels[slot.variant]);
        std::fs::create_dir_all(&out).with_context(|| format!("cannot create {}", out.display()))?;
        let mut spec = self.chat.spec(ctx, slot, files)?;
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

    fn manifest(&self, ctx: &StudyContext<'_>, v: &Variant, sample: &Sample, files: &SampleFiles) -> Result<()> {
        let folder = ctx.evidence.root.join(&v.label);
        if let Some(e) = &sample.error {
            bail!("traced run of {}: {e} (evidence in {})", v.label, files.dir.display());
        }
        let out = tracer_out(ctx, &v.label);
        let trace = find_output(&self.tracer, &files.console_log(), &out)?;
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
        let manifest = TraceManifest {
            label: v.label.clone(),
            variant: v.spec.clone(),
            tracer: self.tracer.kind(),
            trace_file: trace.strip_prefix(&folder).map(Path::to_path_buf).unwrap_or(trace.clone()),
            prompt_tokens: sample.prompt_tokens().unwrap_or(0) as u32,
            output_tokens: sample.completion_tokens().unwrap_or(0) as u32,
            decode_window: window(sample.first_token, sample.last_token),
            prefill_window: window(sample.request_start, sample.first_token),
            untraced: None,
            created_at: chrono::Utc::now(),
        };
        manifest.save(&folder)?;
        Ok(())
    }
}

fn tracer_out(ctx: &StudyContext<'_>, label: &str) -> PathBuf {
    ctx.evidence.root.join(label).join("tracer-out")
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
        let folder = root.join(label);
        let mut m = TraceManifest::load(&folder)?;
        m.untraced = UntracedSamples::from_samples(tokens, ms.clone());
        m.save(&folder)?;
        out.push((folder, m));
    }
    Ok(out)
}

impl StudyConfig for TraceStudy {
    type Load = ChatLoad;

    /// One traced sample of every variant, then the untraced ones interleaved.
    fn plan(&self, file: &StudyFile, variants: &[Variant]) -> Plan {
        let n = variants.len();
        let mut slots: Vec<Slot> = (0..n).map(|v| Slot { index: v, variant: v, repeat: 0 }).collect();
        slots.extend(
            interleaved(n, file.samples as usize, file.order_seed)
                .into_iter()
                .map(|s| Slot { index: s.index + n, ..s }),
        );
        Plan {
            labels: variants.iter().map(|v| v.label.clone()).collect(),
            order_seed: file.order_seed,
            slots,
            layout: SampleLayout::Study,
            traced: (0..n).collect(),
        }
    }

    async fn prepare(&mut self, ctx: &StudyContext<'_>) -> Result<()> {
        self.root = ctx.evidence.root.clone();
        self.chat.prepare(ctx).await
    }

    fn spec(&self, ctx: &StudyContext<'_>, slot: &Slot, files: &SampleFiles) -> Result<SampleSpec> {
        if ctx.plan.is_traced(slot) {
            self.traced_spec(ctx, slot, files)
        } else {
            self.chat.spec(ctx, slot, files)
        }
    }

    fn load(&self, ctx: &StudyContext<'_>, slot: &Slot) -> Result<ChatLoad> {
        self.chat.load(ctx, slot)
    }

    fn phase(&self, label: &str, traced: bool, phase: SamplePhase) {
        if traced && phase == SamplePhase::Stopping && self.watch.borrow().is_none() {
            let out = self.root.join(label).join("tracer-out");
            *self.watch.borrow_mut() = Some(FinalizeWatch::start(out, label.to_string()));
        }
    }

    fn after_sample(&mut self, ctx: &StudyContext<'_>, slot: &Slot, sample: &Sample) -> Result<()> {
        self.watch.borrow_mut().take();
        if ctx.plan.is_traced(slot) {
            let v = &ctx.variants[slot.variant];
            self.manifest(ctx, v, sample, &super::drive::sample_files(ctx, slot))?;
        }
        Ok(())
    }
}
