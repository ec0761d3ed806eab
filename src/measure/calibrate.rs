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

/// Where a run's prompt comes from (docs/methodology.md §3).
pub(crate) enum PromptSource<'a> {
    /// A prompt file (from `abprof calibrate`), with the count its calibration recorded beside it.
    File(&'a std::path::Path),
    /// Calibrated once to `tokens` on a fresh server of `launch`, which is stopped again.
    Calibrate { tokens: u64, launch: Box<LaunchSpec>, health_timeout: Duration, stall: Duration },
}

/// The text every sample of a run sends, and the prompt length each must report.
pub(crate) struct Prompt {
    pub(crate) text: String,
    pub(crate) tokens: Option<u64>,
}

/// A prompt file's text and the count its calibration recorded (none when it has no record).
pub(crate) fn read_prompt_file(path: &std::path::Path) -> anyhow::Result<Prompt> {
    use anyhow::Context;
    let text = std::fs::read_to_string(path).with_context(|| {
        format!(
            "cannot read prompt file {}: make one with `abprof calibrate ... --out {}`",
            path.display(),
            path.display()
        )
    })?;
    Ok(Prompt { text, tokens: crate::client::calibrate::recorded_prompt_tokens(path) })
}

/// The one "prompt or calibrate" step: a file's text and recorded count, or a prompt calibrated
/// on the server `who` names and saved (text and sidecar) at `save_at`, so the run's evidence
/// keeps what was sent.
pub(crate) async fn prompt_or_calibrate(
    source: PromptSource<'_>,
    save_at: &std::path::Path,
    who: &str,
) -> anyhow::Result<Prompt> {
    use anyhow::Context;
    match source {
        PromptSource::File(path) => read_prompt_file(path),
        PromptSource::Calibrate { tokens, launch, health_timeout, stall } => {
            let cal = calibrate_on_fresh_server(
                &launch,
                health_timeout,
                stall,
                crate::client::calibrate::DEFAULT_SOURCE,
                tokens,
            )
            .await
            .with_context(|| format!("calibrating a {tokens}-token prompt on {who}"))?;
            crate::client::calibrate::save(&cal, save_at)
                .with_context(|| format!("cannot write {}", save_at.display()))?;
            Ok(Prompt { text: cal.text, tokens: Some(cal.prompt_tokens) })
        }
    }
}
