//! The decode roofline in words (docs/methodology.md §18): every byte class with the arithmetic
//! that made it, the bandwidth with its source, and the floor — so a reader can redo each step.
use super::table::{Column, Table, Text};
use super::Render;
use crate::roofline::bandwidth::Bandwidth;
use crate::roofline::bytes::{KvShape, WeightBytes};
use crate::roofline::estimate::RooflineEstimate;
use crate::roofline::StepBytes;
use std::fmt::Write;

/// 46769424 → "46,769,424".
pub(crate) fn grouped(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// "4 layers × 2 KV heads", or the range when layers differ.
fn heads(kv: &KvShape) -> String {
    let with_kv: Vec<u64> = kv.kv_heads.iter().copied().filter(|&h| h > 0).collect();
    let (lo, hi) = (with_kv.iter().min().copied().unwrap_or(0), with_kv.iter().max().copied().unwrap_or(0));
    let layers = if with_kv.len() == kv.kv_heads.len() {
        format!("{} layers", kv.kv_heads.len())
    } else {
        format!("{} of {} layers", with_kv.len(), kv.kv_heads.len())
    };
    if lo == hi {
        format!("{layers} × {lo} KV heads")
    } else {
        format!("{layers} × {lo}–{hi} KV heads")
    }
}

/// The byte classes of one step, one line each, indented by `indent`: the class, its bytes
/// (aligned by the table model) and what they are.
pub(crate) fn byte_lines(
    o: &mut String,
    indent: &'static str,
    w: &WeightBytes,
    kv: &KvShape,
    context: f64,
    b: &StepBytes,
) {
    let head = if w.tied_output {
        "token_embd.weight among them as the output head (tied embeddings)"
    } else {
        "the output head among them"
    };
    let mut t = Table::new(vec![Column::text("class"), Column::number("bytes"), Column::text("what")]);
    let mut line = |class: &str, bytes: u64, what: String| {
        t.push_text(vec![class.to_string(), format!("{} B", grouped(bytes)), what])
    };
    line("dense weights", b.dense, format!("{} tensors read whole, {head}", w.dense_tensors));
    if let Some(e) = &w.experts {
        line(
            "routed experts",
            b.experts_used,
            format!(
                "{} of {} experts of {} expert tensors ({} B × {}/{})",
                e.used,
                e.count,
                e.tensors,
                grouped(e.all_bytes),
                e.used,
                e.count
            ),
        );
    }
    line(
        "token embedding",
        b.token_embd_row,
        format!("one row of token_embd.weight per token (of {} rows), not the table", grouped(w.token_embd_rows)),
    );
    let dims = if kv.head_dim_k == kv.head_dim_v {
        format!("{} dims K and V", kv.head_dim_k)
    } else {
        format!("{} K + {} V dims", kv.head_dim_k, kv.head_dim_v)
    };
    line(
        "KV cache",
        b.kv.round() as u64,
        format!(
            "{context} tokens of context × {} B ({}, {dims}, {})",
            grouped(kv.bytes_per_position()),
            heads(kv),
            kv.types()
        ),
    );
    line(
        "total",
        b.total.round() as u64,
        format!("({}) per decode step", crate::roofline::bandwidth::human_bytes(b.total)),
    );
    o.push_str(&t.render(&Text::rows(&t, indent)));
    for c in &w.caveats {
        let _ = writeln!(o, "{indent}! {c}");
    }
}

/// "9.87 GB/s: host streaming read … measured …".
pub(crate) fn bandwidth_line(b: &Bandwidth) -> String {
    format!("{:.2} GB/s: {}", b.gb_per_s, b.source())
}

impl Render for RooflineEstimate {
    fn text(&self) -> String {
        let mut o = String::new();
        if let Some(m) = &self.model {
            let name = m.path.file_name().map_or_else(|| m.path.display().to_string(), |n| n.to_string_lossy().into());
            let _ = writeln!(
                o,
                "bytes one decode step of {name} reads ({}, {} layers) at {} tokens of context, KV {}",
                m.weights.arch,
                m.weights.layers,
                m.context_tokens,
                m.kv.types()
            );
            byte_lines(&mut o, "  ", &m.weights, &m.kv, m.context_tokens, &m.bytes);
        }
        let mut t = Table::new(vec![Column::text("what"), Column::text("value")]);
        match (&self.bandwidth, &self.bandwidth_error) {
            (Some(b), _) => t.push_text(vec!["bandwidth".into(), bandwidth_line(b)]),
            (None, Some(e)) => {
                t.push_text(vec!["bandwidth".into(), format!("unavailable for {}: {e}", self.target.describe())])
            }
            (None, None) => {}
        }
        if let (Some(f), Some(m), Some(b)) = (self.floor_ms, &self.model, &self.bandwidth) {
            t.push_text(vec![
                "floor".into(),
                format!(
                    "{f:.3} ms per decode step = {} B ÷ {:.2} GB/s (at most {:.1} steps/s)",
                    grouped(m.bytes.total.round() as u64),
                    b.gb_per_s,
                    1000.0 / f
                ),
            ]);
        }
        o.push_str(&t.render(&Text::rows(&t, "")));
        o
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn thousands_are_grouped() {
        assert_eq!(super::grouped(0), "0");
        assert_eq!(super::grouped(272), "272");
        assert_eq!(super::grouped(1000), "1,000");
        assert_eq!(super::grouped(46_769_424), "46,769,424");
    }
}
