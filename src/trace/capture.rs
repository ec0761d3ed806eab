//! `abprof trace`: run a variant under a kernel tracer, send the calibrated request, stop the
//! server with exactly one SIGTERM, wait — patiently — for the tracer to write its output, find
//! and validate it, and pair it with untraced samples of the same variant at the same output
//! length, so its kernel shares can be scaled by an honest ms/token.
//!
//! rocprofv3 `exec`s the application, so the PID abprof spawned *is* the server; with
//! `--disable-signal-handlers` it finalizes from `atexit` after llama-server's clean exit. A
//! second signal would make llama-server `exit(1)` and a SIGKILL would lose the trace, so a
//! tracer that outlives the finalize timeout is left running and reported, never killed.
use super::manifest::{TraceManifest, Tracer, UntracedSamples};
use super::window::BootWindow;
use crate::client::ChatRequest;
use crate::measure::{run_sample, Sample, SampleFiles, SampleObserver, SamplePhase, SampleSpec};
use crate::server::LaunchSpec;
use crate::variant::Variant;
use anyhow::{anyhow, bail, Context, Result};
use regex::Regex;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Which tracer wraps the server.
#[derive(Debug, Clone, PartialEq)]
pub enum TracerCommand {
    /// `rocprofv3 --disable-signal-handlers --kernel-trace --output-format rocpd -d OUT -o trace --`
    Rocprofv3 { program: PathBuf },
    /// `nsys profile -t cuda --cuda-graph-trace=node -o OUT/trace`, then `nsys export --type sqlite`.
    Nsys { program: PathBuf },
    /// A user template; `{out}` is replaced by the tracer's output folder and the server argv
    /// is appended.
    Template { argv: Vec<String> },
}

impl TracerCommand {
    pub fn kind(&self) -> Tracer {
        match self {
            TracerCommand::Rocprofv3 { .. } => Tracer::Rocprofv3,
            TracerCommand::Nsys { .. } => Tracer::Nsys,
            TracerCommand::Template { argv } => Tracer::Other(
                Path::new(&argv[0]).file_name().map_or("custom".into(), |n| n.to_string_lossy().to_string()),
            ),
        }
    }

    /// The tracer's program and its arguments up to (not including) the server argv.
    pub fn prefix(&self, out: &Path) -> (PathBuf, Vec<String>) {
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

/// Everything one `abprof trace` run needs.
#[derive(Debug, Clone)]
pub struct CaptureSpec {
    pub variants: Vec<Variant>,
    pub model: PathBuf,
    pub common_args: Vec<String>,
    pub tokens: u32,
    pub prompt: String,
    pub prompt_tokens: Option<u64>,
    pub ignore_eos: bool,
    pub port: u16,
    pub tracer: TracerCommand,
    /// Untraced samples per variant (interleaved across variants).
    pub untraced: usize,
    pub health_timeout: Duration,
    /// How long to wait for the tracer to write its output after the SIGTERM.
    pub finalize_timeout: Duration,
    pub root: PathBuf,
}

/// Shows how long the tracer has been finalizing and how big its output is, while abprof waits.
struct FinalizeWatch {
    out: PathBuf,
    label: String,
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

impl SampleObserver for FinalizeWatch {
    fn phase(&mut self, phase: SamplePhase) {
        if phase != SamplePhase::Stopping || self.thread.is_some() {
            return;
        }
        let (out, label, running) = (self.out.clone(), self.label.clone(), self.running.clone());
        running.store(true, Ordering::SeqCst);
        self.thread = Some(std::thread::spawn(move || {
            let t0 = Instant::now();
            let mut next = Duration::from_secs(2);
            while running.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(50));
                if t0.elapsed() >= next {
                    eprintln!(
                        "abprof trace: {label}: one SIGTERM sent; waiting for the tracer to finish writing ({:.0} s, {:.1} MB so far)",
                        t0.elapsed().as_secs_f64(),
                        dir_bytes(&out) as f64 / 1e6
                    );
                    next += Duration::from_secs(5);
                }
            }
        }));
    }
}

impl FinalizeWatch {
    fn finish(mut self) {
        self.running.store(false, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn request(spec: &CaptureSpec) -> ChatRequest {
    let mut r = ChatRequest::benchmark(&spec.prompt, spec.tokens);
    r.ignore_eos = spec.ignore_eos.then_some(true);
    r
}

fn sample_spec(
    spec: &CaptureSpec,
    v: &Variant,
    program: PathBuf,
    prefix: Vec<String>,
    files: &SampleFiles,
    traced: bool,
) -> SampleSpec {
    // nsys keeps the server as its child and writes its report once the child has exited: the
    // one SIGTERM goes to the server. rocprofv3 execs the server, so its pid is the server's.
    let signal_descendant = (traced && matches!(spec.tracer, TracerCommand::Nsys { .. }))
        .then(|| v.binary.file_name().map(|n| n.to_string_lossy().to_string()))
        .flatten();
    let mut args = prefix;
    if traced {
        args.push(v.binary.display().to_string());
    }
    args.extend(v.server_args(&spec.model, &spec.common_args));
    SampleSpec {
        launch: LaunchSpec {
            program,
            args,
            env: v.env.clone(),
            host: "127.0.0.1".into(),
            port: spec.port,
            log_file: files.server_log(),
            console_file: files.console_log(),
            signal_descendant,
        },
        request: request(spec),
        expected_prompt_tokens: spec.prompt_tokens,
        health_timeout: spec.health_timeout,
        stop_timeout: if traced { spec.finalize_timeout } else { Duration::from_secs(60) },
        kill_on_stop_timeout: !traced,
        warm_prompt_cache: false,
        expect: None,
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

fn ms_per_token(s: &Sample) -> Option<f64> {
    s.server.as_ref().map(|t| t.decode_ms_per_token).filter(|x| x.is_finite())
}

/// Runs the capture; returns each variant's output folder (with its `trace.json`).
pub async fn capture(spec: &CaptureSpec) -> Result<Vec<PathBuf>> {
    let mut folders = Vec::new();
    let mut manifests = Vec::new();
    for v in &spec.variants {
        let folder = spec.root.join(&v.label);
        if folder.join(super::manifest::MANIFEST_FILE).exists() {
            bail!("{} already holds a trace: pass a new --root", folder.display());
        }
        let out = folder.join("tracer-out");
        std::fs::create_dir_all(&out)?;
        let files = SampleFiles::new(folder.join("traced"));
        let (program, prefix) = spec.tracer.prefix(&out);
        let sspec = sample_spec(spec, v, program, prefix, &files, true);
        let mut watch = FinalizeWatch {
            out: out.clone(),
            label: v.label.clone(),
            running: Arc::new(AtomicBool::new(false)),
            thread: None,
        };
        let sample = run_sample(&sspec, &files, &mut watch).await;
        watch.finish();
        let sample = sample.with_context(|| format!("traced run of {}", v.label))?;
        if let Some(e) = &sample.error {
            bail!("traced run of {}: {e} (evidence in {})", v.label, files.dir.display());
        }
        let trace = find_output(&spec.tracer, &files.console_log(), &out)?;
        // One parallel pass proves the file readable and not empty; attribution comes later.
        let kernels = super::detect::open_trace(&trace)
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
            tracer: spec.tracer.kind(),
            trace_file: trace.strip_prefix(&folder).map(Path::to_path_buf).unwrap_or(trace.clone()),
            prompt_tokens: sample.prompt_tokens().unwrap_or(0) as u32,
            output_tokens: sample.completion_tokens().unwrap_or(0) as u32,
            decode_window: window(sample.first_token, sample.last_token),
            prefill_window: window(sample.request_start, sample.first_token),
            untraced: None,
            created_at: chrono::Utc::now(),
        };
        manifest.save(&folder)?;
        folders.push(folder);
        manifests.push(manifest);
    }

    // Untraced samples of every variant, at the same output length, interleaved.
    let order = crate::schedule::interleaved(spec.variants.len(), spec.untraced, None);
    let mut per_variant: Vec<Vec<f64>> = vec![Vec::new(); spec.variants.len()];
    for slot in order {
        let v = &spec.variants[slot.variant];
        let files = SampleFiles::new(folders[slot.variant].join("untraced").join(format!("{:03}", slot.repeat + 1)));
        let sspec = sample_spec(spec, v, v.binary.clone(), vec![], &files, false);
        let s = run_sample(&sspec, &files, &mut crate::measure::NoObserver).await?;
        match (&s.error, ms_per_token(&s)) {
            (None, Some(m)) if s.completion_tokens() == Some(spec.tokens as u64) => per_variant[slot.variant].push(m),
            _ => eprintln!(
                "abprof trace: untraced sample {} of {} not used: {}",
                slot.repeat + 1,
                v.label,
                s.error.clone().unwrap_or_else(|| format!(
                    "{:?} output tokens, not {}",
                    s.completion_tokens(),
                    spec.tokens
                ))
            ),
        }
    }
    for ((m, folder), ms) in manifests.iter_mut().zip(&folders).zip(per_variant) {
        m.untraced = UntracedSamples::from_samples(spec.tokens, ms);
        if m.untraced.is_none() && spec.untraced > 0 {
            return Err(anyhow!(
                "no usable untraced sample of {}: the trace cannot be scaled (see {})",
                m.label,
                folder.display()
            ));
        }
        m.save(folder)?;
    }
    Ok(folders)
}
