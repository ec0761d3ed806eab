#!/usr/bin/env python3
"""make_model.py: deterministic random-weight qwen3moe / qwen35moe GGUF models for benchmarking llama-server.

What it writes
  * --out: a `qwen3moe` model (so llama.cpp's mixture-of-experts paths run: router, expert selection,
    MUL_MAT_ID) with random weights and a real tokenizer. Every `tokenizer.*` key (model, pre, tokens,
    token types, merges, special ids, chat template, ...) is copied unchanged from --vocab, e.g. the
    llama.cpp source tree's models/ggml-vocab-qwen35.gguf, so chat requests and /tokenize work.
  * --draft-out (optional): a draft model for speculative decoding with the same vocabulary and seed
    but fewer layers (--draft-n-layer). Tensors are named as in the target and each one's values depend
    only on (seed, tensor name), so the draft *is* the target's first layers plus its token_embd,
    output_norm and output: its guesses are often right (non-trivial draft acceptance). Use it as
      llama-server -m TARGET -md DRAFT --spec-type draft-simple --spec-draft-n-max 4
  * --arch qwen35moe: instead, a Qwen3.5/3.6-style MoE as llama.cpp's `qwen35moe` loads it: every
    --full-attn-interval-th block full attention (gated Q, Q/K norms, IMRoPE on a quarter of the head),
    the others linear attention (gated delta net: attn_qkv, attn_gate, ssm_conv1d, ssm_a, ssm_dt, ssm_beta,
    ssm_alpha, ssm_norm, ssm_out), every block routed experts plus a sigmoid-gated shared expert, and one
    MTP block after the trunk (`qwen35moe.nextn_predict_layers = 1`, block_count = trunk + 1, the
    `blk.N.nextn.{eh_proj,enorm,hnorm,shared_head_norm}` tensors; embed_tokens and shared_head_head are
    left out, so the MTP head uses the trunk's token_embd and output). Use it as
      llama-server -m MODEL --spec-type draft-mtp --spec-draft-n-max 3
    Without --spec-type draft-mtp the server skips the MTP block ("model has unused tensor blk.N...").
  * --predictable-out (qwen35moe, optional): the predictable twin, same seed and tensors except five.

How MTP acceptance is made (qwen35moe)
  The random model (--out): the MTP head's eh_proj, attention and experts are independent random
  matrices, so its guess for the token after next is unrelated to what the trunk then picks:
  acceptance ~ 0 (the pinned server's draft-mtp drafts --spec-draft-n-max tokens every step, as its
  --spec-draft-p-min is 0 by default, and the trunk rejects them).
  The predictable twin (--predictable-out): both heads' logits are large at one token T
  (--predictable-token, default ' the') and exactly 0 elsewhere, whatever the context, so any sampler
  (greedy or temperature, top-k, top-p, min-p) picks T in the trunk and in the MTP head: acceptance
  ~ 100%. It is the random model with five tensors patched after their random draw:
    token_embd[:, 0] = 10 for every token, so coordinate 0 of every hidden state is positive (each
      block's residual branches move it by ~resid_scale, far less than 10);
    output_norm = e_0, so the trunk's normed state is c * e_0 with c > 0;
    output[:, 0] = 0 except output[T, 0] = 8: the trunk's logits are 8c (c ~ 7) at T and 0 elsewhere;
    blk.N.nextn.eh_proj row 0 = enorm(embd)[0] + hnorm(h)[0] (both > 0), so the MTP block's state
      has a large positive coordinate 0 too;
    blk.N.nextn.shared_head_norm = e_0: the MTP head's logits are 8c' (c' > 0) at T and 0 elsewhere.
  (Zeroing the two norms instead would make every logit 0: greedy picks agree on token 0, but a
  sampling request would pick uniformly among 151,936 tokens and acceptance would be ~0.)
  Everything else (all blocks, attention, experts, the MTP block) still runs on random weights.

Why
  abprof A/B-benchmarks llama-server builds. It needs models that are small enough for a 2-core CPU
  (the defaults: a 2-core CPU decodes well over 50 tok/s after a 1,000-token prompt) or big enough to
  load a GPU (--preset h200: qwen3moe ~15.5 GiB; qwen35moe Qwen3.5-35B-A3B's shapes, 2.7 B active),
  that exercise a MoE architecture (qwen35moe: also hybrid attention and an MTP head), that can be
  rebuilt anywhere from package registries alone, and whose bytes never change: the same arguments give byte-identical
  files (checked with numpy 2.3.5 and 2.5.2, PyPI gguf 0.19.0 and the sdist's gguf-py, 1 to 16 threads).
  Nothing time- or path-dependent is written into them.

How the weights are made
  Each tensor is cut into fixed row blocks (a function of its shape only); block b of tensor NAME is
  drawn from numpy Generator(PCG64(SeedSequence(E, spawn_key=(b,)))) with E the first 16 bytes of
  sha256(f"{seed}:{NAME}") (little-endian), so a tensor does not depend on the order of generation,
  on --jobs, or on which file it is written to.
  token_embd ~ N(0, 1) and output ~ N(0, (logit_scale / sqrt(n_embd))^2) are Q8_0 (gguf.quants) or F16;
  attention and expert matrices are F16 with std 1/sqrt(fan_in), except the two residual-branch outputs
  (attn_output, ffn_down_exps) whose std is resid_scale/sqrt(fan_in); the router (ffn_gate_inp) is F32
  as llama.cpp's converter keeps it; norm weights are F32 ones. qwen35moe: routed experts F16 or Q4_0
  (--exp-type), the shared expert F16 (its gate ffn_gate_inp_shexp F32), the residual-branch outputs
  ssm_out, attn_output, ffn_down_exps and ffn_down_shexp at resid_scale/sqrt(fan_in); the linear
  attention's small vectors F32: ssm_conv1d std 1/sqrt(d_conv), ssm_dt.bias ~ N(-2, 0.5^2), ssm_a =
  -exp(N(0, 0.5^2)) (a decay, as the converter stores -exp(A_log)). Tensors are generated in parallel and
  streamed to the file(s) in order, so memory stays at a few blocks, not the whole model.

Needs only the standard library, numpy and gguf (PyPI `gguf`, or the llama.cpp tree's gguf-py folder
on PYTHONPATH; its optional `yaml` import is stubbed when PyYAML is missing, as nothing here uses it).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import math
import os
import struct
import sys
import time
import types
from collections import deque
from concurrent.futures import ThreadPoolExecutor

import numpy as np

if importlib.util.find_spec("yaml") is None:  # gguf-py imports PyYAML for model-card metadata never read here
    sys.modules["yaml"] = types.ModuleType("yaml")
import gguf  # noqa: E402

ALIGN = gguf.GGUF_DEFAULT_ALIGNMENT
BLOCK_ELEMS = 1 << 22  # elements per generated row block; part of the format: changing it changes the weights

PRESETS = {
    "qwen3moe": {
        # 2-core CPU: the 151,936 x 256 output matrix dominates every token.
        "cpu": dict(n_embd=256, n_layer=4, n_head=4, n_head_kv=2, head_dim=64, n_expert=8, n_expert_used=2,
                    n_ff_exp=256, embd_type="q8_0"),
        # One H200: ~15.5 GiB of F16 weights; Qwen3-30B-A3B's layer shapes with half its layers and experts.
        "h200": dict(n_embd=2048, n_layer=24, n_head=32, n_head_kv=4, head_dim=128, n_expert=64, n_expert_used=8,
                     n_ff_exp=768, embd_type="f16"),
    },
    "qwen35moe": {
        # 2-core CPU: 3 linear-attention blocks, 1 full-attention block, the MTP block; the output matrix
        # (run once per token by the trunk and once per drafted token by the MTP head) dominates.
        "cpu": dict(n_embd=256, n_layer=4, n_head=4, n_head_kv=2, head_dim=64, n_expert=8, n_expert_used=2,
                    n_ff_exp=256, embd_type="q8_0", n_ff_shexp=256, ssm_d_state=64, ssm_n_group=2, ssm_dt_rank=4,
                    ssm_d_conv=4, full_attn_interval=4, exp_type="f16"),
        # One H200: Qwen3.5-35B-A3B's shapes (30 linear + 10 full-attention blocks, experts of 512 with 8
        # used, a shared expert of 512, the MTP block), so ~2.7 B parameters active per token as there,
        # but a quarter of its 256 experts: 10.3 B parameters, 8.2 GiB a file, so that the pair (random
        # and predictable) fits the 64 GiB disk beside the qwen3moe h200 models and generates in one
        # call (--n-expert 256: the full 35 B, 21.2 GiB a file). Routed experts Q4_0 as the users' Q4
        # files, the rest F16.
        "h200": dict(n_embd=2048, n_layer=40, n_head=16, n_head_kv=2, head_dim=256, n_expert=64, n_expert_used=8,
                     n_ff_exp=512, embd_type="f16", n_ff_shexp=512, ssm_d_state=128, ssm_n_group=16,
                     ssm_dt_rank=32, ssm_d_conv=4, full_attn_interval=4, exp_type="q4_0"),
    },
}
SIZE_FLAGS = ["n_embd", "n_layer", "n_head", "n_head_kv", "head_dim", "n_expert", "n_expert_used", "n_ff_exp"]
ARCH_FLAGS = ["n_ff_shexp", "ssm_d_state", "ssm_n_group", "ssm_dt_rank", "ssm_d_conv", "full_attn_interval",
              "exp_type"]  # qwen35moe only

QTYPE = {"q8_0": gguf.GGMLQuantizationType.Q8_0, "q4_0": gguf.GGMLQuantizationType.Q4_0,
         "f16": gguf.GGMLQuantizationType.F16, "f32": gguf.GGMLQuantizationType.F32}


def log(msg: str) -> None:
    print(f"make_model: {msg}", file=sys.stderr, flush=True)


# --- vocabulary: read the KV section of a GGUF file with the standard library (fast, byte-exact) -------

_SCALAR = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}
_STRING, _ARRAY = 8, 9


def read_gguf_kv(path: str) -> list[tuple[str, int, int | None, object]]:
    """(key, value type, array item type, value) for every KV of a little-endian GGUF v2/v3 file.
    Strings stay bytes so they are copied exactly; arrays are lists."""
    with open(path, "rb") as f:
        buf = f.read()
    if buf[:4] != b"GGUF":
        raise SystemExit(f"{path}: not a GGUF file")
    version, _n_tensors, n_kv = struct.unpack_from("<IQQ", buf, 4)
    if version not in (2, 3):
        raise SystemExit(f"{path}: GGUF version {version} not supported")
    pos = 24

    def string() -> bytes:
        nonlocal pos
        (n,) = struct.unpack_from("<Q", buf, pos)
        s = buf[pos + 8:pos + 8 + n]
        pos += 8 + n
        return s

    def value(vt: int) -> object:
        nonlocal pos
        if vt == _STRING:
            return string()
        fmt = _SCALAR[vt]
        (v,) = struct.unpack_from("<" + fmt, buf, pos)
        pos += struct.calcsize(fmt)
        return v

    out = []
    for _ in range(n_kv):
        key = string().decode("utf-8")
        (vt,) = struct.unpack_from("<I", buf, pos)
        pos += 4
        if vt != _ARRAY:
            out.append((key, vt, None, value(vt)))
            continue
        it, n = struct.unpack_from("<IQ", buf, pos)
        pos += 12
        if it == _STRING:
            items: list = [string() for _ in range(n)]
        elif it == _ARRAY:
            raise SystemExit(f"{path}: nested array in {key} not supported")
        else:
            fmt = _SCALAR[it]
            items = list(struct.unpack_from(f"<{n}{fmt}", buf, pos))
            pos += n * struct.calcsize(fmt)
        out.append((key, vt, it, items))
    return out


# --- tensors ------------------------------------------------------------------------------------------

class Spec:
    """One tensor: numpy shape (outermost first, i.e. ggml ne reversed), storage type, how to fill it."""

    def __init__(self, seed: int, name: str, shape: tuple[int, ...], qtype, std: float | None, const: float = 1.0,
                 post=None):
        # post(x, r0): rewrites the float32 rows r0.. of a block in place before it is stored (the
        # predictable twin's patches, ssm_a's sign); it must depend only on its arguments.
        self.name, self.shape, self.qtype, self.std, self.const, self.post = name, shape, qtype, std, const, post
        self.ne0 = shape[-1]
        self.rows = math.prod(shape[:-1])
        self.rows_per_block = max(1, BLOCK_ELEMS // self.ne0)
        self.n_blocks = -(-self.rows // self.rows_per_block)
        self.nbytes = self.row_bytes() * self.rows
        digest = hashlib.sha256(f"{seed}:{name}".encode()).digest()
        self.entropy = int.from_bytes(digest[:16], "little")

    def row_bytes(self) -> int:
        block, type_size = gguf.GGML_QUANT_SIZES[self.qtype]
        if self.ne0 % block:
            raise SystemExit(f"{self.name}: row length {self.ne0} is not a multiple of {block} ({self.qtype.name})")
        return self.ne0 // block * type_size

    def byte_shape(self) -> tuple[int, ...]:
        return (*self.shape[:-1], self.row_bytes())

    def block(self, b: int) -> np.ndarray:
        r0 = b * self.rows_per_block
        n = min(self.rows, r0 + self.rows_per_block) - r0
        if self.std is None:
            x = np.full((n, self.ne0), self.const, dtype=np.float32)
        else:
            rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(self.entropy, spawn_key=(b,))))
            x = rng.standard_normal((n, self.ne0), dtype=np.float32)
            x *= np.float32(self.std)
        if self.post is not None:
            self.post(x, r0)
        if self.qtype == gguf.GGMLQuantizationType.F32:
            return x
        if self.qtype == gguf.GGMLQuantizationType.F16:
            return x.astype(np.float16)
        return gguf.quants.quantize(x, self.qtype)


def tensor_specs(a: argparse.Namespace, n_vocab: int, n_layer: int) -> list[Spec]:
    F16, F32 = gguf.GGMLQuantizationType.F16, gguf.GGMLQuantizationType.F32
    E, hd, q_dim, kv_dim = a.n_embd, a.head_dim, a.n_head * a.head_dim, a.n_head_kv * a.head_dim
    embd_q, S = QTYPE[a.embd_type], a.seed
    specs = [
        Spec(S, "token_embd.weight", (n_vocab, E), embd_q, 1.0),
        Spec(S, "output_norm.weight", (E,), F32, None),
        Spec(S, "output.weight", (n_vocab, E), embd_q, a.logit_scale / math.sqrt(E)),
    ]
    for i in range(n_layer):
        p = f"blk.{i}."
        specs += [
            Spec(S, p + "attn_norm.weight", (E,), F32, None),
            Spec(S, p + "attn_q.weight", (q_dim, E), F16, 1 / math.sqrt(E)),
            Spec(S, p + "attn_k.weight", (kv_dim, E), F16, 1 / math.sqrt(E)),
            Spec(S, p + "attn_v.weight", (kv_dim, E), F16, 1 / math.sqrt(E)),
            Spec(S, p + "attn_q_norm.weight", (hd,), F32, None),
            Spec(S, p + "attn_k_norm.weight", (hd,), F32, None),
            Spec(S, p + "attn_output.weight", (E, q_dim), F16, a.resid_scale / math.sqrt(q_dim)),
            Spec(S, p + "ffn_norm.weight", (E,), F32, None),
            Spec(S, p + "ffn_gate_inp.weight", (a.n_expert, E), F32, a.router_scale / math.sqrt(E)),
            Spec(S, p + "ffn_gate_exps.weight", (a.n_expert, a.n_ff_exp, E), F16, 1 / math.sqrt(E)),
            Spec(S, p + "ffn_up_exps.weight", (a.n_expert, a.n_ff_exp, E), F16, 1 / math.sqrt(E)),
            Spec(S, p + "ffn_down_exps.weight", (a.n_expert, E, a.n_ff_exp), F16,
                 a.resid_scale / math.sqrt(a.n_ff_exp)),
        ]
    return specs


# qwen35moe's predictable twin (see the module docstring): coordinate PRED_DIM of every token embedding
# is PRED_EMBD, so it dominates the sign of that coordinate of every hidden state; both heads' final
# norms keep only that coordinate and output.weight's column PRED_DIM is PRED_LOGIT at the chosen token
# and 0 elsewhere, so both heads' logits are c * PRED_LOGIT (c > 0) at that token and exactly 0 elsewhere.
PRED_DIM, PRED_EMBD, PRED_LOGIT = 0, 10.0, 8.0


def _set_column(col: int, value: float):
    def post(x: np.ndarray, _r0: int) -> None:
        x[:, col] = value
    return post


def _one_hot(col: int):
    def post(x: np.ndarray, _r0: int) -> None:
        x[:] = 0.0
        x[:, col] = 1.0
    return post


def _logit_column(col: int, token: int, value: float):
    def post(x: np.ndarray, r0: int) -> None:
        x[:, col] = 0.0
        if r0 <= token < r0 + x.shape[0]:
            x[token - r0, col] = value
    return post


def _eh_proj_row(row: int, n_embd: int):
    # output coordinate `row` of the MTP's eh_proj = e_norm[row] + h_norm[row] (both > 0 in the twin)
    def post(x: np.ndarray, r0: int) -> None:
        if r0 <= row < r0 + x.shape[0]:
            x[row - r0, :] = 0.0
            x[row - r0, row] = 1.0
            x[row - r0, n_embd + row] = 1.0
    return post


def _neg_exp(x: np.ndarray, _r0: int) -> None:
    np.exp(x, out=x)  # ssm_a is -exp(A_log) as llama.cpp's converter stores it: a decay rate < 0
    np.negative(x, out=x)


def _shift(mean: float):
    def post(x: np.ndarray, _r0: int) -> None:
        x += np.float32(mean)
    return post


def is_recurrent(a: argparse.Namespace, il: int) -> bool:
    """The pinned loader's default layout: every full_attn_interval-th trunk block is full attention,
    the others are linear attention (gated delta net); the MTP block is full attention."""
    return il < a.n_layer and (il + 1) % a.full_attn_interval != 0


def qwen35moe_specs(a: argparse.Namespace, n_vocab: int) -> list[Spec]:
    F16, F32 = gguf.GGMLQuantizationType.F16, gguf.GGMLQuantizationType.F32
    E, hd, S = a.n_embd, a.head_dim, a.seed
    q_dim, kv_dim = a.n_head * hd, a.n_head_kv * hd
    embd_q, exp_q = QTYPE[a.embd_type], QTYPE[a.exp_type]
    key_dim, value_dim = a.ssm_d_state * a.ssm_n_group, a.ssm_d_state * a.ssm_dt_rank
    specs = [
        Spec(S, "token_embd.weight", (n_vocab, E), embd_q, 1.0),
        Spec(S, "output_norm.weight", (E,), F32, None),
        Spec(S, "output.weight", (n_vocab, E), embd_q, a.logit_scale / math.sqrt(E)),
    ]

    def attention(p: str) -> list[Spec]:  # full attention with its output gate: attn_q is [q | gate] per head
        return [
            Spec(S, p + "attn_q.weight", (2 * q_dim, E), F16, 1 / math.sqrt(E)),
            Spec(S, p + "attn_k.weight", (kv_dim, E), F16, 1 / math.sqrt(E)),
            Spec(S, p + "attn_v.weight", (kv_dim, E), F16, 1 / math.sqrt(E)),
            Spec(S, p + "attn_output.weight", (E, q_dim), F16, a.resid_scale / math.sqrt(q_dim)),
            Spec(S, p + "attn_q_norm.weight", (hd,), F32, None),
            Spec(S, p + "attn_k_norm.weight", (hd,), F32, None),
        ]

    def moe(p: str) -> list[Spec]:  # routed experts plus the sigmoid-gated shared expert
        return [
            Spec(S, p + "ffn_gate_inp.weight", (a.n_expert, E), F32, a.router_scale / math.sqrt(E)),
            Spec(S, p + "ffn_gate_exps.weight", (a.n_expert, a.n_ff_exp, E), exp_q, 1 / math.sqrt(E)),
            Spec(S, p + "ffn_up_exps.weight", (a.n_expert, a.n_ff_exp, E), exp_q, 1 / math.sqrt(E)),
            Spec(S, p + "ffn_down_exps.weight", (a.n_expert, E, a.n_ff_exp), exp_q,
                 a.resid_scale / math.sqrt(a.n_ff_exp)),
            Spec(S, p + "ffn_gate_inp_shexp.weight", (E,), F32, 1 / math.sqrt(E)),
            Spec(S, p + "ffn_gate_shexp.weight", (a.n_ff_shexp, E), F16, 1 / math.sqrt(E)),
            Spec(S, p + "ffn_up_shexp.weight", (a.n_ff_shexp, E), F16, 1 / math.sqrt(E)),
            Spec(S, p + "ffn_down_shexp.weight", (E, a.n_ff_shexp), F16, a.resid_scale / math.sqrt(a.n_ff_shexp)),
        ]

    for i in range(a.n_layer):
        p = f"blk.{i}."
        specs += [Spec(S, p + "attn_norm.weight", (E,), F32, None),
                  Spec(S, p + "post_attention_norm.weight", (E,), F32, None)]
        if is_recurrent(a, i):
            specs += [
                Spec(S, p + "attn_qkv.weight", (2 * key_dim + value_dim, E), F16, 1 / math.sqrt(E)),
                Spec(S, p + "attn_gate.weight", (value_dim, E), F16, 1 / math.sqrt(E)),
                Spec(S, p + "ssm_conv1d.weight", (2 * key_dim + value_dim, a.ssm_d_conv), F32,
                     1 / math.sqrt(a.ssm_d_conv)),
                Spec(S, p + "ssm_dt.bias", (a.ssm_dt_rank,), F32, 0.5, post=_shift(-2.0)),
                Spec(S, p + "ssm_a", (a.ssm_dt_rank,), F32, 0.5, post=_neg_exp),
                Spec(S, p + "ssm_beta.weight", (a.ssm_dt_rank, E), F16, 1 / math.sqrt(E)),
                Spec(S, p + "ssm_alpha.weight", (a.ssm_dt_rank, E), F16, 1 / math.sqrt(E)),
                Spec(S, p + "ssm_norm.weight", (a.ssm_d_state,), F32, None),
                Spec(S, p + "ssm_out.weight", (E, value_dim), F16, a.resid_scale / math.sqrt(value_dim)),
            ]
        else:
            specs += attention(p)
        specs += moe(p)

    # The MTP block (llama.cpp's load_block_mtp): a full-attention MoE block fed with
    # eh_proj([enorm(embd(next token)) | hnorm(trunk's last hidden state)]); its LM head is output.weight
    # behind its own shared_head_norm (embed_tokens and shared_head_head are left out: shared with the trunk).
    p = f"blk.{a.n_layer}."
    specs += [
        Spec(S, p + "nextn.eh_proj.weight", (E, 2 * E), F16, 1 / math.sqrt(2 * E)),
        Spec(S, p + "nextn.enorm.weight", (E,), F32, None),
        Spec(S, p + "nextn.hnorm.weight", (E,), F32, None),
        Spec(S, p + "attn_norm.weight", (E,), F32, None),
        Spec(S, p + "post_attention_norm.weight", (E,), F32, None),
        *attention(p),
        *moe(p),
        Spec(S, p + "nextn.shared_head_norm.weight", (E,), F32, None),
    ]
    return specs


def count_params(a: argparse.Namespace, specs: list[Spec]) -> tuple[int, int]:
    """(total, active per token) parameters: a token uses n_expert_used of n_expert experts and one
    row of token_embd; the MTP block counts in total only."""
    total = active = 0
    for s in specs:
        n = math.prod(s.shape)
        total += n
        if s.name.startswith(f"blk.{a.n_layer}.") or s.name == "token_embd.weight":
            continue
        if "_exps." in s.name:
            n = n * a.n_expert_used // a.n_expert
        active += n
    return total, active


# --- writing ------------------------------------------------------------------------------------------

def write_qwen3moe_kv(w, a: argparse.Namespace, n_layer: int) -> None:
    w.add_context_length(a.context_length)
    w.add_embedding_length(a.n_embd)
    w.add_block_count(n_layer)
    w.add_feed_forward_length(a.n_ff_exp * a.n_expert_used)  # unused by qwen3moe; as in Qwen3-30B-A3B
    w.add_head_count(a.n_head)
    w.add_head_count_kv(a.n_head_kv)
    w.add_key_length(a.head_dim)
    w.add_value_length(a.head_dim)
    w.add_rope_dimension_count(a.head_dim)
    w.add_rope_freq_base(a.rope_freq_base)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_expert_count(a.n_expert)
    w.add_expert_used_count(a.n_expert_used)
    w.add_expert_feed_forward_length(a.n_ff_exp)


def rope_sections(n_rot: int) -> list[int]:
    """Qwen3.5's interleaved-MRoPE sections [11, 11, 10, 0] (of 32 = n_rot / 2), scaled to n_rot."""
    half = n_rot // 2
    third = -(-half // 3)
    return [third, third, half - 2 * third, 0]


def write_qwen35moe_kv(w, a: argparse.Namespace) -> None:
    w.add_context_length(a.context_length)
    w.add_embedding_length(a.n_embd)
    w.add_block_count(a.n_layer + 1)  # the trunk and the MTP block, as llama.cpp's converter counts them
    w.add_nextn_predict_layers(1)
    w.add_head_count(a.n_head)
    w.add_head_count_kv(a.n_head_kv)
    w.add_key_length(a.head_dim)
    w.add_value_length(a.head_dim)
    w.add_rope_dimension_count(a.head_dim // 4)  # Qwen3.5's partial_rotary_factor 0.25
    w.add_rope_dimension_sections(rope_sections(a.head_dim // 4))
    w.add_rope_freq_base(a.rope_freq_base)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_expert_count(a.n_expert)
    w.add_expert_used_count(a.n_expert_used)
    w.add_expert_feed_forward_length(a.n_ff_exp)
    w.add_expert_shared_feed_forward_length(a.n_ff_shexp)
    w.add_ssm_conv_kernel(a.ssm_d_conv)
    w.add_ssm_state_size(a.ssm_d_state)
    w.add_ssm_group_count(a.ssm_n_group)
    w.add_ssm_time_step_rank(a.ssm_dt_rank)
    w.add_ssm_inner_size(a.ssm_d_state * a.ssm_dt_rank)
    w.add_full_attention_interval(a.full_attn_interval)


def file_type(a: argparse.Namespace):
    if a.arch == "qwen35moe" and a.exp_type == "q4_0":
        return gguf.LlamaFileType.MOSTLY_Q4_0
    return gguf.LlamaFileType.MOSTLY_F16 if a.embd_type == "f16" else gguf.LlamaFileType.MOSTLY_Q8_0


def open_writer(path: str, a: argparse.Namespace, name: str, n_layer: int, vocab_kv, specs: list[Spec]):
    w = gguf.GGUFWriter(path, a.arch)
    w.add_name(name)
    w.add_file_type(file_type(a))
    if a.embd_type != "f16" or (a.arch == "qwen35moe" and a.exp_type != "f16"):
        w.add_quantization_version(gguf.GGML_QUANT_VERSION)
    if a.arch == "qwen35moe":
        write_qwen35moe_kv(w, a)
    else:
        write_qwen3moe_kv(w, a, n_layer)
    for key, vt, it, val in vocab_kv:
        w.add_key_value(key, val, gguf.GGUFValueType(vt), None if it is None else gguf.GGUFValueType(it))
    for s in specs:
        if s.qtype in (gguf.GGMLQuantizationType.F16, gguf.GGMLQuantizationType.F32):
            dt = np.float16 if s.qtype == gguf.GGMLQuantizationType.F16 else np.float32
            w.add_tensor_info(s.name, s.shape, np.dtype(dt), s.nbytes)
        else:
            w.add_tensor_info(s.name, s.byte_shape(), np.dtype(np.uint8), s.nbytes, raw_dtype=s.qtype)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_ti_data_to_file()
    f = w.fout[0]
    f.write(b"\0" * (-f.tell() % ALIGN))  # start of the tensor data section
    return w


def predictable_specs(a: argparse.Namespace, specs: list[Spec]) -> list[Spec]:
    """The predictable twin: the random model's Spec objects, except five tensors rebuilt from the same
    random draws with the patches that make both heads' greedy pick the same token (module docstring)."""
    tok = a.predictable_token
    patches = {
        "token_embd.weight": _set_column(PRED_DIM, PRED_EMBD),
        "output_norm.weight": _one_hot(PRED_DIM),
        "output.weight": _logit_column(PRED_DIM, tok, PRED_LOGIT),
        f"blk.{a.n_layer}.nextn.eh_proj.weight": _eh_proj_row(PRED_DIM, a.n_embd),
        f"blk.{a.n_layer}.nextn.shared_head_norm.weight": _one_hot(PRED_DIM),
    }
    return [Spec(a.seed, s.name, s.shape, s.qtype, s.std, s.const, post=patches[s.name]) if s.name in patches
            else s for s in specs]


def generate(a: argparse.Namespace) -> None:
    t0 = time.monotonic()
    kv = read_gguf_kv(a.vocab)
    vocab_kv = [x for x in kv if x[0].startswith("tokenizer.")]
    tokens = next((x[3] for x in vocab_kv if x[0] == "tokenizer.ggml.tokens"), None)
    if not tokens:
        raise SystemExit(f"{a.vocab}: no tokenizer.ggml.tokens")
    n_vocab = len(tokens)
    log(f"vocab {n_vocab} tokens, {len(vocab_kv)} tokenizer keys ({time.monotonic() - t0:.1f} s)")

    outputs = []  # (path, general.name, block count, the Spec objects of that file in file order)
    if a.arch == "qwen35moe":
        if a.predictable_token is None:
            a.predictable_token = tokens.index("Ġthe".encode()) if "Ġthe".encode() in tokens else 1000
        if not 0 <= a.predictable_token < n_vocab:
            raise SystemExit(f"--predictable-token {a.predictable_token}: not in the vocabulary (0..{n_vocab - 1})")
        specs = qwen35moe_specs(a, n_vocab)
        total, active = count_params(a, specs)
        log(f"qwen35moe: {a.n_layer} blocks ({sum(is_recurrent(a, i) for i in range(a.n_layer))} linear attention) "
            f"+ 1 MTP block; {total / 1e9:.3f} B parameters, {active / 1e9:.3f} B active per token")
        outputs.append((a.out, f"abprof-random-{a.arch}-mtp-seed{a.seed}", a.n_layer + 1, specs))
        if a.predictable_out:
            log(f"predictable twin: both heads pick token {a.predictable_token} "
                f"({tokens[a.predictable_token].decode('utf-8', 'replace')!r})")
            outputs.append((a.predictable_out, f"abprof-predictable-{a.arch}-mtp-seed{a.seed}", a.n_layer + 1,
                            predictable_specs(a, specs)))
    else:
        specs = tensor_specs(a, n_vocab, a.n_layer)
        outputs.append((a.out, f"abprof-random-{a.arch}-seed{a.seed}", a.n_layer, specs))
        if a.draft_out:
            mine = {s.name for s in tensor_specs(a, n_vocab, a.draft_n_layer)}  # a prefix of the target's names
            outputs.append((a.draft_out, f"abprof-random-{a.arch}-draft-seed{a.seed}", a.draft_n_layer,
                            [s for s in specs if s.name in mine]))
    files = []  # (writer, {tensor name: Spec object}, temp path, final path)
    for path, name, n_layer, file_specs in outputs:
        tmp = path + ".partial"
        w = open_writer(tmp, a, name, n_layer, vocab_kv, file_specs)
        files.append((w, {s.name: s for s in file_specs}, tmp, path))

    # Every distinct Spec object once, in file order; a file takes the blocks of the objects it holds.
    work, seen = [], set()
    for s in specs:
        for _, mine, _, _ in files:
            v = mine.get(s.name)
            if v is not None and id(v) not in seen:
                seen.add(id(v))
                work += [(v, b) for b in range(v.n_blocks)]
    window = max(2, 2 * a.jobs)
    written = 0
    with ThreadPoolExecutor(max_workers=a.jobs) as pool:
        pending: deque = deque()
        it = iter(work)
        for s, b in it:
            pending.append((s, b, pool.submit(s.block, b)))
            if len(pending) >= window:
                break
        while pending:
            s, b, fut = pending.popleft()
            data = fut.result()
            nxt = next(it, None)
            if nxt is not None:
                pending.append((nxt[0], nxt[1], pool.submit(nxt[0].block, nxt[1])))
            mv = memoryview(np.ascontiguousarray(data)).cast("B")
            last = b == s.n_blocks - 1
            for w, mine, _, _ in files:
                if mine.get(s.name) is s:
                    f = w.fout[0]
                    f.write(mv)
                    if last:
                        f.write(b"\0" * (-s.nbytes % ALIGN))
            written += mv.nbytes
    for w, _, tmp, path in files:
        w.close()
        os.replace(tmp, path)
        log(f"wrote {path}: {os.path.getsize(path):,} bytes")
    log(f"generated {written / 2**20:,.1f} MiB of tensors in {time.monotonic() - t0:.1f} s with {a.jobs} threads")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description="Write deterministic random-weight GGUF models with the tokenizer of a vocab GGUF: a qwen3moe "
                    "target and optional draft, or a qwen35moe with one MTP block and optional predictable twin. "
                    "Same arguments => byte-identical files.",
        epilog="Examples (what scripts/testbed runs): make_model.py --vocab SRC/models/ggml-vocab-qwen35.gguf "
               "--out target-qwen3moe.gguf --draft-out draft-qwen3moe.gguf; make_model.py --arch qwen35moe "
               "--vocab SRC/models/ggml-vocab-qwen35.gguf --out mtp-qwen35moe.gguf "
               "--predictable-out mtp-predictable-qwen35moe.gguf")
    p.add_argument("--vocab", required=True,
                   help="GGUF whose tokenizer.* keys are copied, e.g. llama.cpp's models/ggml-vocab-qwen35.gguf")
    p.add_argument("--arch", choices=sorted(PRESETS), default="qwen3moe",
                   help="qwen3moe (MoE, separate draft model) or qwen35moe (Qwen3.5/3.6 MoE: linear-attention and "
                        "full-attention blocks, routed + shared experts, one MTP block for --spec-type draft-mtp) "
                        "(default: %(default)s)")
    p.add_argument("--out", "-o", required=True,
                   help="target model path (qwen35moe: the random one, MTP acceptance ~0)")
    p.add_argument("--draft-out",
                   help="qwen3moe: also write a draft model (same vocab, seed and tensors, fewer layers) here")
    p.add_argument("--draft-n-layer", type=int, default=1,
                   help="layers of the draft model (the target's first ones) (default: %(default)s)")
    p.add_argument("--predictable-out",
                   help="qwen35moe: also write the predictable twin here (trunk and MTP head always pick the same "
                        "token: MTP acceptance ~100%%)")
    p.add_argument("--predictable-token", type=int,
                   help="the token the predictable twin always emits (default: the vocabulary's ' the')")
    p.add_argument("--seed", type=int, default=42, help="seed of all weights (default: %(default)s)")
    p.add_argument("--preset", choices=["cpu", "h200"], default="cpu",
                   help="size preset: cpu = small, a 2-core CPU decodes > 50 tok/s (token_embd/output Q8_0); "
                        "h200 = qwen3moe: n_embd 2048, 24 layers, 32/4 heads of 128, 64 experts (8 used) of 768, "
                        "all F16, ~15.5 GiB; qwen35moe: Qwen3.5-35B-A3B's shapes (n_embd 2048, 40 blocks, 16/2 "
                        "heads of 256, experts of 512 (8 used) + a shared one, linear attention 16/32 heads "
                        "of 128) with 64 of its 256 experts, Q4_0: 2.7 B active of 10.3 B parameters, 8.2 GiB. The size flags below override the "
                        "preset's values (default: %(default)s)")
    p.add_argument("--n-embd", type=int, help="embedding width (preset: cpu 256, h200 2048)")
    p.add_argument("--n-layer", type=int,
                   help="transformer blocks of the target, qwen35moe: of the trunk, without the MTP block "
                        "(preset: cpu 4, h200 24 / qwen35moe 40)")
    p.add_argument("--n-head", type=int, help="query heads (preset: cpu 4, h200 32 / qwen35moe 16)")
    p.add_argument("--n-head-kv", type=int, help="key/value heads, GQA (preset: cpu 2, h200 4 / qwen35moe 2)")
    p.add_argument("--head-dim", type=int,
                   help="size of one head, also the RoPE dimensions (qwen35moe: a quarter of it) "
                        "(preset: cpu 64, h200 128 / qwen35moe 256)")
    p.add_argument("--n-expert", type=int, help="experts per layer (preset: cpu 8, h200 64)")
    p.add_argument("--n-expert-used", type=int, help="experts routed per token (preset: cpu 2, h200 8)")
    p.add_argument("--n-ff-exp", type=int, help="FFN width of one expert (preset: cpu 256, h200 768 / qwen35moe 512)")
    p.add_argument("--embd-type", choices=sorted(QTYPE),
                   help="type of token_embd and output (preset: cpu q8_0, h200 f16)")
    for flag, what in (("--n-ff-shexp", "FFN width of the shared expert (preset: cpu 256, h200 512)"),
                       ("--ssm-d-state", "linear attention: size of one key/value head (preset: cpu 64, h200 128)"),
                       ("--ssm-n-group", "linear attention: key heads (preset: cpu 2, h200 16)"),
                       ("--ssm-dt-rank", "linear attention: value heads, a multiple of the key heads "
                                         "(preset: cpu 4, h200 32)"),
                       ("--ssm-d-conv", "linear attention: causal convolution width (preset: 4)"),
                       ("--full-attn-interval", "every N-th trunk block is full attention, the others linear "
                                                "(preset: 4)")):
        p.add_argument(flag, type=int, help="qwen35moe: " + what)
    p.add_argument("--exp-type", choices=sorted(QTYPE),
                   help="qwen35moe: type of the routed experts (preset: cpu f16, h200 q4_0)")
    p.add_argument("--context-length", type=int, default=32768,
                   help="training context written to the GGUF (llama-server's n_ctx when -c is not given) "
                        "(default: %(default)s)")
    p.add_argument("--rope-freq-base", type=float, default=1_000_000.0,
                   help="RoPE base frequency (default: %(default)s)")
    p.add_argument("--resid-scale", type=float, default=0.15,
                   help="std of the residual branches (attn_output, ffn_down_exps) relative to the unit-RMS "
                        "embeddings: how much each layer moves the hidden state. Smaller = the draft's "
                        "guesses agree more often with the target (higher draft acceptance) (default: %(default)s)")
    p.add_argument("--logit-scale", type=float, default=4.0,
                   help="std of the logits (output ~ N(0, (logit_scale/sqrt(n_embd))^2) on a unit-RMS state): "
                        "how peaked the next-token distribution is (default: %(default)s)")
    p.add_argument("--router-scale", type=float, default=1.0,
                   help="std of the expert router's logits (default: %(default)s)")
    p.add_argument("--jobs", "-j", type=int, default=len(os.sched_getaffinity(0)),
                   help="generator threads (default: all CPUs; the output does not depend on it)")
    a = p.parse_args(argv)
    preset = PRESETS[a.arch][a.preset]
    for k in ARCH_FLAGS:
        if k not in preset and getattr(a, k) is not None:
            p.error(f"--{k.replace('_', '-')} applies to --arch qwen35moe only")
    for k, v in preset.items():
        if getattr(a, k) is None:
            setattr(a, k, v)
    for k in SIZE_FLAGS + [f for f in ARCH_FLAGS if f in preset and f != "exp_type"]:
        if getattr(a, k) <= 0:
            p.error(f"--{k.replace('_', '-')} must be > 0")
    if a.n_expert_used > a.n_expert:
        p.error("--n-expert-used must be <= --n-expert")
    if a.n_head % a.n_head_kv:
        p.error("--n-head must be a multiple of --n-head-kv")
    if a.arch == "qwen35moe":
        if a.draft_out:
            p.error("--draft-out is for --arch qwen3moe; a qwen35moe drafts with its own MTP block "
                    "(--spec-type draft-mtp)")
        if a.ssm_dt_rank % a.ssm_n_group:
            p.error("--ssm-dt-rank (value heads) must be a multiple of --ssm-n-group (key heads)")
        if a.head_dim % 8:
            p.error("--head-dim must be a multiple of 8 for qwen35moe (RoPE on a quarter of it, in sections)")
    else:
        if a.predictable_out or a.predictable_token is not None:
            p.error("--predictable-out and --predictable-token are for --arch qwen35moe (the MTP model)")
        if a.draft_out and not 0 < a.draft_n_layer <= a.n_layer:
            p.error("--draft-n-layer must be in 1..--n-layer")
    a.jobs = max(1, a.jobs)
    return a


if __name__ == "__main__":
    generate(parse_args())
