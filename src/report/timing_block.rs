//! One llama-server request timing block (`abprof parse-log`), with the rates derived from it.
use super::Render;
use crate::server::log::TimingBlock;
use serde::{Serialize, Serializer};
use std::fmt::Write;

/// A parsed block as printed: its own fields plus the N−1 decode rate and ms/token, which a
/// reader should not have to derive.
pub(crate) struct ParsedTimingBlock<'a>(pub(crate) &'a TimingBlock);

impl Serialize for ParsedTimingBlock<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let b = self.0;
        let mut v = serde_json::to_value(b).map_err(serde::ser::Error::custom)?;
        v["decode_tps_n_minus_1"] = serde_json::json!(b.decode_tps_n_minus_1());
        v["decode_ms_per_token"] = serde_json::json!(b.decode_ms_per_token());
        v.serialize(s)
    }
}

impl Render for ParsedTimingBlock<'_> {
    fn text(&self) -> String {
        let b = self.0;
        let mut o = String::new();
        let _ = writeln!(
            o,
            "prompt eval   {:.2} ms / {} tokens = {:.2} tok/s",
            b.prompt_ms,
            b.prompt_tokens,
            b.prefill_tps()
        );
        let _ = writeln!(
            o,
            "eval          {:.2} ms / {} tokens = {:.2} tok/s (N−1: {:.2} tok/s, {:.3} ms/token)",
            b.eval_ms,
            b.eval_tokens,
            b.decode_tps(),
            b.decode_tps_n_minus_1(),
            b.decode_ms_per_token()
        );
        if let Some(t) = b.total_ms {
            let _ = writeln!(
                o,
                "total         {t:.2} ms{}",
                b.total_tokens.map_or(String::new(), |n| format!(" / {n} tokens"))
            );
        }
        if let Some(d) = &b.draft {
            let mean = d.mean_len.map_or(String::new(), |m| format!(", mean acceptance length {m:.2}"));
            let _ =
                writeln!(o, "draft         {:.5} ({} accepted / {} generated){mean}", d.rate, d.accepted, d.generated);
        }
        o
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{render, Format};
    use crate::server::log::single_timing_block;

    const LOG: &str = include_str!("../../tests/fixtures/llama-server/target-300x32.log");

    #[test]
    fn json_is_the_block_plus_its_derived_rates() {
        let b = single_timing_block(LOG).unwrap();
        let json: serde_json::Value = serde_json::from_str(&render(&ParsedTimingBlock(&b), Format::Json)).unwrap();
        let mut expected = serde_json::to_value(&b).unwrap();
        expected["decode_tps_n_minus_1"] = serde_json::json!(b.decode_tps_n_minus_1());
        expected["decode_ms_per_token"] = serde_json::json!(b.decode_ms_per_token());
        expected["schema_version"] = serde_json::json!(crate::schema::SCHEMA_VERSION);
        assert_eq!(json, expected);
    }

    #[test]
    fn text_has_prompt_and_decode_lines() {
        let b = single_timing_block(LOG).unwrap();
        let text = ParsedTimingBlock(&b).text();
        assert!(text.starts_with("prompt eval   "), "{text}");
        assert!(text.contains("/ 300 tokens") && text.contains("/ 32 tokens"), "{text}");
        assert!(text.contains("ms/token)\n"), "{text}");
    }
}
