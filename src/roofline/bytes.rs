//! The bytes one decode step must read, by class, from a GGUF header (docs/methodology.md §18):
//! dense weights whole, the routed experts one token uses, one row of the token embedding, and
//! the KV cache per position of context for a K and a V type.
use super::gguf::{GgmlType, GgufHeader, ModelError};
use serde::{Deserialize, Serialize};

/// The token-embedding lookup: one row per token, never the whole table.
pub(crate) const TOKEN_EMBD: &str = "token_embd.weight";
/// The output head; a model without it reads `token_embd` as its head (tied embeddings).
pub(crate) const OUTPUT: &str = "output.weight";

/// The routed-expert share of a mixture-of-experts model: each token reads `used` of `count`
/// experts of every expert tensor (`*_exps*`, the expert index its last dimension).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct ExpertBytes {
    /// `<arch>.expert_count`.
    pub(crate) count: u64,
    /// `<arch>.expert_used_count`.
    pub(crate) used: u64,
    pub(crate) tensors: usize,
    /// Every expert of every expert tensor.
    pub(crate) all_bytes: u64,
    /// What one token reads: `all_bytes × used / count`.
    pub(crate) used_bytes: u64,
}

/// The weights one decode step reads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct WeightBytes {
    pub(crate) arch: String,
    pub(crate) layers: u64,
    /// Every tensor that is neither a routed expert nor the token-embedding lookup, read whole
    /// (norms, attention, shared experts, routers, the output head).
    pub(crate) dense_bytes: u64,
    pub(crate) dense_tensors: usize,
    /// One row of `token_embd.weight` (the lookup of the token being decoded).
    pub(crate) token_embd_row_bytes: u64,
    pub(crate) token_embd_rows: u64,
    /// No `output.weight`: `token_embd` is the output head too, read whole and counted in
    /// `dense_bytes`.
    pub(crate) tied_output: bool,
    pub(crate) experts: Option<ExpertBytes>,
    /// What this arithmetic does not model for this architecture.
    pub(crate) caveats: Vec<String>,
}

impl WeightBytes {
    pub(crate) fn of(h: &GgufHeader) -> Result<WeightBytes, ModelError> {
        let layers = layer_count(h)?;
        let expert_count = h.arch_u64("expert_count").filter(|&n| n > 1);
        let expert_used = h.arch_u64("expert_used_count");
        let tied_output = h.tensor(OUTPUT).is_none();
        let (mut dense_bytes, mut dense_tensors) = (0u64, 0usize);
        let (mut token_embd_row_bytes, mut token_embd_rows) = (0u64, 0u64);
        let mut experts: Option<ExpertBytes> = None;
        let mut caveats = Vec::new();
        for t in &h.tensors {
            let expert_dim = t.dims.last().copied();
            if t.name == TOKEN_EMBD {
                let rows = t.dims.get(1).copied().unwrap_or(1).max(1);
                token_embd_rows = rows;
                token_embd_row_bytes = t.n_bytes / rows;
                if tied_output {
                    dense_bytes += t.n_bytes;
                    dense_tensors += 1;
                }
            } else if t.name.contains("_exps") {
                let (Some(count), Some(used)) = (expert_count, expert_used) else {
                    return Err(ModelError::Shape {
                        path: h.path.clone(),
                        detail: format!(
                            "expert tensor {} but no {arch}.expert_count / {arch}.expert_used_count",
                            t.name,
                            arch = h.arch
                        ),
                    });
                };
                if used > count {
                    return Err(ModelError::Shape {
                        path: h.path.clone(),
                        detail: format!("{}.expert_used_count {used} exceeds expert_count {count}", h.arch),
                    });
                }
                if expert_dim != Some(count) || !t.n_bytes.is_multiple_of(count) {
                    return Err(ModelError::Shape {
                        path: h.path.clone(),
                        detail: format!(
                            "expert tensor {} has shape {:?}, not {count} experts in its last dimension",
                            t.name, t.dims
                        ),
                    });
                }
                let e = experts.get_or_insert(ExpertBytes { count, used, tensors: 0, all_bytes: 0, used_bytes: 0 });
                e.tensors += 1;
                e.all_bytes += t.n_bytes;
                e.used_bytes += t.n_bytes / count * used;
            } else {
                dense_bytes += t.n_bytes;
                dense_tensors += 1;
            }
        }
        if token_embd_rows == 0 {
            caveats.push(format!("no {TOKEN_EMBD}: no embedding row counted"));
        }
        if h.has_arch_key("attention.sliding_window") {
            caveats.push(
                "sliding-window attention: its layers read at most their window of the KV cache; the floor counts the whole context for every layer (an upper bound)".into(),
            );
        }
        if h.has_arch_key("attention.kv_lora_rank") {
            caveats.push(
                "compressed (MLA) KV cache: the KV bytes below assume plain K/V heads and are not this model's".into(),
            );
        }
        if ["ssm.", "wkv.", "shortconv."].iter().any(|p| h.has_any_arch_key_with_prefix(p)) {
            caveats.push("recurrent state: its per-step reads are not counted".into());
        }
        Ok(WeightBytes {
            arch: h.arch.clone(),
            layers,
            dense_bytes,
            dense_tensors,
            token_embd_row_bytes,
            token_embd_rows,
            tied_output,
            experts,
            caveats,
        })
    }

    /// Bytes of weights per decode step.
    pub(crate) fn per_step(&self) -> u64 {
        self.dense_bytes + self.token_embd_row_bytes + self.experts.as_ref().map_or(0, |e| e.used_bytes)
    }
}

/// `<arch>.block_count`, when it is a number of layers a model can have: a per-layer list of that
/// length is built from it.
fn layer_count(h: &GgufHeader) -> Result<u64, ModelError> {
    let layers = h.require("block_count")?;
    if layers > MAX_LAYERS {
        return Err(ModelError::Shape {
            path: h.path.clone(),
            detail: format!("{}.block_count {layers} is more layers than any model has (at most {MAX_LAYERS})", h.arch),
        });
    }
    Ok(layers)
}

const MAX_LAYERS: u64 = 1 << 16;

/// The KV cache per position of context: every layer's K (`n_head_kv × head_dim_k` elements) and
/// V (`n_head_kv × head_dim_v`), in the cache's K and V types.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct KvShape {
    pub(crate) k_type: GgmlType,
    pub(crate) v_type: GgmlType,
    /// `<arch>.attention.head_count_kv` per layer (0: a layer without a KV cache).
    pub(crate) kv_heads: Vec<u64>,
    pub(crate) head_dim_k: u64,
    pub(crate) head_dim_v: u64,
    /// K bytes of one position, all layers.
    pub(crate) k_bytes_per_position: u64,
    /// V bytes of one position, all layers.
    pub(crate) v_bytes_per_position: u64,
}

impl KvShape {
    pub(crate) fn of(h: &GgufHeader, k_type: GgmlType, v_type: GgmlType) -> Result<KvShape, ModelError> {
        let layers = layer_count(h)?;
        let n_head = h.arch_per_layer("attention.head_count", layers).ok_or_else(|| ModelError::MissingKey {
            path: h.path.clone(),
            key: format!("{}.attention.head_count", h.arch),
        })?;
        let kv_heads = h.arch_per_layer("attention.head_count_kv", layers).unwrap_or_else(|| n_head.clone());
        // llama.cpp's default head size: n_embd / n_head, for K and V alike.
        let default_dim = || -> Result<u64, ModelError> {
            let n_embd = h.require("embedding_length")?;
            let heads = n_head.iter().copied().find(|&n| n > 0).unwrap_or(0);
            if heads == 0 {
                return Err(ModelError::Shape { path: h.path.clone(), detail: "attention.head_count is 0".into() });
            }
            Ok(n_embd / heads)
        };
        let head_dim_k = match h.arch_u64("attention.key_length") {
            Some(d) => d,
            None => default_dim()?,
        };
        let head_dim_v = match h.arch_u64("attention.value_length") {
            Some(d) => d,
            None => default_dim()?,
        };
        let shape = |detail: String| ModelError::Shape { path: h.path.clone(), detail };
        let row = |t: GgmlType, dim: u64, heads: u64, what: &str| -> Result<u64, ModelError> {
            // Quantized K/V are blocked within each head, so a head must be whole blocks.
            let head = t.row_bytes(dim).ok_or_else(|| {
                shape(format!(
                    "{what} head size {dim} is not a whole number of {}'s blocks of {}: llama-server refuses that cache type for this model",
                    t.name(),
                    t.block().map_or(0, |b| b.0)
                ))
            })?;
            head.checked_mul(heads).ok_or_else(|| shape(format!("{heads} KV heads of {head} B overflow")))
        };
        let (mut k, mut v) = (0u64, 0u64);
        for &heads in &kv_heads {
            let sum =
                |acc: u64, add: u64| acc.checked_add(add).ok_or_else(|| shape("KV bytes per position overflow".into()));
            k = sum(k, row(k_type, head_dim_k, heads, "K")?)?;
            v = sum(v, row(v_type, head_dim_v, heads, "V")?)?;
        }
        Ok(KvShape {
            k_type,
            v_type,
            kv_heads,
            head_dim_k,
            head_dim_v,
            k_bytes_per_position: k,
            v_bytes_per_position: v,
        })
    }

    pub(crate) fn bytes_per_position(&self) -> u64 {
        self.k_bytes_per_position + self.v_bytes_per_position
    }

    /// "f16" when K and V agree, else "K q8_0 / V f16".
    pub(crate) fn types(&self) -> String {
        if self.k_type == self.v_type {
            self.k_type.name()
        } else {
            format!("K {} / V {}", self.k_type.name(), self.v_type.name())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::roofline::testbed::gguf_fixture;

    /// The same classes summed from the `gguf` package's tensor sizes, independently of the code.
    fn from_fixture(name: &str) -> (u64, u64, u64) {
        let f = gguf_fixture(name);
        let tensors = f["tensors"].as_array().unwrap();
        let tied = !tensors.iter().any(|t| t["name"] == OUTPUT);
        let int = |k: &str| f["ints"][k][0].as_u64();
        let (mut dense, mut experts, mut row) = (0, 0, 0);
        for t in tensors {
            let n = t["n_bytes"].as_u64().unwrap();
            let name = t["name"].as_str().unwrap();
            if name == TOKEN_EMBD {
                row = n / t["dims"][1].as_u64().unwrap();
                dense += if tied { n } else { 0 };
            } else if name.contains("_exps") {
                experts += n / int("expert_count").unwrap() * int("expert_used_count").unwrap();
            } else {
                dense += n;
            }
        }
        (dense, experts, row)
    }

    #[test]
    fn per_layer_kv_heads_a_tied_head_and_a_sliding_window_are_read_as_declared() {
        // scripts/make_tiny_gguf.py: 3 layers with 2, 0 and 2 KV heads, K 32 and V 16 dims, 4
        // experts with 1 used, no output.weight, a sliding window.
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fuzz-seeds/tiny-moe.gguf");
        let h = GgufHeader::read(&path).unwrap();
        let w = WeightBytes::of(&h).unwrap();
        assert!(w.tied_output);
        // token_embd 16 × 32 f16 (the head, whole) + output_norm + 3 × (attn_norm + router 32 × 4 f32).
        assert_eq!(w.dense_bytes, 16 * 32 * 2 + 32 * 4 + 3 * (32 * 4 + 32 * 4 * 4));
        assert_eq!(w.experts.as_ref().unwrap().used_bytes, 6 * (4 * 16 * 32 * 2) / 4);
        assert_eq!(w.token_embd_row_bytes, 32 * 2);
        assert_eq!(w.per_step(), 3072 + 6144 + 64);
        assert!(w.caveats.iter().any(|c| c.contains("sliding-window")), "{:?}", w.caveats);
        let t = |s: &str| GgmlType::from_name(s).unwrap();
        let kv = KvShape::of(&h, t("f16"), t("f16")).unwrap();
        assert_eq!((kv.kv_heads.clone(), kv.head_dim_k, kv.head_dim_v), (vec![2, 0, 2], 32, 16));
        assert_eq!(kv.bytes_per_position(), 2 * 2 * (32 + 16) * 2);
        let e = KvShape::of(&h, t("q8_0"), t("q8_0")).unwrap_err().to_string();
        assert!(e.contains("V head size 16 is not a whole number of q8_0's blocks of 32"), "{e}");
    }

    /// Tests that read the test bed's models (.config/nextest.toml keeps them out of the fast tier).
    mod on_test_bed {
        use super::*;
        use crate::roofline::testbed::model;

        #[test]
        fn weight_bytes_per_step_match_the_gguf_package_for_every_test_bed_model() {
            for (key, fixture) in crate::roofline::gguf::tests::MODELS {
                let w = WeightBytes::of(&header(key)).unwrap();
                let (dense, experts, row) = from_fixture(fixture);
                assert_eq!(
                    (w.dense_bytes, w.experts.as_ref().map_or(0, |e| e.used_bytes), w.token_embd_row_bytes),
                    (dense, experts, row),
                    "{fixture}"
                );
                assert_eq!(w.per_step(), dense + experts + row);
            }
        }

        #[test]
        fn the_random_moe_target_reads_what_its_shapes_say() {
            let w = WeightBytes::of(&header("TARGET_MODEL")).unwrap();
            // output 151936 × 256 q8_0 (8 blocks × 34 B a row) + output_norm 256 f32 + 4 layers of
            // norms (2 × 256 + 2 × 64 f32), q/o 256 × 256 f16, k/v 256 × 128 f16, router 256 × 8 f32.
            let per_layer = 4 * (2 * 256 + 2 * 64) + 2 * (2 * 256 * 256) + 2 * (2 * 256 * 128) + 4 * 256 * 8;
            assert_eq!(w.dense_bytes, 151_936 * 272 + 4 * 256 + 4 * per_layer);
            assert_eq!(w.dense_bytes, 42_943_488);
            // 3 expert tensors a layer, 8 experts of 256 × 256 f16, 2 used.
            let e = w.experts.as_ref().unwrap();
            assert_eq!((e.count, e.used, e.tensors), (8, 2, 12));
            assert_eq!(e.used_bytes, 4 * 3 * 2 * (2 * 256 * 256));
            assert_eq!(e.all_bytes, 4 * e.used_bytes);
            assert_eq!((w.token_embd_row_bytes, w.token_embd_rows, w.tied_output), (272, 151_936, false));
            assert_eq!(w.per_step(), 46_089_488);
            assert!(w.caveats.is_empty(), "{:?}", w.caveats);
        }

        #[test]
        fn smollm2_ties_its_output_to_the_embedding_and_reads_it_whole() {
            let w = WeightBytes::of(&header("SMOLLM2_MODEL")).unwrap();
            assert!(w.tied_output && w.experts.is_none());
            // token_embd 49152 rows of 576 q8_0 (18 blocks × 34 B = 612 B) is the output head too.
            assert_eq!((w.token_embd_row_bytes, w.token_embd_rows), (612, 49_152));
            assert!(w.dense_bytes > 49_152 * 612);
            assert_eq!(w.per_step(), 96_577_380);
        }

        #[test]
        fn kv_bytes_per_position_follow_heads_head_size_and_type() {
            let t = |s: &str| GgmlType::from_name(s).unwrap();
            let target = header("TARGET_MODEL");
            // 4 layers × 2 KV heads × 64 dims, K and V: f16 2 B an element; q8_0 2 blocks of 34 B a head.
            let f16 = KvShape::of(&target, t("f16"), t("f16")).unwrap();
            assert_eq!((f16.k_bytes_per_position, f16.v_bytes_per_position), (4 * 2 * 64 * 2, 4 * 2 * 64 * 2));
            assert_eq!(f16.bytes_per_position(), 2048);
            let q8 = KvShape::of(&target, t("q8_0"), t("q8_0")).unwrap();
            assert_eq!(q8.bytes_per_position(), 2 * 4 * 2 * 68);
            let mixed = KvShape::of(&target, t("q8_0"), t("f16")).unwrap();
            assert_eq!(mixed.bytes_per_position(), 4 * 2 * 68 + 4 * 2 * 128);
            assert_eq!(mixed.types(), "K q8_0 / V f16");
            // SmolLM2 has no key_length: n_embd 576 / 9 heads = 64; 30 layers × 3 KV heads.
            let smol = header("SMOLLM2_MODEL");
            let s = KvShape::of(&smol, t("q4_0"), t("q4_0")).unwrap();
            assert_eq!((s.head_dim_k, s.head_dim_v, s.kv_heads.len()), (64, 64, 30));
            assert_eq!(s.bytes_per_position(), 2 * 30 * 3 * (2 * 18));
            assert_eq!(KvShape::of(&smol, t("f16"), t("f16")).unwrap().bytes_per_position(), 2 * 30 * 3 * 64 * 2);
        }

        fn header(key: &str) -> GgufHeader {
            GgufHeader::read(&model(key)).unwrap()
        }
    }
}
