//! `abprof trace`: kernel traces of variants, each paired with untraced samples of the same
//! output length.
use super::common::{check_model, port_or_free, read_prompt, runtime, split_server_args};
use crate::client::calibrate::{recorded_prompt_tokens, save as save_prompt, DEFAULT_SOURCE};
use crate::measure::calibrate::calibrate_on_fresh_server;
use crate::server::LaunchSpec;
use crate::trace::capture::{capture, CaptureSpec, TracerCommand};
use crate::variant::parse_variants;
use anyhow::{bail, Context, Result};
use clap::{Args, ValueEnum};
use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum TracerKind {
    /// AMD ROCm: rocprofv3 --kernel-trace, rocpd SQLite output.
    Rocprofv3,
    /// NVIDIA: Nsight Systems with CUDA graph nodes traced, exported to SQLite.
    Nsys,
}

#[derive(Args, Debug)]
pub struct TraceArgs {
    /// Output folder: one subfolder per variant with its trace.json.
    #[arg(long, value_name = "DIR")]
    pub root: PathBuf,
    /// Variant(s) to trace, same grammar as `abprof ab`.
    #[arg(long, value_name = "SPEC", required = true)]
    pub variant: Vec<String>,
    /// Output tokens; the untraced samples use the same (trace-matched workload: 512).
    #[arg(long, default_value_t = 512, value_name = "N")]
    pub tokens: u32,
    #[arg(long, value_enum, conflicts_with = "tracer_cmd")]
    pub tracer: Option<TracerKind>,
    /// The tracer binary (default: rocprofv3 or nsys from PATH).
    #[arg(long, value_name = "BIN")]
    pub tracer_bin: Option<PathBuf>,
    /// A custom tracer command; `{out}` becomes its output folder and the server argv is appended.
    #[arg(long, value_name = "TEMPLATE", allow_hyphen_values = true)]
    pub tracer_cmd: Option<String>,
    /// Untraced samples per variant for the ms/token the trace is scaled by.
    #[arg(long, default_value_t = 3, value_name = "N")]
    pub untraced: usize,
    #[arg(long, value_name = "GGUF")]
    pub model: PathBuf,
    #[arg(long, value_name = "ARGS", default_value = "", allow_hyphen_values = true)]
    pub server_args: String,
    #[arg(long, value_name = "FILE", conflicts_with = "prompt_tokens")]
    pub prompt: Option<PathBuf>,
    /// Calibrate a prompt of exactly N tokens on the first variant.
    #[arg(long, value_name = "N")]
    pub prompt_tokens: Option<u64>,
    #[arg(long)]
    pub ignore_eos: bool,
    #[arg(long)]
    pub port: Option<u16>,
    #[arg(long, default_value_t = 600, value_name = "SECS")]
    pub health_timeout: u64,
    /// Seconds to wait for the tracer to write its output after the one SIGTERM (never killed).
    #[arg(long, default_value_t = 1800, value_name = "SECS")]
    pub finalize_timeout: u64,
}

fn on_path(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH")?.to_str()?.split(':').map(|d| PathBuf::from(d).join(name)).find(|p| p.is_file())
}

fn tracer(a: &TraceArgs) -> Result<TracerCommand> {
    if let Some(t) = &a.tracer_cmd {
        let argv = shlex::split(t).filter(|v| !v.is_empty());
        let Some(argv) = argv else { bail!("cannot split --tracer-cmd {t:?} like a shell would") };
        return Ok(TracerCommand::Template { argv });
    }
    let kind = match a.tracer {
        Some(k) => k,
        None if on_path("rocprofv3").is_some() => TracerKind::Rocprofv3,
        None if on_path("nsys").is_some() => TracerKind::Nsys,
        None => bail!(
            "no tracer found: install rocprofv3 (ROCm) or nsys (Nsight Systems), or pass --tracer-bin / --tracer-cmd"
        ),
    };
    let name = match kind {
        TracerKind::Rocprofv3 => "rocprofv3",
        TracerKind::Nsys => "nsys",
    };
    let program = match &a.tracer_bin {
        Some(p) => p.clone(),
        None => on_path(name).with_context(|| format!("{name} is not on PATH: pass --tracer-bin"))?,
    };
    Ok(match kind {
        TracerKind::Rocprofv3 => TracerCommand::Rocprofv3 { program },
        TracerKind::Nsys => TracerCommand::Nsys { program },
    })
}

pub fn run(a: TraceArgs) -> Result<i32> {
    check_model(&a.model)?;
    let variants = parse_variants(&a.variant)?;
    let common = split_server_args(&a.server_args)?;
    let tracer = tracer(&a)?;
    let port = port_or_free(a.port)?;
    std::fs::create_dir_all(&a.root).with_context(|| format!("cannot create {}", a.root.display()))?;
    let rt = runtime();
    let (prompt, prompt_tokens) = match (&a.prompt, a.prompt_tokens) {
        (Some(p), _) => (read_prompt(p)?, recorded_prompt_tokens(p)),
        (None, Some(n)) => {
            let base = &variants[0];
            let launch = LaunchSpec::for_variant(base, &a.model, &common, port, &a.root.join("calibration"));
            let cal = rt.block_on(calibrate_on_fresh_server(
                &launch,
                Duration::from_secs(a.health_timeout),
                DEFAULT_SOURCE,
                n,
            ))?;
            save_prompt(&cal, &a.root.join("prompt.txt"))?;
            (cal.text, Some(n))
        }
        (None, None) => bail!("give --prompt FILE or --prompt-tokens N"),
    };
    let spec = CaptureSpec {
        variants,
        model: a.model.clone(),
        common_args: common,
        tokens: a.tokens,
        prompt,
        prompt_tokens,
        ignore_eos: a.ignore_eos,
        port,
        tracer,
        untraced: a.untraced,
        health_timeout: Duration::from_secs(a.health_timeout),
        finalize_timeout: Duration::from_secs(a.finalize_timeout),
        root: a.root.clone(),
    };
    let folders = rt.block_on(capture(&spec))?;
    let mut line = String::new();
    for f in &folders {
        let m = crate::trace::TraceManifest::load(f)?;
        let ms = m.untraced.as_ref().map(|u| u.median_ms_per_token);
        println!(
            "{}: {} (decode window {}; untraced median {} ms/token at {} tokens)",
            m.label,
            f.join(&m.trace_file).display(),
            if m.decode_window.is_some() { "recorded" } else { "missing" },
            ms.map_or("—".into(), |v| format!("{v:.3}")),
            a.tokens
        );
        line.push_str(&format!(" --variant {}={}", m.label, f.display()));
    }
    println!("compare with: abprof compare-traces{line}");
    Ok(0)
}
