//! Calibration on a server abprof starts for the purpose and stops again, so the timed samples
//! that follow still start cold.
use crate::client::calibrate::{calibrate, Calibration};
use crate::client::Client;
use crate::server::{LaunchSpec, RunningServer};
use std::time::Duration;

pub(crate) async fn calibrate_on_fresh_server(
    launch: &LaunchSpec,
    health_timeout: Duration,
    stall: Duration,
    source: &str,
    tokens: u64,
) -> anyhow::Result<Calibration> {
    let client = Client::new(&launch.base_url());
    let mut server = RunningServer::spawn(launch)?;
    server.wait_healthy(&client, health_timeout).await?;
    let out = calibrate(&client, source, tokens, stall).await;
    server.stop(Duration::from_secs(60))?;
    Ok(out?)
}
