//! A private Pi configuration folder (`PI_CODING_AGENT_DIR`) for one sample: a provider pointing
//! at that sample's server, and settings that keep the run to one request. The user's own
//! `~/.pi` is never read or written.
use serde_json::json;
use std::path::{Path, PathBuf};

/// The provider and model names abprof configures; llama-server serves one model and ignores
/// the name.
pub(crate) const PROVIDER: &str = "abprof";
pub(crate) const MODEL_ID: &str = "abprof-variant";

/// What Pi is told about the model.
#[derive(Debug, Clone, Copy)]
pub(crate) struct AgentModel {
    pub(crate) context_window: u32,
    /// Pi sends this as `max_tokens`: it bounds the answer.
    pub(crate) max_tokens: u32,
}

/// `models.json`: an OpenAI-compatible provider at the server's `/v1`, with the compat switches
/// llama-server needs (no developer role, no reasoning effort, usage in the stream, `max_tokens`).
pub(crate) fn models_json(base_url: &str, model: AgentModel) -> serde_json::Value {
    json!({ "providers": { PROVIDER: {
        "baseUrl": format!("{}/v1", base_url.trim_end_matches('/')),
        "api": "openai-completions",
        "apiKey": "none",
        "compat": {
            "supportsDeveloperRole": false,
            "supportsReasoningEffort": false,
            "supportsUsageInStreaming": true,
            "maxTokensField": "max_tokens"
        },
        "models": [{
            "id": MODEL_ID,
            "name": "llama-server variant under test (abprof)",
            "contextWindow": model.context_window,
            "maxTokens": model.max_tokens
        }]
    }}})
}

/// `settings.json`: compaction off, or Pi sends a second (compaction) request after the answer
/// whenever the context window is below its reserve (docs/methodology.md §11); no install
/// telemetry.
pub(crate) fn settings_json() -> serde_json::Value {
    json!({ "enableInstallTelemetry": false, "compaction": { "enabled": false } })
}

/// Pi's own names for its two files in an agent folder `dir`: `models.json`, `settings.json`.
pub(crate) fn agent_files(dir: &Path) -> (PathBuf, PathBuf) {
    (dir.join("models.json"), dir.join("settings.json"))
}

/// Writes both files into `dir`.
pub(crate) fn write_agent_dir(dir: &Path, base_url: &str, model: AgentModel) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let pretty = |v: serde_json::Value| serde_json::to_string_pretty(&v).expect("serializable") + "\n";
    let (models, settings) = agent_files(dir);
    std::fs::write(models, pretty(models_json(base_url, model)))?;
    std::fs::write(settings, pretty(settings_json()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_reference_provider_shape() {
        let v = models_json("http://127.0.0.1:8101/", AgentModel { context_window: 8192, max_tokens: 24 });
        let p = &v["providers"][PROVIDER];
        assert_eq!(p["baseUrl"], "http://127.0.0.1:8101/v1");
        assert_eq!(p["api"], "openai-completions");
        assert_eq!(p["compat"]["maxTokensField"], "max_tokens");
        assert_eq!(p["compat"]["supportsUsageInStreaming"], true);
        assert_eq!(p["models"][0]["maxTokens"], 24);
        assert_eq!(settings_json()["compaction"]["enabled"], false);
        assert_eq!(settings_json()["enableInstallTelemetry"], false);
    }
}
