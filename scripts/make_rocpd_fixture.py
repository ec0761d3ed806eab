#!/usr/bin/env python3
"""Writes rocpd (rocprofv3 SQLite) trace databases for abprof's tests and benchmark.

No real rocpd database small enough is public, so this script builds them the way rocprofv3
does: it executes the official DDL (ROCm/rocm-systems,
projects/rocprofiler-sdk/source/share/rocprofiler-sdk-rocpd/*.sql, MIT), read at run time from
--schema-dir, with `{{uuid}}` / `{{guid}}` replaced by a UUIDv7 exactly as the writer does
(`_` + the UUID with `-` turned into `_` for table suffixes, the dashed UUID for `guid`
defaults). Nothing of the DDL is copied here.

The data is a synthetic llama-server request on a small hybrid Qwen3.5-like model (gated delta
net layers alternating with full-attention layers, MoE FFN) with ggml's real HIP kernel names:
model warmup at load, a prefill step, then N-1 decode steps, each kernel's duration in integer
ns from a seeded generator. Every dispatch's intended category is known here, independently of
abprof's regex rules, and the per-phase totals are written to an `expected` JSON that the Rust
tests compare exactly.

Kinds:
  trace       an `abprof trace`-style folder: OUT/trace.db + OUT/trace.json (manifest with the
              decode and prefill windows in CLOCK_BOOTTIME ns and untraced ms/token samples)
              [--expected FILE] writes the known totals.
  bench       a large database (--dispatches, default 2,100,000) of decode steps, no manifest.
  legacy-rpd  a database shaped like the old rocmProfileData (RPD) format, whose tables also
              start with `rocpd_` (rocpd_op, rocpd_api, rocpd_kernelapi, ...), for refusal tests;
              its DDL is written here from the tables of ROCm/rocmProfileData's example
              results/matmul_result.rpd.
  corrupt     a file that starts with the SQLite header and continues with garbage.

Usage:
  make_rocpd_fixture.py --schema-dir DIR --kind trace --out traces/rocpd-f16 --kv f16 \
      --expected traces/rocpd-f16.expected.json
  make_rocpd_fixture.py --schema-dir DIR --kind bench --out ~/.cache/abprof/bench/decode-2M.db
Stdlib only; output is deterministic for a given seed.
"""
import argparse
import json
import os
import random
import sqlite3
import sys

SCHEMA_FILES = ["rocpd_tables.sql", "rocpd_indexes.sql", "rocpd_views.sql",
                "data_views.sql", "marker_views.sql", "summary_views.sql"]

# Category names: must equal those in assets/kernel-categories.toml.
QMV = "quantized mat-vec"
QMM = "quantized mat-mat"
FMV = "float mat-vec/mat-mat"
BLAS = "BLAS GEMM"
FA = "flash attention"
QUANT = "dequantize/quantize"
MOE = "MoE routing/expert matmul"
SSM = "gated delta net/SSM"
NORM = "RMS norm"
ROPE = "RoPE"
SOFTMAX = "softmax"
ELEM = "element-wise"
COPY = "copy/get_rows/set_rows/concat"
MEM = "memcpy/memset"
OTHER = "other"

P = "void const*, void const*, float*, int, int, int, int, int, int"
# key -> (display name as rocprofv3 demangles it, category)
KERNELS = {
    "get_rows": ("void k_get_rows<32, 1, &(dequantize_q8_0(void const*, long, int, float2&)), float>"
                 "(void const*, int const*, float*, long, long, long, unsigned long, unsigned long, "
                 "unsigned long, unsigned long, unsigned long, unsigned long, unsigned long, unsigned long)", COPY),
    "rms_norm": ("void rms_norm_f32<256, true, false, false>(float const*, float*, int, long, long, long, "
                 "float, float const*, long, long, long, uint3, uint3, uint3, uint3, float const*, long, long, "
                 "long, uint3, uint3, uint3, uint3)", NORM),
    "quant_q8_1": ("void quantize_q8_1<false>(float const*, void*, long, long, long, long, long, long, uint3, uint3)", QUANT),
    "mmvq_q4k": (f"void mul_mat_vec_q<(ggml_type)12, 1, false, false, false>({P})", QMV),
    "mmvq_q6k": (f"void mul_mat_vec_q<(ggml_type)14, 1, false, false, false>({P})", QMV),
    "ssm_conv": ("void ssm_conv_f32<true, 128ul, 4ul>(float const*, float const*, int, int, int, int, float*, "
                 "int, int, int, long)", SSM),
    "mmvf": ("void mul_mat_vec_f<float, float, 1, 256, false, false>(float const*, float const*, int const*, "
             "float*, int, int, int, int, int, int, int, int, int, int, int, int)", FMV),
    "gdn": ("void gated_delta_net_cuda<128, false, false>(float const*, float const*, float const*, "
            "float const*, float const*, float const*, float*, long, long, long, long, long, long, float)", SSM),
    "silu_gate": ("void unary_gated_op_kernel<&(op_silu(float)), float>(float const*, float const*, float*, "
                  "long, long, long, long)", ELEM),
    "rope": ("void rope_neox<true, false, float, float>(float const*, float*, int, int, int, int, int, int, "
             "int, float, float, float, rope_corr_dims, float, float const*, mrope_sections, bool, int)", ROPE),
    "set_rows_f16": ("void k_set_rows<float, long, __half>(float const*, long const*, __half*, long, long, long, "
                     "long, long, long, long, long, long, long, long, long, long, long, long, long, long, "
                     "uint3, uint3, uint3, uint3)", COPY),
    "set_rows_q8_0": ("void k_set_rows_quant<long, block_q8_0, 32, &(quantize_f32_q8_0_block(float const*, "
                      "block_q8_0*))>(float const*, long const*, block_q8_0*, long, long, long, long, long, "
                      "long, long, long, long, long, long, long, long, long, long, long, uint3, uint3, uint3, "
                      "uint3)", COPY),
    "fa_vec_f16": ("void flash_attn_ext_vec<128, 1, (ggml_type)1, (ggml_type)1, false>(char const*, char const*, "
                   "char const*, char const*, char const*, int const*, float*, float2*, float, float, float, "
                   "float, unsigned int, float, int, uint3, int, int, int, int, int, int, int, int, int, int, "
                   "int, long, int, int, long, int, int, int, int, int, long)", FA),
    "fa_vec_q8_0": ("void flash_attn_ext_vec<128, 1, (ggml_type)8, (ggml_type)8, false>(char const*, "
                    "char const*, char const*, char const*, char const*, int const*, float*, float2*, float, "
                    "float, float, float, unsigned int, float, int, uint3, int, int, int, int, int, int, int, "
                    "int, int, int, int, long, int, int, long, int, int, int, int, int, long)", FA),
    "fa_combine": ("void flash_attn_combine_results<128>(float const*, float2 const*, float*, int)", FA),
    "bin_add": ("void k_bin_bcast<&(op_add(float, float)), float, float, float>(float const*, float const*, "
                "float*, int, int, int, int, int, int, int, int, int, int, int, int, int, int, int, int, int, "
                "int, int, int, int, int)", ELEM),
    "topk_moe": ("void topk_moe_cuda<128, false>(float const*, float*, int*, int, int, float, float, "
                 "topk_moe_config)", MOE),
    "mmvq_moe_q4k": (f"void mul_mat_vec_q_moe<(ggml_type)12, 4, false>({P})", MOE),
    "mmvq_moe_q6k": (f"void mul_mat_vec_q_moe<(ggml_type)14, 4, false>({P})", MOE),
    "moe_reduce": ("void moe_weighted_reduction_f32<8>(float const*, float const*, float*, int, int, int)", MOE),
    "swiglu": ("void unary_gated_op_kernel<&(op_silu(float)), float>(float const*, float const*, float*, long, "
               "long, long, long)", ELEM),
    "sampler": ("void greedy_sampler_fused<256>(float const*, int*, int)", OTHER),
    "copy_buf": ("__amd_rocclr_copyBuffer", MEM),
    "fill_buf": ("__amd_rocclr_fillBufferAligned", MEM),
    # prefill-only kernels
    "quant_mmq": ("void quantize_mmq_q8_1<(mmq_q8_1_ds_layout)1>(float const*, int const*, void*, long, long, "
                  "long, long, long, long, long)", QUANT),
    "mmq_q4k": (f"void mul_mat_q<(ggml_type)12, 64, false>({P}, int, int, int, int, int, int)", QMM),
    "mmq_q6k": (f"void mul_mat_q<(ggml_type)14, 64, false>({P}, int, int, int, int, int, int)", QMM),
    "mmq_fixup": (f"void mul_mat_q_stream_k_fixup<(ggml_type)12, 64, false>({P})", QMM),
    "fa_f16": ("void flash_attn_ext_f16<128, 128, 16, 1, false, false, false>(char const*, char const*, "
               "char const*, char const*, char const*, int const*, float*, float2*, float, float, float, "
               "float, unsigned int, float, int, uint3, int, int, int, int, int, int, int, int, int, int, int, "
               "long, int, int, long, int, int, int, int, int, long)", FA),
    "hipblaslt": ("Cijk_Alik_Bljk_S_B_Bias_HA_S_SAV_UserArgs_MT64x64x16_MI16x16x1_SN_LDSB1_AFC1_AFEM1_"
                  "AFEM1_ASEM1_CLR1_CADS0_DTVA0_DTVB0_EPS0_FDSI0_GRPM1_GRVWA4_GRVWB4_GSUAMB_GLS0_ISA1151_"
                  "IU1_K1_LBSPPA0_LBSPPB128_LBSPPM0_LPA0_LPB4_LPM0_LRVW4_LWPMn1_MIAV0_MIWT2_2_MO40_NTn1_"
                  "NTA0_NTB0_NTC0_NTD0_NTM0_NEPBS0_NLCA1_NLCB1_ONLL1_PGR2_PLR1_PKA1_SIA3_SS1_SPO0_SRVW0_"
                  "SSO0_SVW1_SK0_SKFTR0_SKXCCM0_TLDS1_ULSGRO0_USL1_UIOFGRO0_USFGROn1_VSn1_VWA1_VWB1_WSGRA0_"
                  "WSGRB0_WS32_WG32_4_1", BLAS),
    "mm_ids": ("void mm_ids_helper<8>(int const*, int*, int*, int*, int, int, int, int, int, int, uint3, int)", MOE),
    "softmax": ("void soft_max_f32<true, 128, 128, float>(float const*, float const*, float const*, float*, "
                "soft_max_params)", SOFTMAX),
    "cpy_f16": ("void cpy_scalar<&(cpy_1_scalar<float, __half>(char const*, char*))>(char const*, char*, long, "
                "long, long, long, long, long, long, long, long, long, long, long, long, long)", COPY),
    "concat": ("void concat_f32_dim0(float const*, float const*, float*, int, int, int)", COPY),
    "dequant": ("void dequantize_block<32, 2, &(dequantize_q8_0(void const*, long, int, float2&)), __half>"
                "(void const*, __half*, long, long, long, long, long, long, long)", QUANT),
}

# Decode durations in ns (before jitter); prefill multiplies matmul-like work.
DECODE_NS = {
    "get_rows": 3_100, "rms_norm": 4_200, "quant_q8_1": 2_300, "mmvq_q4k": 44_000, "mmvq_q6k": 61_000,
    "ssm_conv": 5_200, "mmvf": 6_400, "gdn": 18_500, "silu_gate": 3_000, "rope": 3_300,
    "set_rows_f16": 2_900, "set_rows_q8_0": 4_700, "fa_vec_f16": 29_500, "fa_vec_q8_0": 47_800,
    "fa_combine": 2_800, "bin_add": 3_100, "topk_moe": 4_100, "mmvq_moe_q4k": 58_000,
    "mmvq_moe_q6k": 36_000, "moe_reduce": 3_200, "swiglu": 3_400, "sampler": 9_800,
    "copy_buf": 5_100, "fill_buf": 2_000, "quant_mmq": 9_000, "mmq_q4k": 610_000,
    "mmq_q6k": 820_000, "mmq_fixup": 12_000, "fa_f16": 240_000, "hipblaslt": 150_000,
    "mm_ids": 11_000, "softmax": 21_000, "cpy_f16": 14_000, "concat": 7_000, "dequant": 38_000,
}


def uuid_v7(rng, unix_ms):
    """A UUIDv7 (RFC 9562): 48-bit ms timestamp, version 7, variant 10, random rest."""
    rand_a = rng.getrandbits(12)
    rand_b = rng.getrandbits(62)
    value = (unix_ms & ((1 << 48) - 1)) << 80 | 0x7 << 76 | rand_a << 64 | 0b10 << 62 | rand_b
    h = f"{value:032x}"
    return f"{h[0:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def mangle(display):
    """A plausible Itanium-mangled symbol for the kernel_name column (abprof reads display_name)."""
    name = display.split("<", 1)[0].split("(", 1)[0].replace("void ", "").strip()
    return f"_Z{len(name)}{name}PKvPfi.kd"


def create_schema(con, schema_dir, uuid, schema_version=None):
    """Runs the DDL of one schema version. rocpd_tables.sql is required; the others run where the
    folder has them (a versions/X/ folder of rocprofiler-sdk-rocpd holds what that version
    changed, plus rocpd_metadata.sql from 3.0.2 on, whose `{{schema_version…}}` placeholders are
    filled from `schema_version`)."""
    suffix = "_" + uuid.replace("-", "_")
    if not os.path.exists(os.path.join(schema_dir, SCHEMA_FILES[0])):
        sys.exit(f"make_rocpd_fixture: {os.path.join(schema_dir, SCHEMA_FILES[0])} not found: pass --schema-dir "
                 "pointing at the rocprofiler-sdk-rocpd DDL folder (shared/reference/rocpd-schema)")
    parts = (schema_version or "0.0.0").split(".") + ["0", "0"]
    for fname in SCHEMA_FILES + ["rocpd_metadata.sql"]:
        path = os.path.join(schema_dir, fname)
        if not os.path.exists(path):
            continue
        with open(path) as f:
            sql = (f.read().replace("{{uuid}}", suffix).replace("{{guid}}", uuid)
                   .replace("{{schema_version}}", schema_version or "")
                   .replace("{{schema_version_major}}", parts[0])
                   .replace("{{schema_version_minor}}", parts[1])
                   .replace("{{schema_version_patch}}", parts[2]))
        con.executescript(sql)
    return suffix


def insert(con, table, rows):
    """Inserts dicts into `table`, each with the columns the table has (schema versions differ:
    4.x moved a dispatch's nid/pid/tid/agent/queue/stream into rocpd_track and added track_id)."""
    have = {r[1] for r in con.execute(f'PRAGMA table_info("{table}")')}
    rows = list(rows)
    if not rows:
        return None
    cols = [c for c in rows[0] if c in have]
    sql = (f'INSERT INTO "{table}" (' + ", ".join(f'"{c}"' for c in cols) + ") VALUES ("
           + ", ".join("?" for _ in cols) + ")")
    cur = None
    for r in rows:
        cur = con.execute(sql, [r[c] for c in cols])
    return cur


class Writer:
    """Inserts info rows once, then dispatches (each with its rocpd_event row)."""

    def __init__(self, con, suffix, pid, kernel_keys):
        self.con, self.s, self.pid = con, suffix, pid
        self.tid = pid + 3
        s = suffix
        insert(con, f"rocpd_info_node{s}", [dict(
            id=1, hash=7310925484190243723, machine_id="2f1b7c0e9a8d4e55b3c6a1f0d2e4b6c8", system_name="Linux",
            hostname="strix", release="6.17.0-rc3", version="#1 SMP PREEMPT_DYNAMIC", hardware_name="x86_64",
            domain_name="(none)", name="strix")])
        insert(con, f"rocpd_info_process{s}", [dict(
            id=pid, nid=1, ppid=4021, pid=pid, init=0, fini=0, start=0, end=0, command="llama-server",
            name="llama-server")])
        for tid, name in ((pid, "llama-server"), (self.tid, "llama-server")):
            con.execute(f'INSERT INTO "rocpd_info_thread{s}" (id, nid, ppid, pid, tid, name, start, "end") '
                        f'VALUES (?, 1, 4021, ?, ?, ?, 0, 0)', (tid, pid, tid, name))
        agent = dict(nid=1, pid=pid, uuid=0, model_name="", user_name="", generic_name="")
        insert(con, f"rocpd_info_agent{s}", [
            dict(agent, id=0, type="CPU", absolute_index=0, logical_index=0, type_index=0,
                 name="AMD RYZEN AI MAX+ 395", vendor_name="CPU", product_name="AMD RYZEN AI MAX+ 395 w/ Radeon 8060S",
                 extdata='{"cpu_cores_count": 32}'),
            dict(agent, id=1, type="GPU", absolute_index=1, logical_index=1, type_index=0, name="gfx1151",
                 vendor_name="AMD", product_name="AMD Radeon 8060S Graphics",
                 extdata='{"cu_count": 40, "gfx_target_version": 110501}')])
        con.execute(f'INSERT INTO "rocpd_info_queue{s}" (id, nid, pid, name) VALUES (1, 1, ?, "Queue 1")', (pid,))
        con.execute(f'INSERT INTO "rocpd_info_stream{s}" (id, nid, pid, name) VALUES (0, 1, ?, "Stream 0")', (pid,))
        con.execute(f'INSERT INTO "rocpd_info_code_object{s}" (id, nid, pid, agent_id, uri, load_base, '
                    f'load_size, load_delta, storage_type) VALUES (1, 1, ?, 1, '
                    f'"file:///opt/llama/lib/libggml-hip.so#offset=1662976&size=96075848", 140233000000000, '
                    f'96075848, 0, "FILE")', (pid,))
        cur = con.execute(f'INSERT INTO "rocpd_string{s}" (string) VALUES ("KERNEL_DISPATCH")')
        self.category_id = cur.lastrowid
        cur = con.execute(f'INSERT INTO "rocpd_string{s}" (string) VALUES ("")')
        self.region_id = cur.lastrowid
        self.kernel_id = {}
        for i, key in enumerate(kernel_keys, start=1):
            display = KERNELS[key][0]
            con.execute(f'INSERT INTO "rocpd_info_kernel_symbol{s}" (id, nid, pid, code_object_id, '
                        f'kernel_name, display_name, kernel_object, kernarg_segment_size, '
                        f'kernarg_segment_alignment, group_segment_size, private_segment_size, sgpr_count, '
                        f'arch_vgpr_count, accum_vgpr_count, extdata) VALUES (?, 1, ?, 1, ?, ?, ?, 256, 8, '
                        f'4096, 0, 48, 64, 0, ?)',
                        (i, pid, mangle(display), display, 140233010000000 + 64 * i,
                         json.dumps({"formatted_kernel_name": display})))
            self.kernel_id[key] = i
        # 4.x: a dispatch's process, thread, agent, queue and stream are one rocpd_track row.
        self.has_track = any(r[1] == "track_id" for r in con.execute(f'PRAGMA table_info("rocpd_kernel_dispatch{s}")'))
        if self.has_track:
            insert(con, f"rocpd_track{s}", [dict(id=1, nid=1, ppid=4021, pid=pid, tid=self.tid, agent_id=1,
                                                 queue_id=1, stream_id=0)])
        self.next_dispatch = 1
        self.rows = []

    def dispatch(self, key, start, end):
        d = self.next_dispatch
        self.next_dispatch += 1
        self.rows.append((d, key, start, end))
        if len(self.rows) >= 50_000:
            self.flush()

    def flush(self):
        s = self.s
        self.con.executemany(
            f'INSERT INTO "rocpd_event{s}" (id, category_id, stack_id, parent_stack_id, correlation_id) '
            f'VALUES (?, ?, ?, 0, 0)', [(d, self.category_id, d) for d, _, _, _ in self.rows])
        insert(self.con, f"rocpd_kernel_dispatch{s}", (
            dict(id=d, nid=1, pid=self.pid, tid=self.tid, agent_id=1, track_id=1, kernel_id=self.kernel_id[k],
                 dispatch_id=d, queue_id=1, stream_id=0, start=st, end=en, private_segment_size=0,
                 group_segment_size=4096, workgroup_size_x=256, workgroup_size_y=1, workgroup_size_z=1,
                 grid_size_x=65536, grid_size_y=1, grid_size_z=1, region_name_id=self.region_id, event_id=d)
            for d, k, st, en in self.rows))
        self.rows = []


def step_kernels(phase, layers, kv):
    """The kernel sequence of one llama_decode call (a ubatch) of the synthetic model."""
    decode = phase == "decode"
    mv4 = "mmvq_q4k" if decode else "mmq_q4k"
    mv6 = "mmvq_q6k" if decode else "mmq_q6k"
    q = "quant_q8_1" if decode else "quant_mmq"
    seq = ["get_rows"]
    for layer in range(layers):
        seq += ["rms_norm", q]
        if layer % 2 == 0:  # gated delta net (linear attention) layer
            seq += [mv4, "ssm_conv", "mmvf" if decode else "hipblaslt", "gdn", "rms_norm", "silu_gate"]
            if not decode:
                seq += ["concat"]
        else:  # full attention layer
            seq += [mv4, mv4, mv6, "rope", "rope"]
            seq += ["set_rows_f16", "set_rows_f16"] if kv == "f16" else ["set_rows_q8_0", "set_rows_q8_0"]
            if decode:
                seq += ["fa_vec_f16" if kv == "f16" else "fa_vec_q8_0", "fa_combine"]
            else:
                seq += (["fa_f16"] if kv == "f16" else ["dequant", "dequant", "fa_f16"])
        seq += [q, mv4, "bin_add", "rms_norm"]
        seq += ["mmvf" if decode else "hipblaslt", "topk_moe" if decode else "softmax"]
        if decode:
            seq += [q, "mmvq_moe_q4k", "swiglu", q, "mmvq_moe_q6k", "moe_reduce", "bin_add"]
        else:
            seq += ["mm_ids", q, "mmq_q4k", "mmq_fixup", "swiglu", q, "mmq_q6k", "moe_reduce", "bin_add"]
    seq += ["rms_norm", q, mv6, "sampler", "copy_buf"]
    if not decode:
        seq += ["cpy_f16"]
    return seq


def duration(rng, key, phase):
    base = DECODE_NS[key]
    if phase == "prefill" and key in ("rms_norm", "bin_add", "swiglu", "silu_gate", "rope", "ssm_conv", "gdn",
                                      "get_rows", "set_rows_f16", "set_rows_q8_0", "moe_reduce"):
        base *= 12
    return int(base * rng.uniform(0.95, 1.05))


def run_step(w, rng, seq, phase, t, acc):
    """Dispatches one step back to back (HIP launch gaps of 2-6 µs); returns its end time."""
    for key in seq:
        t += rng.randint(2_000, 6_000)
        d = duration(rng, key, phase)
        w.dispatch(key, t, t + d)
        if acc is not None:
            name, cat = KERNELS[key]
            for table, k in ((acc["categories"], cat), (acc["kernels"], name)):
                e = table.setdefault(k, {"calls": 0, "total_ns": 0})
                e["calls"] += 1
                e["total_ns"] += d
        t += d
    return t


def used_keys(layers, kv):
    keys = []
    for phase in ("decode", "prefill"):
        for k in step_kernels(phase, layers, kv):
            if k not in keys:
                keys.append(k)
    return keys + ["fill_buf"]


def make_trace(args):
    rng = random.Random(args.seed)
    t0 = 1_550_151_853_029_637  # boottime ns (~18 days up), as in rocprofv3's sample kernel_trace.csv
    unix_ms = 1_785_000_000_000
    uuid = uuid_v7(rng, unix_ms)
    os.makedirs(args.out, exist_ok=True)
    db = os.path.join(args.out, "trace.db")
    if os.path.exists(db):
        os.remove(db)
    con = sqlite3.connect(db)
    suffix = create_schema(con, args.schema_dir, uuid, args.schema_version)
    w = Writer(con, suffix, 4_107_233, used_keys(args.layers, args.kv))
    phases = {p: {"categories": {}, "kernels": {}} for p in ("before_prefill", "prefill", "decode", "after_decode")}

    # model warmup at load (one small decode), then the server idles until the request comes
    t = run_step(w, rng, step_kernels("decode", args.layers, args.kv), "decode", t0, phases["before_prefill"])
    t += 1_700_000_000
    request_sent = t
    t += 450_000  # HTTP + tokenization before the first kernel
    t = run_step(w, rng, step_kernels("prefill", args.layers, args.kv), "prefill", t, phases["prefill"])
    first_token = t + 310_000  # logits copy, sampling, the first SSE chunk
    t = first_token
    for _ in range(args.output_tokens - 1):
        t += rng.randint(180_000, 260_000)  # sampling + graph build between steps
        t = run_step(w, rng, step_kernels("decode", args.layers, args.kv), "decode", t, phases["decode"])
    last_token = t + 120_000
    # shutdown: a buffer fill after the last token, outside the decode window
    t = last_token + 400_000_000
    w.dispatch("fill_buf", t, t + DECODE_NS["fill_buf"])
    e = phases["after_decode"]
    e["categories"][MEM] = {"calls": 1, "total_ns": DECODE_NS["fill_buf"]}
    e["kernels"][KERNELS["fill_buf"][0]] = {"calls": 1, "total_ns": DECODE_NS["fill_buf"]}
    w.flush()
    con.commit()
    con.close()

    decode_steps = args.output_tokens - 1
    gpu_ms_per_token = sum(v["total_ns"] for v in phases["decode"]["categories"].values()) / decode_steps / 1e6
    # launch gaps and host work make the measured (untraced) time ~9% longer than kernel time
    median = round(gpu_ms_per_token * 1.09, 4)
    samples = [round(median * f, 4) for f in (0.996, 1.0, 1.003)]
    manifest = {
        "label": args.label or f"kv-{args.kv}",
        "variant": f"{args.label or 'kv-' + args.kv}=/opt/llama/bin/llama-server|kv={args.kv}",
        "tracer": "rocprofv3",
        "trace_file": "trace.db",
        "prompt_tokens": args.prompt_tokens,
        "output_tokens": args.output_tokens,
        "decode_window": {"start_ns": first_token, "end_ns": last_token},
        "prefill_window": {"start_ns": request_sent, "end_ns": first_token},
        "untraced": {"output_tokens": args.untraced_tokens or args.output_tokens,
                     "ms_per_token": samples, "median_ms_per_token": median},
        "created_at": "2026-08-02T10:00:00Z",
    }
    with open(os.path.join(args.out, "trace.json"), "w") as f:
        json.dump(manifest, f, indent=2)
        f.write("\n")
    if args.expected:
        expected = {"uuid": uuid, "decode_steps": decode_steps, "dispatches": w.next_dispatch - 1,
                    "decode_window": manifest["decode_window"], "prefill_window": manifest["prefill_window"],
                    "measured_ms_per_token": median, "phases": phases}
        with open(args.expected, "w") as f:
            json.dump(expected, f, indent=1, sort_keys=True)
            f.write("\n")
    print(f"wrote {db}: {w.next_dispatch - 1} dispatches, UUID {uuid}")


def make_bench(args):
    rng = random.Random(args.seed)
    uuid = uuid_v7(rng, 1_785_000_000_000)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    tmp = args.out + ".partial"
    if os.path.exists(tmp):
        os.remove(tmp)
    con = sqlite3.connect(tmp)
    suffix = create_schema(con, args.schema_dir, uuid, args.schema_version)
    # The DDL turns foreign keys on; checking them on millions of inserts only slows generation.
    con.execute("PRAGMA foreign_keys = OFF")
    con.execute("PRAGMA journal_mode = OFF")
    con.execute("PRAGMA synchronous = OFF")
    w = Writer(con, suffix, 4_107_233, used_keys(args.layers, "f16"))
    seq = step_kernels("decode", args.layers, "f16")
    t = 1_550_151_853_029_637
    while w.next_dispatch <= args.dispatches:
        t += rng.randint(180_000, 260_000)
        t = run_step(w, rng, seq, "decode", t, None)
    w.flush()
    con.commit()
    con.close()
    os.replace(tmp, args.out)
    print(f"wrote {args.out}: {w.next_dispatch - 1} dispatches, UUID {uuid}")


LEGACY_RPD_DDL = """
CREATE TABLE rocpd_string(id integer primary key, string varchar(4096));
CREATE TABLE rocpd_op(id integer primary key, gpuId integer, queueId integer, sequenceId integer,
    completionSignal varchar(18), start integer, end integer, description_id integer, opType_id integer);
CREATE TABLE rocpd_api(id integer primary key, pid integer, tid integer, start integer, end integer,
    apiName_id integer, args_id integer);
CREATE TABLE rocpd_api_ops(id integer primary key, api_id integer, op_id integer);
CREATE TABLE rocpd_kernelapi(api_ptr_id integer primary key, stream varchar(18), gridX integer,
    gridY integer, gridZ integer, workgroupX integer, workgroupY integer, workgroupZ integer,
    groupSegmentSize integer, privateSegmentSize integer, kernelArgAddress varchar(18),
    aquireFence varchar(8), releaseFence varchar(8), codeObject_id integer, kernelName_id integer);
CREATE TABLE rocpd_metadata(id integer primary key, tag varchar(4096), value varchar(4096));
CREATE VIEW top AS SELECT s.string AS Name, count(*) AS TotalCalls, sum(o.end - o.start) / 1000 AS TotalDuration
    FROM rocpd_op o JOIN rocpd_string s ON s.id = o.description_id GROUP BY Name;
"""


def make_legacy_rpd(args):
    if os.path.exists(args.out):
        os.remove(args.out)
    con = sqlite3.connect(args.out)
    con.executescript(LEGACY_RPD_DDL)
    con.execute("INSERT INTO rocpd_metadata(tag, value) VALUES ('schema_version', '2')")
    con.execute("INSERT INTO rocpd_string(id, string) VALUES (1, ''), (2, 'KernelExecution'), (3, ?)",
                ("void mul_mat_vec_q<(ggml_type)12, 1, false, false, false>",))
    t = 1_550_151_853_029_637
    for i in range(1, 9):
        con.execute("INSERT INTO rocpd_op VALUES (?, 0, 0, ?, '0x0', ?, ?, 3, 2)", (i, i, t, t + 40_000))
        t += 50_000
    con.commit()
    con.close()
    print(f"wrote {args.out}: legacy RPD layout")


def make_corrupt(args):
    rng = random.Random(args.seed)
    with open(args.out, "wb") as f:
        f.write(b"SQLite format 3\x00")
        f.write(bytes(rng.getrandbits(8) for _ in range(8192 - 16)))
    print(f"wrote {args.out}: SQLite header + garbage")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kind", choices=["trace", "bench", "legacy-rpd", "corrupt"], default="trace")
    ap.add_argument("--schema-dir", help="folder with the official rocpd DDL (rocpd_tables.sql, ...)")
    ap.add_argument("--schema-version", help="the version the DDL folder is (3.0.2, 4.1.0): fills "
                    "rocpd_metadata.sql's placeholders where the folder has that file")
    ap.add_argument("--out", required=True, help="output folder (trace) or file (other kinds)")
    ap.add_argument("--kv", choices=["f16", "q8_0"], default="f16", help="KV cache type of the synthetic run")
    ap.add_argument("--label", help="manifest label (default kv-<type>)")
    ap.add_argument("--layers", type=int, help="model layers (default 4 for trace, 40 for bench)")
    ap.add_argument("--prompt-tokens", type=int, default=64)
    ap.add_argument("--output-tokens", type=int, default=9)
    ap.add_argument("--untraced-tokens", type=int,
                    help="output length of the untraced samples in the manifest (default: the trace's)")
    ap.add_argument("--dispatches", type=int, default=2_100_000, help="bench: dispatch count")
    ap.add_argument("--expected", help="trace: write the known per-phase totals to this JSON file")
    ap.add_argument("--seed", type=int, default=5)
    args = ap.parse_args()
    if args.kind in ("trace", "bench") and not args.schema_dir:
        ap.error("--schema-dir is required for rocpd databases")
    if args.layers is None:
        args.layers = 40 if args.kind == "bench" else 4
    if args.kind == "bench":
        make_bench(args)
    elif args.kind == "trace":
        make_trace(args)
    elif args.kind == "legacy-rpd":
        make_legacy_rpd(args)
    else:
        make_corrupt(args)


if __name__ == "__main__":
    main()
