//! Kernel names as tracers print them, reduced to what rules and cross-variant matching need.
//!
//! rocprofv3 and nsys give demangled names with return type, template arguments and parameter
//! list (`void mul_mat_vec_q<(ggml_type)12, 1, false>(void const*, ...)`); rocprofv3 `-T` and
//! nsys `shortName` give only `mul_mat_vec_q`. Template arguments can themselves name other
//! functions (`k_get_rows<32, 1, &(dequantize_q8_0(...)), float>`), so rules match the function
//! name alone, never a substring of the whole string.

const ANON: &str = "(anonymous namespace)::";

/// Strips what never distinguishes kernels: a leading `void ` and a trailing `.kd` (the HSA
/// kernel-descriptor symbol suffix some rocprofv3 names keep).
fn trimmed(full: &str) -> &str {
    let s = full.trim();
    let s = s.strip_prefix("void ").unwrap_or(s).trim_start();
    s.strip_suffix(".kd").unwrap_or(s)
}

/// Byte index where the parameter list starts (`(` outside any template argument), and where
/// the template arguments start, if any.
fn split_points(s: &str) -> (Option<usize>, Option<usize>) {
    let skip = if s.starts_with(ANON) { ANON.len() } else { 0 };
    let mut angle = 0i32;
    let mut template_start = None;
    for (i, c) in s.char_indices().skip_while(|(i, _)| *i < skip) {
        match c {
            '<' => {
                if angle == 0 && template_start.is_none() {
                    template_start = Some(i);
                }
                angle += 1;
            }
            '>' if angle > 0 => angle -= 1,
            '(' if angle == 0 => return (Some(i), template_start),
            _ => {}
        }
    }
    (None, template_start)
}

/// The function name: `mul_mat_vec_q`, `cutlass::Kernel2`, `Cijk_Alik_Bljk_…`.
pub(crate) fn base_name(full: &str) -> &str {
    let s = trimmed(full);
    let (params, template) = split_points(s);
    let end = template.or(params).unwrap_or(s.len());
    s[..end].trim_end()
}

/// The function name with its template arguments, without return type or parameters:
/// `mul_mat_vec_q<(ggml_type)12, 1, false>`. Whitespace runs are collapsed so the same
/// instantiation printed by two tools compares equal.
pub fn instantiation(full: &str) -> String {
    let s = trimmed(full);
    let (params, _) = split_points(s);
    let s = s[..params.unwrap_or(s.len())].trim_end();
    let mut out = String::with_capacity(s.len());
    let mut last_space = false;
    for c in s.chars() {
        if c.is_whitespace() {
            if !last_space {
                out.push(' ');
            }
            last_space = true;
        } else {
            out.push(c);
            last_space = false;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ggml_names_reduce_to_function_name() {
        let full = "void mul_mat_vec_q<(ggml_type)12, 1, false, false, false>(void const*, void const*, float*, int)";
        assert_eq!(base_name(full), "mul_mat_vec_q");
        assert_eq!(instantiation(full), "mul_mat_vec_q<(ggml_type)12, 1, false, false, false>");
        assert_eq!(base_name("mul_mat_vec_q"), "mul_mat_vec_q");
        assert_eq!(instantiation("mul_mat_vec_q"), "mul_mat_vec_q");
    }

    #[test]
    fn template_arguments_naming_functions_do_not_leak_into_the_base_name() {
        let full = "void k_get_rows<32, 1, &(dequantize_q8_0(void const*, long, int, float2&)), float>(void const*, int const*)";
        assert_eq!(base_name(full), "k_get_rows");
        assert_eq!(
            instantiation(full),
            "k_get_rows<32, 1, &(dequantize_q8_0(void const*, long, int, float2&)), float>"
        );
    }

    #[test]
    fn plain_c_names_namespaces_and_blit_kernels() {
        assert_eq!(base_name("saxpy(double *, double *, double *, double, int)"), "saxpy");
        assert_eq!(base_name("__amd_rocclr_fillBufferAligned.kd"), "__amd_rocclr_fillBufferAligned");
        assert_eq!(
            base_name("void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_64x64_16x6_tn_align4>(Params)"),
            "cutlass::Kernel2"
        );
        assert_eq!(
            base_name("void (anonymous namespace)::softmax_warp_forward<float, float, float, 8, false>(float*)"),
            "(anonymous namespace)::softmax_warp_forward"
        );
        assert_eq!(instantiation("void  foo<int,\n  2>(int)"), "foo<int, 2>");
    }
}
