//! The headline of every rendering of a study report: what was compared, then how (output length,
//! the plan, the prompt) and where.
use crate::summary::Summary;

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
        if let Some(args) = &s.llama_bench_args {
            let detail = format!("llama-bench {args}, one repetition a sample · {} · {}", plan(s), s.root);
            return StudyTitle { heading, detail };
        }
        let detail = format!(
            "{} output tokens{} · {} · prompt {} · {}",
            s.tokens,
            if s.pure_decode { " (pure decode: prompt cache warmed)" } else { " (cold KV)" },
            plan(s),
            s.expected_prompt_tokens.map_or("uncalibrated".into(), |n| format!("{n} tokens (calibrated)")),
            s.root
        );
        StudyTitle { heading, detail }
    }
}

/// The samples planned, and for an adaptive study until when it takes more (§17).
fn plan(s: &Summary) -> String {
    match &s.adaptive {
        Some(a) if a.until_ci_pct > 0.0 => format!(
            "{} samples per variant, then blocks until {} CI ±{}% (at most {})",
            s.samples_per_variant,
            if s.llama_bench_args.is_some() { "every test's" } else { "decode" },
            a.until_ci_pct,
            a.max_samples
        ),
        Some(a) => format!(
            "{} samples per variant, then blocks until decided{} (at most {})",
            s.samples_per_variant,
            a.mei_pct.map_or(String::new(), |m| format!(" or the same within ±{m}%")),
            a.max_samples
        ),
        None => format!("{} samples per variant", s.samples_per_variant),
    }
}
