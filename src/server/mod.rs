//! llama-server's lifecycle: spawn an exact argv in its own process group on loopback, wait for
//! `/health`, stop it with one SIGTERM. abprof only ever signals the process groups it created.
pub(crate) mod devices;
pub(crate) mod help;
pub(crate) mod listed_devices;
pub(crate) mod log;
pub(crate) mod placement;
mod process;

pub(crate) use process::asks_backend_sampling;
pub(crate) use process::check_owned_args;
pub(crate) use process::check_port_free;
pub(crate) use process::process_state;
pub use process::{Engine, LaunchSpec, RunningServer, ServerError, StopReport, HEALTH_POLL};

/// A port on `host` that nothing listens on right now (the OS picks it), for an isolated server.
pub fn free_port(host: &str) -> std::io::Result<u16> {
    Ok(std::net::TcpListener::bind((host, 0))?.local_addr()?.port())
}
