//! The llama-bench configuration of the study loop (docs/methodology.md §4.4): the same
//! interleaved blocks, hooks, idle gate, telemetry, retakes, evidence and resume as every study;
//! only the sample's process is one cold llama-bench run of the variant's build (its tests at one
//! repetition, JSONL out), held at its start until the gate passes (`measure::BenchLoad`).
use super::drive::{StudyConfig, StudyContext};
use super::judge::Judge;
use crate::llama_bench::BenchTest;
use crate::measure::{BenchLoad, SampleFiles, SampleSpec};
use crate::schedule::Slot;
use crate::server::{Engine, LaunchSpec};
use anyhow::Result;
use std::time::Duration;

/// What abprof sets on every llama-bench sample: one repetition of each test, its results as
/// JSONL on stdout.
const OWNED_ARGS: [&str; 4] = ["-r", "1", "-o", "jsonl"];

pub(crate) struct LlamaBenchStudy {
    tests: Vec<BenchTest>,
    args: Vec<String>,
    judge: Option<Judge>,
}

impl LlamaBenchStudy {
    /// A study of the tests `args` ask for, judged by `judge` (each sample's progress line, more
    /// blocks once the planned ones are taken).
    pub(crate) fn new(section: &super::file::LlamaBenchSection, judge: Option<Judge>) -> Result<LlamaBenchStudy> {
        let tests = section.tests().map_err(|e| anyhow::anyhow!(e))?;
        let args = section.words().unwrap_or_default();
        Ok(LlamaBenchStudy { tests, args, judge })
    }
}

impl StudyConfig for LlamaBenchStudy {
    type Load = BenchLoad;

    fn spec(&self, ctx: &StudyContext<'_>, slot: &Slot, files: &SampleFiles) -> Result<SampleSpec> {
        let v = &ctx.variants[slot.variant];
        let mut args = v.server_args(&ctx.file.model, ctx.common_args);
        args.extend(self.args.iter().cloned());
        args.extend(OWNED_ARGS.map(String::from));
        let launch = LaunchSpec {
            program: v.binary.clone(),
            args,
            env: v.env.clone(),
            host: "127.0.0.1".into(),
            port: ctx.port.get(),
            log_file: files.bench_output.clone(),
            console_file: files.bench_stderr.clone(),
            signal_descendant: None,
            cpus: ctx.file.server_cpus(),
            engine: Engine::LlamaBench,
        };
        Ok(SampleSpec {
            stop_timeout: Duration::from_secs(ctx.file.stop_timeout_s),
            expect: v.expect_regex(),
            ..SampleSpec::new(launch, Duration::from_secs(ctx.file.health_timeout_s))
        })
    }

    fn load(&self, ctx: &StudyContext<'_>, slot: &Slot) -> Result<BenchLoad> {
        Ok(BenchLoad::new(self.tests.clone(), ctx.variants[slot.variant].kv.clone()))
    }

    fn judge(&self) -> Option<&Judge> {
        self.judge.as_ref()
    }
}
