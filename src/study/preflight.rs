//! Everything about a study that can be known before its folder exists, checked here so that a
//! bad input is one line and exit 2 (src/refusal.rs, docs/commands.md "Exit status") instead of a
//! folder, a calibration and a first sample that fails: the variant specs, the models (there, not
//! a folder, a GGUF), the binaries (each asked its `--version` and `--help` once: a llama-server?),
//! every server flag against the binary's own `--help`, the context the prompt and the output
//! need, the prompt file and the telemetry rate.
use super::file::{StudyFile, StudyFileError, StudyKind};
use crate::refusal::Refusal;
use crate::server::help::{names_port, BadWord, ServerHelp};
use crate::server::listed_devices;
use crate::variant::{parse_variants, split_args, Variant};
use anyhow::Result;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

fn refused(line: String) -> anyhow::Error {
    Refusal::of(StudyFileError::Refused(line)).into()
}

/// Parses and checks everything that needs no server binary run, before anything is created on
/// disk (`bisect` checks its study here with stand-in binaries: the builds do not exist yet).
pub(crate) fn check_study(file: &StudyFile) -> Result<(Vec<Variant>, Vec<String>)> {
    file.check().map_err(Refusal::of)?;
    let mut variants = parse_variants(&file.variants).map_err(Refusal::of)?;
    // A llama-bench study's binary is the llama-bench of each variant's build (§4.4): hashed,
    // watched and run from here on.
    if file.llama_bench.is_some() {
        for v in &mut variants {
            v.binary = v.llama_bench().map_err(refused)?;
        }
    }
    let Some(common) = split_args(&file.server_args) else {
        return Err(refused(format!(
            "cannot split server_args {:?} like a shell would: check its quotes",
            file.server_args
        )));
    };
    // What each binary lists, asked once per binary and environment (variants often share both).
    let mut listed: Vec<(&Variant, Listed)> = Vec::new();
    for v in &variants {
        let m = v.model_or(&file.model);
        if m.is_dir() {
            return Err(refused(format!(
                "variant {}: model {} is a directory: pass the GGUF file in it",
                v.label,
                m.display()
            )));
        }
        if !m.is_file() {
            return Err(refused(format!(
                "variant {}: model {} does not exist: pass a GGUF file",
                v.label,
                m.display()
            )));
        }
        // Refused here, before the folder exists, not at the variant's first sample.
        let argv = v.server_args(&file.model, &common);
        crate::server::check_owned_args(&argv).map_err(|e| refused(format!("variant {}: {e}", v.label)))?;
        // A device the binary does not see (docs/methodology.md §9.11): llama.cpp would refuse
        // it at the first sample, after the folder exists.
        if let Some(names) = listed_devices::named(&argv, &v.env) {
            let asked = listed.iter().position(|(w, _)| w.binary == v.binary && w.env == v.env);
            let at = asked.unwrap_or_else(|| {
                // A binary that cannot list (an old build) leaves the check to its first sample.
                let out = super::facts::probe(&v.binary, "--list-devices", &env_of(v), listed_devices::LIST_TIMEOUT);
                listed.push((v, out.ok().flatten().and_then(|o| listed_devices::parse(&o))));
                listed.len() - 1
            });
            let seen = &listed[at].1;
            if let Some(why) = seen.as_deref().and_then(|l| listed_devices::missing(&names, l)) {
                return Err(refused(format!("variant {}: {why}", v.label)));
            }
        }
    }
    Ok((variants, common))
}

/// The device names a binary lists; `None` where it cannot say.
type Listed = Option<Vec<String>>;

fn env_of(v: &Variant) -> Vec<(&str, &str)> {
    v.env.iter().map(|(k, x)| (k.as_str(), x.as_str())).collect()
}

/// A prompt file a study can send: readable text with something in it (a study of an empty
/// prompt would measure nothing but the chat template).
pub(crate) fn check_prompt_file(p: &Path) -> Result<()> {
    let refuse = |why: String| {
        refused(format!(
            "the prompt file {} {why}: pass a text file with the prompt in it (`abprof calibrate` writes one)",
            p.display()
        ))
    };
    let bytes = std::fs::read(p).map_err(|e| refuse(format!("cannot be read ({e})")))?;
    let text = std::str::from_utf8(&bytes).map_err(|_| refuse("is not UTF-8 text".into()))?;
    if text.contains('\0') {
        return Err(refuse("holds NUL bytes, so it is not text".into()));
    }
    if text.trim().is_empty() {
        return Err(refuse("is empty".into()));
    }
    Ok(())
}

/// The study's telemetry rate within what its source refreshes (docs/methodology.md §9.2),
/// refused like any other out-of-range value, before anything is created.
pub(crate) fn check_rate(file: &StudyFile, gpu: Option<&dyn crate::telemetry::TelemetrySource>) -> Result<()> {
    let kind = gpu.map_or(crate::telemetry::SourceKind::Cpu, |g| g.kind());
    let max = kind.max_study_hz();
    if file.telemetry_hz > max {
        let what = if gpu.is_some() { kind.name() } else { "the server's CPU (no GPU telemetry)" };
        return Err(Refusal::of(StudyFileError::OutOfBounds(format!(
            "telemetry_hz = {} is above {max} Hz, the fastest {what} refreshes: pass --telemetry-hz {max} or less (docs/methodology.md §9.2)",
            file.telemetry_hz
        )))
        .into());
    }
    Ok(())
}

/// What each binary answered, asked once per binary (`--version`, as the study records it) and
/// once per binary and environment (`--help`, as the variant's server will run: an `env=` such as
/// `LD_LIBRARY_PATH` may be what lets it start at all).
#[derive(Default)]
pub(crate) struct Probes {
    versions: HashMap<PathBuf, String>,
    helps: HashMap<(PathBuf, Vec<(String, String)>), Help>,
}

enum Help {
    /// What it printed, parsed when it is llama-server's.
    Printed { text: String, table: ServerHelp },
    /// It did not answer within the probe's time and was ended: its flags go unchecked.
    TimedOut,
}

impl Probes {
    /// The variant's binary's `--version`, asked once per binary.
    fn version(&mut self, v: &Variant) -> String {
        self.versions.entry(v.binary.clone()).or_insert_with(|| super::facts::probe_version(v)).clone()
    }

    fn help(&mut self, v: &Variant) -> Result<&Help> {
        let key = (v.binary.clone(), v.env.clone());
        if !self.helps.contains_key(&key) {
            let out = super::facts::probe(&v.binary, "--help", &env_of(v), super::facts::VERSION_PROBE_TIMEOUT)
                .map_err(|e| {
                    refused(format!(
                        "variant {}: cannot run `{} --help` ({e}): pass a llama-server built for this host",
                        v.label,
                        v.binary.display()
                    ))
                })?;
            let help = match out {
                Some(text) => Help::Printed { table: ServerHelp::parse(&text), text },
                None => {
                    eprintln!(
                        "abprof: warning: variant {}: `{} --help` did not finish within {} s and was killed: its server flags are not checked before the study",
                        v.label,
                        v.binary.display(),
                        super::facts::VERSION_PROBE_TIMEOUT.as_secs()
                    );
                    Help::TimedOut
                }
            };
            self.helps.insert(key.clone(), help);
        }
        Ok(&self.helps[&key])
    }
}

/// Checks what only the variants' files and binaries can say — each model's GGUF header, each
/// binary a llama-server whose `--help` lists every flag the study gives it, the context each
/// server has for the prompt and the output — and returns each variant's `--version` (for the
/// study's facts, so no binary is asked twice).
pub(crate) fn check_servers(
    file: &StudyFile,
    variants: &[Variant],
    common: &[String],
    probes: &mut Probes,
) -> Result<Vec<String>> {
    let mut models: Vec<&Path> = Vec::new();
    let mut versions = Vec::with_capacity(variants.len());
    for v in variants {
        let model = v.model_or(&file.model);
        if !models.contains(&model) {
            crate::roofline::gguf::check_magic(model).map_err(|e| refused(format!("variant {}: {e}", v.label)))?;
            models.push(model);
        }
        versions.push(probes.version(v));
        let Help::Printed { text, table } = probes.help(v)? else { continue };
        if file.llama_bench.is_some() {
            if !text.contains("--n-prompt") {
                return Err(refused(format!(
                    "variant {}: `{} --help` printed {}, where llama-bench lists its tests (--n-prompt among them): pass a llama-bench, or the llama-server it was built beside",
                    v.label,
                    v.binary.display(),
                    what_it_printed(text)
                )));
            }
            continue;
        }
        if !names_port(text) {
            return Err(refused(format!(
                "variant {}: `{} --help` printed {}, where a llama-server lists its flags (--port among them): pass the llama-server binary (build/bin/llama-server) or an `abprof build` folder",
                v.label,
                v.binary.display(),
                what_it_printed(text)
            )));
        }
        // A layout this reader does not know (llama.cpp before autumn 2024) leaves the flags to
        // the server.
        if !table.understood() {
            continue;
        }
        for (words, source) in [(common, "--server-args"), (v.extra.as_slice(), "extra=")] {
            table.check(words).map_err(|bad| refused(bad_word_line(v, source, &bad)))?;
        }
        check_context(file, v, common, table)?;
    }
    Ok(versions)
}

/// The first line a probe printed, quoted and cut to 80 characters, with how many lines follow.
fn what_it_printed(text: &str) -> String {
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let Some(first) = lines.next() else { return "nothing".into() };
    let cut: String = first.chars().take(80).collect();
    let cut = if cut.len() < first.len() { format!("{cut}…") } else { cut };
    match lines.count() {
        0 => format!("{cut:?}"),
        n => format!("{cut:?} and {n} more lines"),
    }
}

fn bad_word_line(v: &Variant, source: &str, bad: &BadWord) -> String {
    let (label, bin) = (&v.label, v.binary.display());
    match bad {
        BadWord::Unknown { word, near: Some(near) } => {
            format!("variant {label}: {source} gives {word}, which `{bin} --help` does not list: did you mean {near}?")
        }
        BadWord::Unknown { word, near: None } => format!(
            "variant {label}: {source} gives {word}, which `{bin} --help` does not list: check its spelling, or drop it (this build may predate it)"
        ),
        BadWord::Joined { flag, value } => format!(
            "variant {label}: {source} gives {flag}={value}, and llama-server takes a flag's value as the next word: write {flag} {value}"
        ),
        BadWord::NoValue { flag, usage } => {
            format!("variant {label}: {source} ends with {flag}, which takes a value (`{usage}`): give it one")
        }
        BadWord::Stray { word } => format!(
            "variant {label}: {source} gives {word:?}, which is neither a flag `{bin} --help` lists nor a flag's value, so llama-server would refuse it: drop it, or put the flag it belongs to before it"
        ),
    }
}

/// The prompt's tokens the study sends, where it knows them before it starts: its
/// `prompt_tokens`, or the count recorded beside its prompt file (`abprof calibrate`).
fn prompt_tokens(file: &StudyFile) -> Option<u64> {
    match &file.prompt {
        Some(p) => crate::client::calibrate::recorded_prompt_tokens(p).or(file.prompt_tokens),
        None => file.prompt_tokens,
    }
}

/// A chat study's prompt and output must fit each server slot's context: a prompt that does not
/// fit is refused by the server after the folder exists, and one whose output does not fit stops
/// decoding at the context's end, so every sample is rejected `locked-length`
/// (docs/methodology.md §7.5). The slot's context is llama-server's (common/arg.cpp, server.cpp,
/// llama-context.cpp): `-c` (else `LLAMA_ARG_CTX_SIZE`, else the default `--help` prints; 0 is the
/// model's training context), divided among `-np N` slots unless the cache is unified (`-kvu`);
/// llama.cpp rounds each slot up to 256 tokens, which is only ever more room, so the check never
/// refuses a study that fits. Skipped where the count is not known before the study starts (a
/// Pi study, the MTP yardstick's and SPEED-Bench's own prompts, a value that is not a number).
fn check_context(file: &StudyFile, v: &Variant, common: &[String], help: &ServerHelp) -> Result<()> {
    if matches!(file.kind, StudyKind::Pi(_)) || file.workload.and_then(|w| w.own_prompts()).is_some() {
        return Ok(());
    }
    let Some(prompt) = prompt_tokens(file) else { return Ok(()) };
    let need = prompt + u64::from(file.tokens);
    let argv = v.server_args(&file.model, common);
    let env =
        |key: &str| v.env.iter().rev().find(|(k, _)| k == key).map(|(_, x)| x.clone()).or(std::env::var(key).ok());
    // The value given (a flag, else the variant's or abprof's environment), else the default.
    let number = |flag: &str, key: &str| -> Option<(i64, bool)> {
        match help.last_value(&argv, flag).or_else(|| env(key)) {
            Some(text) => text.trim().parse().ok().map(|n| (n, true)),
            None => help.default_number(flag).map(|n| (n, false)),
        }
    };
    let Some((ctx, given)) = number("--ctx-size", "LLAMA_ARG_CTX_SIZE") else { return Ok(()) };
    let (ctx, from) = match u64::try_from(ctx) {
        Ok(0) => {
            let model = v.model_or(&file.model);
            let Some(h) = crate::roofline::gguf::GgufHeader::read(model).ok() else { return Ok(()) };
            let Some(train) = h.arch_u64("context_length") else { return Ok(()) };
            (train, format!("the model's training context ({}.context_length, -c 0)", h.arch))
        }
        Ok(c) if given => (c, format!("-c {c}")),
        Ok(c) => (c, format!("llama-server's default -c {c}")),
        Err(_) => return Ok(()),
    };
    let slots = number("--parallel", "LLAMA_ARG_N_PARALLEL").map_or(1, |(n, _)| n);
    let unified = match help.last_flag(&argv, &["-kvu", "--kv-unified", "-no-kvu", "--no-kv-unified"]) {
        Some(flag) => !flag.contains("no-"),
        None => env("LLAMA_ARG_KV_UNIFIED").is_some_and(|x| matches!(x.trim(), "1" | "true" | "on" | "enabled")),
    };
    // -np -1 (auto) shares one unified cache of the whole context, as one slot has it.
    let slots = if slots >= 2 && !unified { slots as u64 } else { 1 };
    let per_slot = ctx / slots;
    if need <= per_slot {
        return Ok(());
    }
    let has = match slots {
        1 => format!("{from} holds {per_slot}"),
        n => format!("{from} over -np {n} slots holds {per_slot} a slot"),
    };
    let fix = if from.contains("training context") {
        "ask for fewer --prompt-tokens or --tokens (the model holds no more)".to_string()
    } else {
        format!("raise -c to {} or more in --server-args, or ask for fewer --prompt-tokens or --tokens", need * slots)
    };
    Err(refused(format!(
        "variant {}: a {prompt}-token prompt and {} output tokens need {need} tokens of context, and {has}: {fix}",
        v.label, file.tokens
    )))
}
