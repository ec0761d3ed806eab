//! The server side of a sample behind two small traits, so the lifecycle in `run.rs` runs
//! against the real llama-server in use and against a scripted stand-in in its unit tests.
use crate::client::Client;
use crate::clock::Stamp;
use crate::server::{LaunchSpec, RunningServer, ServerError, StopReport};
use std::time::Duration;

#[allow(async_fn_in_trait)] // Static dispatch only.
pub(crate) trait ServerControl {
    fn pid(&self) -> u32;
    fn started(&self) -> Stamp;
    async fn wait_healthy(&mut self, client: &Client, timeout: Duration) -> Result<Stamp, ServerError>;
    /// How the server ended, if it already has.
    fn exited(&mut self) -> Option<String>;
    fn stop(&mut self, timeout: Duration, kill_on_timeout: bool) -> Result<StopReport, ServerError>;
}

pub(crate) trait Launcher {
    type Server: ServerControl;
    fn spawn(&mut self, launch: &LaunchSpec) -> Result<Self::Server, ServerError>;
}

/// Starts real processes.
pub(crate) struct Spawn {
    /// The signal the server gets if abprof dies: SIGKILL, or SIGTERM for a server that must
    /// never be killed (a tracer writing its output, docs/methodology.md §2 step 7).
    pub(crate) on_abprof_death: nix::sys::signal::Signal,
}

impl Launcher for Spawn {
    type Server = RunningServer;
    fn spawn(&mut self, launch: &LaunchSpec) -> Result<RunningServer, ServerError> {
        RunningServer::spawn_with_death_signal(launch, self.on_abprof_death)
    }
}

impl ServerControl for RunningServer {
    fn pid(&self) -> u32 {
        self.pid
    }
    fn started(&self) -> Stamp {
        self.started
    }
    async fn wait_healthy(&mut self, client: &Client, timeout: Duration) -> Result<Stamp, ServerError> {
        RunningServer::wait_healthy(self, client, timeout).await
    }
    fn exited(&mut self) -> Option<String> {
        RunningServer::exited(self).map(|s| s.to_string())
    }
    fn stop(&mut self, timeout: Duration, kill_on_timeout: bool) -> Result<StopReport, ServerError> {
        self.stop_with(timeout, kill_on_timeout)
    }
}
