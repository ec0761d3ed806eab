//! Kernel categories: ordered regex rules from a TOML file (the built-in one is
//! `assets/kernel-categories.toml`). The first rule whose regex matches wins; a kernel no rule
//! matches is "other" and listed as unmatched so the rules can be improved.
use std::path::{Path, PathBuf};

use regex::Regex;
use serde::Deserialize;

use super::names;

pub(crate) const OTHER: &str = "other";

const BUILTIN: &str = include_str!("../../assets/kernel-categories.toml");

#[derive(Debug, thiserror::Error)]
pub(crate) enum RulesError {
    #[error("rules file {p}: {source}: check the path given to --rules", p = .path.display())]
    Read { path: PathBuf, source: std::io::Error },
    #[error("rules file {p}: {detail}: each rule is a [[rule]] table with `category` and `regex` (and optionally `match = \"name\"|\"full\"`)", p = .path.display())]
    Parse { path: PathBuf, detail: String },
    #[error("rules file {p}: rule {index} ({category}): invalid regex: {detail}", p = .path.display())]
    Regex { path: PathBuf, index: usize, category: String, detail: String },
    #[error("rules file {p}: no [[rule]] entries: add at least one rule", p = .path.display())]
    NoRules { path: PathBuf },
}

/// A rule's regex, in ASCII mode where the pattern allows it: kernel names are C++ identifiers
/// as the tracer printed them (ASCII), on which `\w`, `\d` and `(?i)` mean the same in both
/// modes, and the Unicode classes make the built-in rules' 36 `\w` most of a small trace's
/// attribution time. A pattern that could match bytes outside UTF-8 in ASCII mode (`.`, say)
/// keeps Unicode mode.
fn compile(pattern: &str) -> Result<Regex, regex::Error> {
    regex::RegexBuilder::new(pattern).unicode(false).build().or_else(|_| Regex::new(pattern))
}

/// What a rule's regex is matched against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum MatchOn {
    /// The function name alone (`mul_mat_vec_q`), see [`names::base_name`].
    #[default]
    Name,
    /// The whole name as the tracer printed it, template arguments and parameters included
    /// (for libraries whose kernel identity is in a template argument, e.g. CUTLASS).
    Full,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleSpec {
    category: String,
    regex: String,
    #[serde(default, rename = "match")]
    match_on: MatchOn,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RulesFile {
    #[serde(default)]
    rule: Vec<RuleSpec>,
}

#[derive(Debug, Clone)]
struct Rule {
    regex: Regex,
    category: usize,
    match_on: MatchOn,
}

#[derive(Debug, Clone)]
pub(crate) struct Rules {
    rules: Vec<Rule>,
    /// Category names in the order they first appear in the file, then "other".
    categories: Vec<String>,
    /// Where the rules came from, for the report.
    pub(crate) source: String,
}

impl Rules {
    pub(crate) fn builtin() -> Rules {
        Rules::parse(BUILTIN, Path::new("assets/kernel-categories.toml"), "built-in".into())
            .expect("the built-in rules parse (tested)")
    }

    pub(crate) fn load(path: &Path) -> Result<Rules, RulesError> {
        let text = std::fs::read_to_string(path).map_err(|source| RulesError::Read { path: path.into(), source })?;
        Rules::parse(&text, path, path.display().to_string())
    }

    fn parse(text: &str, path: &Path, source: String) -> Result<Rules, RulesError> {
        let file: RulesFile = toml::from_str(text)
            .map_err(|e| RulesError::Parse { path: path.into(), detail: e.message().to_string() })?;
        if file.rule.is_empty() {
            return Err(RulesError::NoRules { path: path.into() });
        }
        let mut categories: Vec<String> = Vec::new();
        let mut rules = Vec::with_capacity(file.rule.len());
        for (i, spec) in file.rule.into_iter().enumerate() {
            let regex = compile(&spec.regex).map_err(|e| RulesError::Regex {
                path: path.into(),
                index: i + 1,
                category: spec.category.clone(),
                detail: e.to_string().lines().last().unwrap_or("").trim().to_string(),
            })?;
            let category = match categories.iter().position(|c| *c == spec.category) {
                Some(i) => i,
                None => {
                    categories.push(spec.category);
                    categories.len() - 1
                }
            };
            rules.push(Rule { regex, category, match_on: spec.match_on });
        }
        if !categories.iter().any(|c| c == OTHER) {
            categories.push(OTHER.into());
        }
        Ok(Rules { rules, categories, source })
    }

    /// Category names, in rule-file order, "other" included.
    pub(crate) fn categories(&self) -> &[String] {
        &self.categories
    }

    /// The category of a kernel (by its full name), or `None` when no rule matches.
    pub(crate) fn categorize(&self, full_name: &str) -> Option<&str> {
        let base = names::base_name(full_name);
        self.rules
            .iter()
            .find(|r| match r.match_on {
                MatchOn::Name => r.regex.is_match(base),
                MatchOn::Full => r.regex.is_match(full_name),
            })
            .map(|r| self.categories[r.category].as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cat(name: &str) -> &'static str {
        static RULES: std::sync::OnceLock<Rules> = std::sync::OnceLock::new();
        RULES.get_or_init(Rules::builtin).categorize(name).unwrap_or(OTHER)
    }

    #[test]
    fn builtin_rules_cover_ggml_cuda_and_hip_kernels() {
        let cases = [
            ("void mul_mat_vec_q<(ggml_type)12, 1, false, false, false>(void const*)", "quantized mat-vec"),
            ("mul_mat_vec_q", "quantized mat-vec"),
            ("void mul_mat_q<(ggml_type)12, 64, false>(char const*)", "quantized mat-mat"),
            ("void mul_mat_q_stream_k_fixup<(ggml_type)12, 64, false>(int const*)", "quantized mat-mat"),
            ("void mul_mat_vec_f<float, float, 1, 256, false, false>(float const*)", "float mat-vec/mat-mat"),
            ("void mul_mat_f<__half, 32, 4, 8, false>(__half const*)", "float mat-vec/mat-mat"),
            ("Cijk_Ailk_Bljk_HHS_BH_MT128x128x32_MI32x32x8x1_SN_1LDSB0", "BLAS GEMM"),
            ("Cijk_Alik_Bljk_S_B_Bias_HA_S_SAV_UserArgs_MT64x64x16", "BLAS GEMM"),
            ("void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_64x64_16x6_tn_align4>(Params)", "BLAS GEMM"),
            ("sm90_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas", "BLAS GEMM"),
            ("nvjet_hsh_128x256_64x4_2x1_v_bz_coopA_NTN", "BLAS GEMM"),
            ("void gemv2T_kernel_val<int, int, __half, __half, float, float, 128, 16, 4, 4, false, false>(float, float)", "BLAS GEMM"),
            ("ampere_h16816gemm_128x128_ldg8_stages_32x5_tn", "BLAS GEMM"),
            ("void k_compute_batched_ptrs(__half const*, __half const*, char*)", "BLAS GEMM"),
            ("void flash_attn_ext_f16<128, 128, 16, 1, false, false, false>(char const*)", "flash attention"),
            ("void flash_attn_tile<128, 128, 32, 1, false>(char const*)", "flash attention"),
            ("void flash_attn_ext_vec<128, 1, (ggml_type)8, (ggml_type)8, false>(char const*)", "flash attention"),
            ("void flash_attn_combine_results<128>(float const*)", "flash attention"),
            ("void flash_attn_stream_k_fixup_uniform<128, 16, 1>(float*)", "flash attention"),
            ("void dequantize_block<32, 2, &(dequantize_q8_0(void const*, long, int, float2&)), __half>(void const*)", "dequantize/quantize"),
            ("void dequantize_block_q4_K<__half>(void const*, __half*)", "dequantize/quantize"),
            ("void quantize_q8_1<false>(float const*, void*)", "dequantize/quantize"),
            ("void quantize_mmq_q8_1<(mmq_q8_1_ds_layout)1>(float const*)", "dequantize/quantize"),
            ("void convert_unary<__half, float>(void const*, float*)", "dequantize/quantize"),
            ("void topk_moe_cuda<128, false>(float const*)", "MoE routing/expert matmul"),
            ("void mul_mat_vec_q_moe<(ggml_type)12, 4, false>(void const*)", "MoE routing/expert matmul"),
            ("void mm_ids_helper<8>(int const*)", "MoE routing/expert matmul"),
            ("void mul_mat_f_ids<__half, 32, 4, 8>(__half const*)", "MoE routing/expert matmul"),
            ("void k_argsort_f32_i32<(ggml_sort_order)1>(float const*, int*, int, int)", "MoE routing/expert matmul"),
            ("void moe_weighted_reduction_f32<8>(float const*)", "MoE routing/expert matmul"),
            ("void gated_delta_net_cuda<128, false, false>(float const*)", "gated delta net/SSM"),
            ("void ssm_conv_f32<true, 128ul, 4ul>(float const*)", "gated delta net/SSM"),
            ("void ssm_scan_f32<128, 16, 4>(float const*)", "gated delta net/SSM"),
            ("void gated_linear_attn_f32<64>(int, int)", "gated delta net/SSM"),
            ("void solve_tri_f32_fast<64, 64>(float const*)", "gated delta net/SSM"),
            ("void rms_norm_f32<256, true, false, false>(float const*)", "RMS norm"),
            ("void rms_norm_mul_rope_f32<true>(float const*)", "RMS norm"),
            ("void l2_norm_f32<256>(float const*)", "RMS norm"),
            ("void norm_f32<1024>(float const*)", "RMS norm"),
            ("void rope_neox<true, false, float, float>(float const*)", "RoPE"),
            ("void rope_multi<true, false, float, __half>(float const*)", "RoPE"),
            ("void soft_max_f32<true, 128, 128, float>(float const*)", "softmax"),
            ("void k_bin_bcast<&(op_add(float, float)), float, float, float>(float const*)", "element-wise"),
            ("void unary_gated_op_kernel<&(op_silu(float)), float>(float const*)", "element-wise"),
            ("void unary_op_kernel<&(op_gelu(float)), float>(float const*, float*, int)", "element-wise"),
            ("void scale_f32(float const*, float*, float, float, long)", "element-wise"),
            ("void k_get_rows<32, 1, &(dequantize_q8_0(void const*, long, int, float2&)), float>(void const*)", "copy/get_rows/set_rows/concat"),
            ("void k_get_rows_float<float, float>(float const*)", "copy/get_rows/set_rows/concat"),
            ("void k_set_rows<float, long, __half>(float const*)", "copy/get_rows/set_rows/concat"),
            ("void k_set_rows_quant<long, block_q8_0, 32>(float const*)", "copy/get_rows/set_rows/concat"),
            ("void cpy_scalar<&(cpy_1_scalar<float, __half>(char const*, char*))>(char const*, char*)", "copy/get_rows/set_rows/concat"),
            ("void cpy_f32_q<&(cpy_blck_f32_q8_0(char const*, char*)), 32>(char const*)", "copy/get_rows/set_rows/concat"),
            ("void concat_f32_dim0(float const*, float const*, float*, int, int, int)", "copy/get_rows/set_rows/concat"),
            ("__amd_rocclr_fillBufferAligned.kd", "memcpy/memset"),
            ("__amd_rocclr_copyBuffer", "memcpy/memset"),
            ("[CUDA memcpy Device-to-Device]", "memcpy/memset"),
            ("void greedy_sampler_fused<256>(float const*, int*, int)", OTHER),
        ];
        let mut wrong = Vec::new();
        for (name, want) in cases {
            if cat(name) != want {
                wrong.push(format!("{name} -> {} (want {want})", cat(name)));
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }

    /// Every `__global__` kernel the ops of the pinned tree's qwen35moe graph launch on CUDA (the
    /// HIP build compiles the same sources, so ROCm names are the same, but for the vendor
    /// libraries' own), MTP head included (ggml/src/ggml-cuda/*.cu of llama.cpp 0c1e57098): none
    /// is left in "other".
    #[test]
    fn builtin_rules_cover_the_qwen35moe_and_mtp_path() {
        let gdn = "gated delta net/SSM";
        let cases = [
            // linear attention: conv, the fused recurrent delta net, the chunked prefill's pieces
            ("void ssm_conv_f32<true, 128ul, 4ul>(float const*)", gdn),
            ("void ssm_conv_long_token_f32<true, 128ul, 4ul, 32l>(float const*)", gdn),
            ("void gated_delta_net_cuda<128, false, false>(float const*, float const*)", gdn),
            ("void solve_tri_f32_fast<0, 0>(float const*, float const*, float*)", gdn),
            ("void get_batch_pointers(float const*, float*, float const**, float**)", gdn),
            ("void trsm_right_kernel<float, 256, 32, true, false>(cublasTrsmParams<float>)", gdn),
            ("rocblas_trsm_small_right_device", gdn),
            ("void cumsum_kernel<float, 256>(float const*, float*)", gdn),
            ("void cumsum_cub_kernel<float, 256>(float const*, float*)", gdn),
            ("void cub::CUB_300200_SM_900::detail::scan::DeviceScanKernel<Policy, float*>(float*)", gdn),
            ("void cub::CUB_300200_SM_900::detail::scan::DeviceScanInitKernel<ScanTileState>(int)", gdn),
            ("void rocprim::detail::lookback_scan_kernel<false, config, float*>(float*)", gdn),
            ("void tri_kernel<float>(float const*, float*)", gdn),
            ("void diag_kernel<float>(float const*, float*)", gdn),
            ("void l2_norm_f32<256>(float const*, float*)", "RMS norm"),
            // the gates: sigmoid, softplus, exp, neg; the decay mask's fills, pads and repeats
            ("void unary_op_kernel<&(op_sigmoid(float)), float>(float const*, float*, int)", "element-wise"),
            ("void unary_op_kernel<&(op_softplus(float)), float>(float const*, float*, int)", "element-wise"),
            ("void fill_kernel<float>(float*, long, float)", "element-wise"),
            ("void pad_f32(float const*, float*)", "element-wise"),
            ("void k_repeat<float>(float const*, float*)", "element-wise"),
            ("void k_sum_rows_f32(float const*, float*)", "element-wise"),
            ("void reduce_rows_f32<true>(float const*, float*, int)", "element-wise"),
            ("void cub::CUB_300200_SM_900::DeviceReduceSingleTileKernel<Policy, float*>(float*)", "element-wise"),
            ("void rocprim::detail::block_reduce_kernel<config, float*>(float*)", "element-wise"),
            // experts and the router, the full-attention block, the MTP head's concat and projection
            ("void topk_moe_cuda<8, true, false>(float const*, float*, int*)", "MoE routing/expert matmul"),
            (
                "void cub::CUB_300200_SM_900::detail::topk::DeviceTopKKernel<Policy, float*>(float*)",
                "MoE routing/expert matmul",
            ),
            (
                "void cub::CUB_300200_SM_900::DeviceSegmentedRadixSortKernel<Policy, false>(float*)",
                "MoE routing/expert matmul",
            ),
            ("void rocprim::detail::segmented_sort_kernel<config, float*>(float*)", "MoE routing/expert matmul"),
            ("void mul_mat_vec_q_moe<(ggml_type)12, 4, false>(void const*)", "MoE routing/expert matmul"),
            ("void mul_mat_q<(ggml_type)12, 128, false>(char const*)", "quantized mat-mat"),
            ("void mul_mat_vec_f<__half, float, 1, 256, false, false>(__half const*)", "float mat-vec/mat-mat"),
            ("void flash_attn_ext_vec<256, 1, (ggml_type)1, (ggml_type)1, false>(char const*)", "flash attention"),
            ("void rope_multi<true, false, float, float>(float const*)", "RoPE"),
            (
                "void concat_f32_dim0(float const*, float const*, float*, int, int, int)",
                "copy/get_rows/set_rows/concat",
            ),
            ("void k_set_rows<float, long, __half>(float const*)", "copy/get_rows/set_rows/concat"),
        ];
        let wrong: Vec<String> = cases
            .iter()
            .filter(|(name, want)| cat(name) != *want)
            .map(|(name, want)| format!("{name} -> {} (want {want})", cat(name)))
            .collect();
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
        assert_eq!(cat("rocblas_sgemm_kernel"), "BLAS GEMM", "only trsm is taken from BLAS");
    }

    /// ASCII mode decides as Unicode mode would on the builtin rules and every kernel name of the
    /// real H200 traces, and falls back to Unicode mode where a pattern needs it; a name outside
    /// ASCII is still categorized.
    #[test]
    fn ascii_mode_decides_as_unicode_mode() {
        let file: RulesFile = toml::from_str(BUILTIN).unwrap();
        let both: Vec<(Regex, Regex)> =
            file.rule.iter().map(|r| (compile(&r.regex).unwrap(), Regex::new(&r.regex).unwrap())).collect();
        let mut names: Vec<String> = Vec::new();
        for kv in ["f16", "q8_0"] {
            let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("traces/nsys-h200-kv-{kv}-4steps.sqlite"));
            let conn = rusqlite::Connection::open(path).unwrap();
            let mut stmt = conn.prepare("SELECT value FROM StringIds").unwrap();
            names.extend(stmt.query_map([], |r| r.get::<_, String>(0)).unwrap().map(Result::unwrap));
        }
        assert!(names.len() > 40, "{}", names.len());
        names.push("void größe_kernel<ä>(float const*)".into());
        for name in &names {
            for (ascii, unicode) in &both {
                for s in [name.as_str(), names::base_name(name)] {
                    assert_eq!(ascii.is_match(s), unicode.is_match(s), "{} on {s}", unicode.as_str());
                }
            }
        }
        assert!(compile("(?i)^rms_\\w+$").is_ok() && compile("^a.b$").unwrap().is_match("aéb"));
    }

    #[test]
    fn unmatched_is_none_and_other_is_listed_last() {
        let rules = Rules::builtin();
        assert_eq!(rules.categorize("saxpy(double *, double *)"), None);
        assert_eq!(rules.categories().last().map(String::as_str), Some(OTHER));
        assert_eq!(rules.categories().len(), 16);
        assert_eq!(rules.categorize("fwht_cuda"), Some("KV rotation (Hadamard)"));
    }

    #[test]
    fn bad_rules_files_name_the_problem() {
        let e =
            Rules::parse("[[rule]]\ncategory = \"x\"\nregex = \"(\"\n", Path::new("r.toml"), "t".into()).unwrap_err();
        assert!(e.to_string().contains("rule 1 (x): invalid regex"), "{e}");
        let e =
            Rules::parse("[[rule]]\ncategory = \"x\"\nregexp = \"a\"\n", Path::new("r.toml"), "t".into()).unwrap_err();
        assert!(e.to_string().contains("unknown field"), "{e}");
        let e = Rules::parse("", Path::new("r.toml"), "t".into()).unwrap_err();
        assert!(matches!(e, RulesError::NoRules { .. }));
    }
}
