#!/usr/bin/env python3
"""make_model.py: deterministic random-weight qwen3moe GGUF models for benchmarking llama-server.

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

Why
  abprof A/B-benchmarks llama-server builds. It needs models that are small enough for a 2-core CPU
  (the defaults: a 2-core CPU decodes well over 50 tok/s after a 1,000-token prompt) or big enough to
  load a GPU (--preset h200, ~15.5 GiB), that exercise a MoE architecture, that can be rebuilt anywhere
  from package registries alone, and whose bytes never change: the same arguments give byte-identical
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
  as llama.cpp's converter keeps it; norm weights are F32 ones. Tensors are generated in parallel and
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

ARCH = "qwen3moe"
ALIGN = gguf.GGUF_DEFAULT_ALIGNMENT
BLOCK_ELEMS = 1 << 22  # elements per generated row block; part of the format: changing it changes the weights

PRESETS = {
    # 2-core CPU: the 151,936 x 256 output matrix dominates every token.
    "cpu": dict(n_embd=256, n_layer=4, n_head=4, n_head_kv=2, head_dim=64, n_expert=8, n_expert_used=2,
                n_ff_exp=256, embd_type="q8_0"),
    # One H200: ~15.5 GiB of F16 weights; Qwen3-30B-A3B's layer shapes with half its layers and experts.
    "h200": dict(n_embd=2048, n_layer=24, n_head=32, n_head_kv=4, head_dim=128, n_expert=64, n_expert_used=8,
                 n_ff_exp=768, embd_type="f16"),
}
SIZE_FLAGS = ["n_embd", "n_layer", "n_head", "n_head_kv", "head_dim", "n_expert", "n_expert_used", "n_ff_exp"]

QTYPE = {"q8_0": gguf.GGMLQuantizationType.Q8_0, "f16": gguf.GGMLQuantizationType.F16,
         "f32": gguf.GGMLQuantizationType.F32}


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

    def __init__(self, seed: int, name: str, shape: tuple[int, ...], qtype, std: float | None, const: float = 1.0):
        self.name, self.shape, self.qtype, self.std, self.const = name, shape, qtype, std, const
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


# --- writing ------------------------------------------------------------------------------------------

def open_writer(path: str, a: argparse.Namespace, name: str, n_layer: int, vocab_kv, specs: list[Spec]):
    w = gguf.GGUFWriter(path, ARCH)
    w.add_name(name)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_F16 if a.embd_type == "f16" else gguf.LlamaFileType.MOSTLY_Q8_0)
    if a.embd_type == "q8_0":
        w.add_quantization_version(gguf.GGML_QUANT_VERSION)
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


def generate(a: argparse.Namespace) -> None:
    t0 = time.monotonic()
    kv = read_gguf_kv(a.vocab)
    vocab_kv = [x for x in kv if x[0].startswith("tokenizer.")]
    tokens = next((x[3] for x in vocab_kv if x[0] == "tokenizer.ggml.tokens"), None)
    if not tokens:
        raise SystemExit(f"{a.vocab}: no tokenizer.ggml.tokens")
    n_vocab = len(tokens)
    log(f"vocab {n_vocab} tokens, {len(vocab_kv)} tokenizer keys ({time.monotonic() - t0:.1f} s)")

    specs = tensor_specs(a, n_vocab, a.n_layer)
    outputs = [(a.out, f"abprof-random-{ARCH}-seed{a.seed}", a.n_layer)]
    if a.draft_out:
        outputs.append((a.draft_out, f"abprof-random-{ARCH}-draft-seed{a.seed}", a.draft_n_layer))
    files = []  # (writer, set of tensor names, temp path, final path)
    for path, name, n_layer in outputs:
        mine = {s.name for s in tensor_specs(a, n_vocab, n_layer)}  # a prefix of the target's, same names
        tmp = path + ".partial"
        w = open_writer(tmp, a, name, n_layer, vocab_kv, [s for s in specs if s.name in mine])
        files.append((w, mine, tmp, path))

    work = [(s, b) for s in specs for b in range(s.n_blocks)]
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
                if s.name in mine:
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
        description="Write deterministic random-weight qwen3moe GGUF models (target and optional draft) "
                    "with the tokenizer of a vocab GGUF. Same arguments => byte-identical files.",
        epilog="Example (what scripts/testbed runs): make_model.py --vocab SRC/models/ggml-vocab-qwen35.gguf "
               "--out target-qwen3moe.gguf --draft-out draft-qwen3moe.gguf")
    p.add_argument("--vocab", required=True,
                   help="GGUF whose tokenizer.* keys are copied, e.g. llama.cpp's models/ggml-vocab-qwen35.gguf")
    p.add_argument("--out", "-o", required=True, help="target model path")
    p.add_argument("--draft-out", help="also write a draft model (same vocab, seed and tensors, fewer layers) here")
    p.add_argument("--draft-n-layer", type=int, default=1,
                   help="layers of the draft model (the target's first ones) (default: %(default)s)")
    p.add_argument("--seed", type=int, default=42, help="seed of all weights (default: %(default)s)")
    p.add_argument("--preset", choices=sorted(PRESETS), default="cpu",
                   help="size preset: cpu = small, a 2-core CPU decodes > 50 tok/s (token_embd/output Q8_0); "
                        "h200 = n_embd 2048, 24 layers, 32/4 heads of 128, 64 experts (8 used) of 768, "
                        "all F16, ~15.5 GiB. The size flags below override the preset's values (default: %(default)s)")
    p.add_argument("--n-embd", type=int, help="embedding width (preset: cpu 256, h200 2048)")
    p.add_argument("--n-layer", type=int, help="transformer blocks of the target (preset: cpu 4, h200 24)")
    p.add_argument("--n-head", type=int, help="query heads (preset: cpu 4, h200 32)")
    p.add_argument("--n-head-kv", type=int, help="key/value heads, GQA (preset: cpu 2, h200 4)")
    p.add_argument("--head-dim", type=int, help="size of one head, also the RoPE dimensions (preset: cpu 64, h200 128)")
    p.add_argument("--n-expert", type=int, help="experts per layer (preset: cpu 8, h200 64)")
    p.add_argument("--n-expert-used", type=int, help="experts routed per token (preset: cpu 2, h200 8)")
    p.add_argument("--n-ff-exp", type=int, help="FFN width of one expert (preset: cpu 256, h200 768)")
    p.add_argument("--embd-type", choices=sorted(QTYPE),
                   help="type of token_embd and output (preset: cpu q8_0, h200 f16)")
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
    for k, v in PRESETS[a.preset].items():
        if getattr(a, k) is None:
            setattr(a, k, v)
    for k in SIZE_FLAGS:
        if getattr(a, k) <= 0:
            p.error(f"--{k.replace('_', '-')} must be > 0")
    if a.n_expert_used > a.n_expert:
        p.error("--n-expert-used must be <= --n-expert")
    if a.n_head % a.n_head_kv:
        p.error("--n-head must be a multiple of --n-head-kv")
    if a.draft_out and not 0 < a.draft_n_layer <= a.n_layer:
        p.error("--draft-n-layer must be in 1..--n-layer")
    a.jobs = max(1, a.jobs)
    return a


if __name__ == "__main__":
    generate(parse_args())
