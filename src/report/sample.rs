//! One sample as a human reads it.
use super::{num, Render};
use crate::measure::Sample;
use serde::Serialize;
use std::fmt::Write;
use std::path::Path;

pub(crate) fn render_text(s: &Sample) -> String {
    let mut o = String::new();
    let u = s.usage.clone().unwrap_or_default();
    let _ = writeln!(
        o,
        "prompt tokens      {}{}",
        u.prompt_tokens,
        s.expected_prompt_tokens.map_or(String::new(), |e| format!(" (calibrated {e})"))
    );
    let _ = writeln!(o, "completion tokens  {} (max_tokens {})", u.completion_tokens, s.max_tokens);
    let _ = writeln!(o, "finish_reason      {}", s.finish_reason.as_deref().unwrap_or("—"));
    if let Some(t) = &s.server {
        let _ = writeln!(
            o,
            "server prefill     {:.2} ms  {:.2} tok/s  ({} tokens)",
            t.prefill_ms, t.prefill_tps, t.prompt_tokens
        );
        let _ = writeln!(
            o,
            "server decode      {:.2} ms  {:.2} tok/s  (N−1: {:.2} tok/s, {:.3} ms/token, {} tokens)",
            t.decode_ms, t.decode_tps, t.decode_tps_n_minus_1, t.decode_ms_per_token, t.decode_tokens
        );
    }
    let st = &s.stream;
    let _ = writeln!(o, "strict streamed    {} tok/s", num(st.strict_tps, 2));
    let _ = writeln!(o, "TTFT               {} ms", num(st.ttft_ms, 2));
    let _ = writeln!(o, "HTTP elapsed       {} ms", num(st.http_elapsed_ms, 2));
    let _ = writeln!(
        o,
        "inter-token        p50 {} ms  p99 {} ms  max {} ms",
        num(st.itl_p50_ms, 3),
        num(st.itl_p99_ms, 3),
        num(st.itl_max_ms, 3)
    );
    match &s.draft {
        Some(d) => {
            let _ = writeln!(
                o,
                "draft acceptance   {:.5} ({} accepted / {} generated){}",
                d.rate,
                d.accepted,
                d.generated,
                d.mean_len.map_or(String::new(), |m| format!(", mean len {m:.2}"))
            );
        }
        None => {
            let _ = writeln!(o, "draft acceptance   — (no speculative decoding)");
        }
    }
    let _ = writeln!(o, "server start       {} ms to healthy", num(s.startup_ms, 1));
    if let Some(e) = &s.error {
        let _ = writeln!(o, "error              {e}");
    }
    o
}

impl Render for Sample {
    fn text(&self) -> String {
        render_text(self)
    }
}

/// What `abprof bench` prints: the sample, and in text where its evidence was kept. The JSON is
/// the sample alone.
#[derive(Serialize)]
#[serde(transparent)]
pub(crate) struct SampleWithEvidence<'a> {
    pub(crate) sample: &'a Sample,
    #[serde(skip)]
    pub(crate) evidence: &'a Path,
}

impl Render for SampleWithEvidence<'_> {
    fn text(&self) -> String {
        format!("{}evidence           {}\n", render_text(self.sample), self.evidence.display())
    }
}
