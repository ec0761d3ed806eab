//! The lifecycle's order and every failure path, against a scripted server (hyperfine's
//! `MockExecutor` idea): the server "writes" a real captured llama-server log when stopped.
use super::files::SampleFiles;
use super::launcher::{Launcher, ServerControl};
use super::load::{Load, LoadRun};
use super::observer::{GateError, GateFailure, SampleObserver, SamplePhase};
use super::record::Sample;
use super::run::{run_sample_with, SampleError, SampleSpec};
use crate::client::{Client, StreamRecord};
use crate::clock::Stamp;
use crate::server::{LaunchSpec, ServerError, StopReport};
use crate::telemetry::record::{IdleGateRecord, TelemetryRecord};
use std::cell::RefCell;
use std::path::PathBuf;
use std::rc::Rc;
use std::time::Duration;

type Events = Rc<RefCell<Vec<String>>>;

const REAL_LOG: &str = include_str!("../../tests/fixtures/llama-server/target-300x32.log");

#[derive(Clone, Default)]
struct Script {
    unhealthy: bool,
    dies_during_load: bool,
    log: Option<&'static str>,
}

struct ScriptedLauncher {
    script: Script,
    events: Events,
}

struct ScriptedServer {
    script: Script,
    events: Events,
    log_file: PathBuf,
}

impl Launcher for ScriptedLauncher {
    type Server = ScriptedServer;
    fn spawn(&mut self, launch: &LaunchSpec) -> Result<ScriptedServer, ServerError> {
        self.events.borrow_mut().push("start".into());
        Ok(ScriptedServer {
            script: self.script.clone(),
            events: self.events.clone(),
            log_file: launch.log_file.clone(),
        })
    }
}

impl ServerControl for ScriptedServer {
    fn pid(&self) -> u32 {
        4242
    }
    fn started(&self) -> Stamp {
        Stamp::now()
    }
    async fn wait_healthy(&mut self, _client: &Client, timeout: Duration) -> Result<Stamp, ServerError> {
        self.events.borrow_mut().push("health".into());
        if self.script.unhealthy {
            return Err(ServerError::HealthTimeout { secs: timeout.as_secs(), log: self.log_file.clone() });
        }
        Ok(Stamp::now())
    }
    fn exited(&mut self) -> Option<String> {
        self.script.dies_during_load.then(|| "signal: 9 (SIGKILL)".into())
    }
    fn stop(&mut self, _timeout: Duration, _kill: bool) -> Result<StopReport, ServerError> {
        self.events.borrow_mut().push("stop".into());
        std::fs::write(&self.log_file, self.script.log.unwrap_or(REAL_LOG)).unwrap();
        Ok(StopReport { stop_ms: 1.0, exit: "exited with status 0".into(), killed: false })
    }
}

struct TestLoad {
    events: Events,
    fails: bool,
    interrupted: bool,
}

impl Load for TestLoad {
    fn prepare(&mut self, files: &SampleFiles, _base_url: &str) -> std::io::Result<()> {
        self.events.borrow_mut().push("prepare".into());
        std::fs::write(files.request(), "{}")
    }
    async fn warm_up(&mut self, _client: &Client) -> Result<(), String> {
        self.events.borrow_mut().push("warm-up".into());
        Ok(())
    }
    async fn run(&mut self, _client: &Client, _files: &SampleFiles) -> LoadRun {
        self.events.borrow_mut().push("load".into());
        let stream = StreamRecord { raw_sse: b"data: [DONE]\n\n".to_vec(), ..StreamRecord::default() };
        LoadRun {
            stream: Some(stream),
            error: self.fails.then(|| "the stream broke".into()),
            interrupted: self.interrupted,
        }
    }
    fn finish(&mut self, sample: &mut Sample, _files: &SampleFiles) {
        self.events.borrow_mut().push("finish".into());
        sample.max_tokens = 32;
    }
}

struct TestObserver {
    events: Events,
    gate: Option<GateError>,
}

impl SampleObserver for TestObserver {
    fn phase(&mut self, phase: SamplePhase) {
        self.events.borrow_mut().push(format!("phase {}", phase.name()));
    }
    fn before_request(&mut self, server_pid: u32) -> Result<Option<IdleGateRecord>, GateError> {
        self.events.borrow_mut().push("gate".into());
        if let Some(e) = self.gate.clone() {
            return Err(e);
        }
        Ok(Some(IdleGateRecord { source: format!("pid {server_pid}"), waited_ms: 3.0, ..Default::default() }))
    }
    fn request_finished(&mut self) {
        self.events.borrow_mut().push("request finished".into());
    }
    fn after_request(&mut self, _record: &StreamRecord) -> Option<TelemetryRecord> {
        self.events.borrow_mut().push("telemetry".into());
        Some(TelemetryRecord { source: "test".into(), samples: 7, ..Default::default() })
    }
}

#[derive(Default)]
struct Case {
    script: Script,
    load_fails: bool,
    interrupted: bool,
    gate: Option<GateError>,
    expect: Option<&'static str>,
}

fn run(case: Case) -> (Result<Sample, SampleError>, Vec<String>, SampleFiles, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let files = SampleFiles::for_test(dir.path().join("s"));
    let events: Events = Rc::default();
    let spec = SampleSpec {
        launch: LaunchSpec {
            program: "/bin/true".into(),
            args: vec![],
            env: vec![],
            host: "127.0.0.1".into(),
            port: 1,
            log_file: PathBuf::new(),
            console_file: PathBuf::new(),
            signal_descendant: None,
            cpus: None,
            engine: Default::default(),
        },
        expected_prompt_tokens: Some(300),
        health_timeout: Duration::from_secs(1),
        stop_timeout: Duration::from_secs(1),
        kill_on_stop_timeout: true,
        expect: case.expect.map(|r| regex::Regex::new(r).unwrap()),
    };
    let mut launcher = ScriptedLauncher { script: case.script, events: events.clone() };
    let mut load = TestLoad { events: events.clone(), fails: case.load_fails, interrupted: case.interrupted };
    let mut observer = TestObserver { events: events.clone(), gate: case.gate };
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let result = rt.block_on(run_sample_with(&mut launcher, &spec, &files, &mut load, &mut observer));
    let events = events.borrow().clone();
    (result, events, files, dir)
}

#[test]
fn the_lifecycle_runs_in_order_and_records_everything() {
    let (r, events, files, _d) = run(Case::default());
    let s = r.unwrap();
    assert_eq!(
        events,
        [
            "prepare",
            "phase start+health",
            "start",
            "health",
            "warm-up",
            "phase idle gate",
            "gate",
            "phase request",
            "load",
            "request finished",
            "phase stop",
            "stop",
            "telemetry",
            "finish"
        ]
    );
    assert_eq!(s.error, None);
    assert_eq!((s.timing_blocks, s.server.as_ref().unwrap().decode_tokens), (1, 32));
    assert_eq!(s.extra.idle_gate.as_ref().unwrap().source, "pid 4242");
    assert_eq!(s.extra.telemetry.as_ref().unwrap().samples, 7);
    assert_eq!(s.max_tokens, 32, "the load's facts are in the record");
    let saved: Sample = serde_json::from_str(&std::fs::read_to_string(files.record()).unwrap()).unwrap();
    assert_eq!(saved.extra, s.extra, "the typed record round-trips");
    assert!(files.request().is_file() && files.sse().is_file());
    // Each step's stamps, for the sample's timeline: health, warm-up, gate, stop, in order (the
    // scripted server makes its spawn stamp up when asked, so it is not among them).
    let st = &saved.steps;
    let (warm, gate, stop) = (st.warm_up.unwrap(), st.idle_gate.unwrap(), st.stop.unwrap());
    let order = [st.healthy.unwrap(), warm.start, warm.end, gate.start, gate.end, stop.start, stop.end];
    assert!(order.windows(2).all(|w| w[0].boot_ns <= w[1].boot_ns), "{order:?}");
}

#[test]
fn a_server_that_never_becomes_healthy_is_an_error_and_is_stopped() {
    let (r, events, files, _d) =
        run(Case { script: Script { unhealthy: true, ..Script::default() }, ..Case::default() });
    assert!(matches!(r, Err(SampleError::Start(ServerError::HealthTimeout { .. }))));
    assert_eq!(events, ["prepare", "phase start+health", "start", "health", "stop"]);
    assert!(!files.record().exists(), "nothing was measured, so nothing is recorded");
}

#[test]
fn an_idle_gate_that_gives_up_stops_the_server_before_the_load() {
    let gate = Some(GateError::Failed(GateFailure::NeverIdle("the GPU never went idle".into())));
    let (r, events, _files, _d) = run(Case { gate, ..Case::default() });
    assert!(matches!(r, Err(SampleError::Gate(ref e)) if e.to_string().contains("never went idle")));
    assert!(!events.contains(&"load".to_string()), "{events:?}");
    assert_eq!(events.last().unwrap(), "stop");
}

#[test]
fn a_signal_during_the_idle_gate_stops_the_server_and_records_nothing() {
    let (r, events, files, _d) = run(Case { gate: Some(GateError::Interrupted), ..Case::default() });
    assert!(matches!(r, Err(SampleError::Interrupted)), "{r:?}");
    assert!(!events.contains(&"load".to_string()), "{events:?}");
    assert_eq!(events.last().unwrap(), "stop");
    assert!(!files.record().exists());
}

#[test]
fn a_broken_load_is_a_recorded_sample_with_its_error() {
    let (r, events, files, _d) = run(Case { load_fails: true, ..Case::default() });
    let s = r.unwrap();
    assert_eq!(s.error.as_deref(), Some("the stream broke"));
    assert!(events.contains(&"stop".to_string()) && files.record().is_file());
}

#[test]
fn a_server_that_dies_during_the_load_is_named() {
    let (r, _, _, _d) = run(Case { script: Script { dies_during_load: true, ..Script::default() }, ..Case::default() });
    assert!(r.unwrap().error.unwrap().contains("the server ended during the request"));
}

#[test]
fn a_log_without_a_timing_block_is_an_incomplete_sample() {
    let log = "0.00.001.000 I main: server is listening on http://127.0.0.1:1\n";
    let (r, _, _, _d) = run(Case { script: Script { log: Some(log), ..Script::default() }, ..Case::default() });
    let s = r.unwrap();
    assert_eq!(s.timing_blocks, 0);
    assert!(s.error.is_some());
}

#[test]
fn an_interrupted_load_stops_the_server_and_records_nothing() {
    let (r, events, files, _d) = run(Case { interrupted: true, ..Case::default() });
    assert!(matches!(r, Err(SampleError::Interrupted)));
    assert!(events.contains(&"stop".to_string()) && !events.contains(&"finish".to_string()));
    assert!(!files.record().exists());
}

#[test]
fn expect_is_judged_against_the_server_log() {
    let (r, _, _, _d) = run(Case { expect: Some("print_timing"), ..Case::default() });
    assert!(r.unwrap().extra.expect.unwrap().matched);
    let (r, _, _, _d) = run(Case { expect: Some("FlashHead"), ..Case::default() });
    assert!(!r.unwrap().extra.expect.unwrap().matched);
}
