//! The headline of both documents.
use crate::summary::Summary;

/// The headline of both documents.
pub(crate) struct StudyTitle {
    pub(crate) heading: String,
    pub(crate) detail: String,
}

impl StudyTitle {
    pub(crate) fn of(s: &Summary) -> StudyTitle {
        let labels: Vec<&str> = s.variants.iter().map(|v| v.label.as_str()).collect();
        let heading = match &s.name {
            Some(n) => format!("abprof study {n}: {}", labels.join(" vs ")),
            None => format!("abprof study: {}", labels.join(" vs ")),
        };
        let detail = format!(
            "{} output tokens{} · {} samples per variant · prompt {} · {}",
            s.tokens,
            if s.pure_decode { " (pure decode: prompt cache warmed)" } else { " (cold KV)" },
            s.samples_per_variant,
            s.expected_prompt_tokens.map_or("uncalibrated".into(), |n| format!("{n} tokens (calibrated)")),
            s.root
        );
        StudyTitle { heading, detail }
    }
}
