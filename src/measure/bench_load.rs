//! llama-bench as a sample's load (docs/methodology.md §4.4): the sample's process is one cold
//! llama-bench run of the variant's build, one repetition of each test, held at its start by the
//! lifecycle until the idle gate passed. The load continues it, notes the moment each result line
//! appears (each test's end, from which its window for the telemetry is known), reads the runtime
//! it mapped while it runs, and once it has exited records what it printed.
use super::bench_run::{BenchResult, BenchRun};
use super::files::SampleFiles;
use super::load::{Load, LoadRun};
use super::record::Sample;
use crate::client::Client;
use crate::clock::Stamp;
use crate::llama_bench::BenchTest;
use crate::runtime_libraries::LoadedRuntime;
use crate::server::log::TimingBlock;
use std::path::PathBuf;
use std::time::Duration;

/// How often the running llama-bench is looked at: its output's new lines and whether it exited.
const POLL: Duration = Duration::from_millis(10);

/// The load of one llama-bench sample.
pub(crate) struct BenchLoad {
    asked: Vec<BenchTest>,
    cache_type: Option<String>,
    pid: Option<u32>,
    released: Option<Stamp>,
    ended: Option<Stamp>,
    seen: Vec<u64>,
    runtime: Option<LoadedRuntime>,
    output: PathBuf,
}

impl BenchLoad {
    pub(crate) fn new(asked: Vec<BenchTest>, cache_type: Option<String>) -> BenchLoad {
        BenchLoad {
            asked,
            cache_type,
            pid: None,
            released: None,
            ended: None,
            seen: Vec::new(),
            runtime: None,
            output: PathBuf::new(),
        }
    }

    /// Notes the moment of each result line not seen before.
    fn note_new_lines(&mut self) {
        let lines = std::fs::read(&self.output).map_or(0, |b| b.iter().filter(|c| **c == b'\n').count());
        let now = crate::clock::mono_ns();
        while self.seen.len() < lines {
            self.seen.push(now);
        }
    }
}

impl Load for BenchLoad {
    fn prepare(&mut self, files: &SampleFiles, _base_url: &str) -> std::io::Result<()> {
        self.output = files.bench_output.clone();
        Ok(())
    }

    fn server_started(&mut self, pid: u32) {
        self.pid = Some(pid);
    }

    async fn run(&mut self, _client: &Client, _files: &SampleFiles) -> LoadRun {
        let Some(pid) = self.pid else {
            return LoadRun { error: Some("llama-bench was never started".into()), ..LoadRun::default() };
        };
        self.released = Some(Stamp::now());
        let continued =
            nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), nix::sys::signal::Signal::SIGCONT);
        if let Err(e) = continued {
            return LoadRun {
                error: Some(format!("could not continue llama-bench (pid {pid}): {e}")),
                ..LoadRun::default()
            };
        }
        loop {
            let state = crate::server::process_state(pid);
            self.note_new_lines();
            // The runtime it mapped, read while it runs: by its first result every backend is loaded.
            if self.runtime.is_none() && !self.seen.is_empty() && state.is_some_and(|s| s != 'Z') {
                self.runtime = Some(LoadedRuntime::of_process_tree(pid)).filter(|r| !r.is_empty());
            }
            if matches!(state, None | Some('Z')) {
                break;
            }
            tokio::time::sleep(POLL).await;
        }
        self.note_new_lines();
        self.ended = Some(Stamp::now());
        LoadRun::default()
    }

    fn timing_blocks(&self) -> usize {
        0
    }

    fn timed_blocks<'b>(&self, _blocks: &'b [TimingBlock]) -> &'b [TimingBlock] {
        &[]
    }

    fn ends_itself(&self) -> bool {
        true
    }

    fn finish(&mut self, sample: &mut Sample, files: &SampleFiles) {
        let text = crate::server::log::read_lossy(&files.bench_output).unwrap_or_default();
        let (results, unreadable) = if text.trim().is_empty() {
            (Vec::new(), None)
        } else {
            match crate::llama_bench::parse(&text) {
                Ok((_, rows)) => {
                    let seen = self.seen.iter().map(|t| Some(*t)).chain(std::iter::repeat(None));
                    (
                        rows.into_iter()
                            .zip(seen)
                            .map(|(row, seen_mono_ns)| BenchResult { row, seen_mono_ns })
                            .collect(),
                        None,
                    )
                }
                Err(e) => (Vec::new(), Some(e)),
            }
        };
        sample.extra.llama_bench =
            Some(BenchRun { asked: self.asked.clone(), cache_type: self.cache_type.clone(), results, unreadable });
        sample.extra.runtime = self.runtime.take();
        sample.request_start = self.released;
        sample.response_end = self.ended;
        let exit = sample.stop.as_ref().map(|s| s.exit.as_str());
        if exit.is_some_and(|e| e != "exited with status 0") && sample.error.is_none() {
            let stderr = crate::server::log::read_lossy(&files.bench_stderr).unwrap_or_default();
            let why = crate::server::log::first_error_line(&stderr).map(|l| format!(": `{l}`")).unwrap_or_default();
            sample.error = Some(format!("llama-bench {}{why} (see llama-bench.stderr)", exit.unwrap_or("ended")));
        }
    }
}
