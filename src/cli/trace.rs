//! `abprof trace`: kernel traces of variants, each paired with untraced samples of the same
//! output length.
use super::args::{HistoryArgs, OutputArgs, PromptArgs, VariantArgs, STUDY_FLAGS};
use super::common::{check_model, study_file};
use super::conditions::RunConditions;
use crate::app::Finishing;
use crate::child::on_path;
use crate::refusal::refuse;
use crate::study::file::{KindName, StudyFile, StudyKind, TraceSection, TracerCommand};
use anyhow::{bail, Context, Result};
use clap::{Args, ValueEnum};
use std::path::PathBuf;

#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum TracerKind {
    /// AMD ROCm: rocprofv3 --kernel-trace, rocpd SQLite output.
    Rocprofv3,
    /// NVIDIA: Nsight Systems with CUDA graph nodes traced, exported to SQLite.
    Nsys,
}

#[derive(Args, Debug)]
#[command(
    after_help = "Exit status: 0 done; 1 error, also after the output when the restore/verify hooks failed; 2 usage; 128+N stopped by signal N (129 SIGHUP, 130 SIGINT, 143 SIGTERM; resumable with --resume)."
)]
#[command(mut_arg("variants", |a| a.required_unless_present("resume")))]
#[command(mut_arg("prompt", |a| a.conflicts_with("prompt_tokens")))]
pub(crate) struct TraceArgs {
    /// Output folder: a study folder (its untraced samples under samples/) with one subfolder per
    /// variant holding its trace.json.
    #[arg(long, value_name = "DIR", required_unless_present = "resume")]
    pub(crate) root: Option<PathBuf>,
    /// Finish an interrupted capture in DIR.
    #[arg(long, value_name = "DIR", conflicts_with = "root", conflicts_with_all = STUDY_FLAGS)]
    #[arg(conflicts_with_all = ["tokens", "tracer", "tracer_bin", "tracer_cmd", "attach", "untraced", "traced", "prompt", "prompt_tokens", "ignore_eos", "finalize_timeout", "dispatch_reference"])]
    pub(crate) resume: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) variants: VariantArgs,
    /// Output tokens; the untraced samples use the same (trace-matched workload: 512).
    #[arg(long, default_value_t = 512, value_name = "N", value_parser = crate::bounds::u32_flag(2, crate::bounds::MAX_TOKENS))]
    pub(crate) tokens: u32,
    #[arg(long, value_enum, conflicts_with = "tracer_cmd")]
    pub(crate) tracer: Option<TracerKind>,
    /// The tracer binary (default: rocprofv3 or nsys from PATH).
    #[arg(long, value_name = "BIN")]
    pub(crate) tracer_bin: Option<PathBuf>,
    /// rocprofv3 only: attach to each traced sample's loaded server for its request alone
    /// (`rocprofv3 --attach PID`, the server started with ROCP_TOOL_ATTACH=1), instead of
    /// wrapping the server's whole life. The classic launch stays the default (methodology §10).
    #[arg(long, conflicts_with = "tracer_cmd")]
    pub(crate) attach: bool,
    /// A custom tracer command; `{out}` becomes its output folder and the server argv is appended.
    #[arg(long, value_name = "TEMPLATE", allow_hyphen_values = true)]
    pub(crate) tracer_cmd: Option<String>,
    /// Untraced samples per variant for the ms/token the trace is scaled by.
    #[arg(long, default_value_t = 3, value_name = "N", value_parser = crate::bounds::u32_flag(1, crate::bounds::MAX_SAMPLES))]
    pub(crate) untraced: u32,
    /// Traced samples per variant, interleaved with the untraced ones; from 2 on, each kernel
    /// category's delta gets a 95% interval across them and the tracer's overhead is printed.
    #[arg(long, default_value_t = 1, value_name = "N", value_parser = crate::bounds::u32_flag(1, crate::bounds::MAX_SAMPLES))]
    pub(crate) traced: u32,
    #[command(flatten)]
    pub(crate) prompt: PromptArgs,
    #[arg(long)]
    pub(crate) ignore_eos: bool,
    /// A variant traced with its graphs off (e.g. `env=GGML_CUDA_DISABLE_GRAPHS=1`) whose decode
    /// dispatches per token are the reference: every other variant's trace must hold at least 90%
    /// of them, or it is refused as one that lost kernels (methodology §10 "complete traces").
    #[arg(long, value_name = "LABEL")]
    pub(crate) dispatch_reference: Option<String>,
    /// Seconds to wait for the tracer to write its output after the one SIGTERM (never killed).
    #[arg(long, default_value_t = 1800, value_name = "SECS", value_parser = crate::bounds::u64_flag(1, crate::bounds::MAX_TIMEOUT_S))]
    pub(crate) finalize_timeout: u64,
    #[command(flatten)]
    pub(crate) conditions: RunConditions,
    #[command(flatten)]
    pub(crate) output: OutputArgs,
    #[command(flatten)]
    pub(crate) history: HistoryArgs,
}

fn tracer(a: &TraceArgs) -> Result<TracerCommand> {
    if let Some(t) = &a.tracer_cmd {
        let argv = shlex::split(t).filter(|v| !v.is_empty());
        let Some(argv) = argv else { refuse!("cannot split --tracer-cmd {t:?} like a shell would") };
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
        TracerKind::Rocprofv3 => TracerCommand::Rocprofv3 { program, attach: a.attach },
        TracerKind::Nsys if a.attach => {
            return Err(crate::refusal::Refusal::of(
                "--attach is rocprofv3's (`rocprofv3 --attach PID`): nsys wraps the server; drop --attach or pass --tracer rocprofv3".to_string(),
            )
            .into())
        }
        TracerKind::Nsys => TracerCommand::Nsys { program },
    })
}

/// The study file of a new trace study, from the flags.
fn study_from_flags(a: &TraceArgs) -> Result<StudyFile> {
    let v = &a.variants;
    let Some(model) = &v.model else { refuse!("--model is required") };
    check_model(model)?;
    v.launch.common_args()?;
    if a.prompt.prompt.is_none() && a.prompt.prompt_tokens.is_none() {
        refuse!("give --prompt FILE or --prompt-tokens N");
    }
    let file = StudyFile {
        prompt: a.prompt.prompt.clone(),
        prompt_tokens: a.prompt.prompt_tokens,
        ignore_eos: a.ignore_eos,
        kind: StudyKind::Trace(TraceSection {
            tracer: tracer(a)?,
            finalize_timeout_s: a.finalize_timeout,
            traced: a.traced,
            dispatch_reference: a.dispatch_reference.clone(),
        }),
        ..study_file(v, &a.conditions, model.clone(), a.tokens, a.untraced)
    };
    if let Some(label) = &a.dispatch_reference {
        let labels: Vec<String> =
            crate::variant::parse_variants(&file.variants)?.into_iter().map(|v| v.label).collect();
        if !labels.contains(label) {
            refuse!(
                "--dispatch-reference {label}: no variant is labelled so (the variants: {}); name the one traced with its graphs off",
                labels.join(", ")
            );
        }
        if labels.len() < 2 {
            refuse!("--dispatch-reference {label}: a reference needs another variant to check; add the variant to trace beside it");
        }
    }
    Ok(file.with_paths_from(&std::env::current_dir()?))
}

pub(crate) fn run(a: TraceArgs) -> Result<i32> {
    let (file, root, resume) = match &a.resume {
        Some(dir) => (crate::study::open(dir)?.resumed_by(KindName::Trace)?.file, dir.clone(), true),
        None => (study_from_flags(&a)?, a.root.clone().expect("clap requires --root"), false),
    };
    let how = Finishing { format: a.output.format(), history: a.history.location()?, gate: None };
    crate::app::study(&file, &root, resume, how)
}
