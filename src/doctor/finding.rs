//! One finding of `abprof doctor`: what was looked at, what it measured, what to do.
use serde::Serialize;

/// What a finding says about the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Status {
    /// Ready: nothing here adds noise.
    Ok,
    /// Measurements would be noisier, or a study would stop: the fix says what to do.
    Warn,
    /// The host has no such thing (a VM has no cpufreq, a CPU host no GPU telemetry).
    NotPresent,
}

impl Status {
    pub(crate) fn word(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Warn => "warn",
            Status::NotPresent => "not present",
        }
    }
}

/// One line of the checkup: what was looked at, what it measured, and what to do about it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Finding {
    pub(crate) name: &'static str,
    pub(crate) status: Status,
    pub(crate) value: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) fix: Option<String>,
    /// What a short value leaves out (each telemetry backend's reason, say): in the JSON, and in
    /// the text under `--verbose`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) detail: Option<String>,
}

impl Finding {
    pub(crate) fn ok(name: &'static str, value: impl Into<String>) -> Finding {
        Finding { name, status: Status::Ok, value: value.into(), fix: None, detail: None }
    }

    pub(crate) fn warn(name: &'static str, value: impl Into<String>, fix: impl Into<String>) -> Finding {
        Finding { name, status: Status::Warn, value: value.into(), fix: Some(fix.into()), detail: None }
    }

    pub(crate) fn not_present(name: &'static str, value: impl Into<String>, fix: Option<String>) -> Finding {
        Finding { name, status: Status::NotPresent, value: value.into(), fix, detail: None }
    }

    pub(crate) fn with_detail(self, detail: impl Into<String>) -> Finding {
        Finding { detail: Some(detail.into()), ..self }
    }
}
