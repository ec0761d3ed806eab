#!/usr/bin/env python3
"""make_tiny_gguf.py OUT.gguf: a 3-layer toy mixture-of-experts GGUF of a few KiB, written with the
`gguf` package: the fuzz seed of abprof's GGUF header reader and the unit-test model of what the
test bed's models lack (a per-layer head_count_kv array with a layer without KV heads, a sliding
window, a tied output head, K and V head sizes that differ). Deterministic; weights are zeros.

  eval "$(scripts/testbed)"; $GGUF_PYTHON scripts/make_tiny_gguf.py tests/fixtures/fuzz-seeds/tiny-moe.gguf
"""

import sys

import numpy as np
import gguf

ARCH = "qwen3moe"


def main() -> None:
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    w = gguf.GGUFWriter(sys.argv[1], ARCH)
    n_embd, n_vocab, n_expert, n_ff = 32, 16, 4, 16
    w.add_block_count(3)
    w.add_embedding_length(n_embd)
    w.add_head_count(4)
    w.add_head_count_kv([2, 0, 2])
    w.add_key_length(32)
    w.add_value_length(16)
    w.add_expert_count(n_expert)
    w.add_expert_used_count(1)
    w.add_sliding_window(8)
    f16, f32 = np.float16, np.float32
    w.add_tensor("token_embd.weight", np.zeros((n_vocab, n_embd), dtype=f16))
    w.add_tensor("output_norm.weight", np.zeros(n_embd, dtype=f32))
    for i in range(3):
        w.add_tensor(f"blk.{i}.attn_norm.weight", np.zeros(n_embd, dtype=f32))
        w.add_tensor(f"blk.{i}.ffn_gate_inp.weight", np.zeros((n_expert, n_embd), dtype=f32))
        w.add_tensor(f"blk.{i}.ffn_up_exps.weight", np.zeros((n_expert, n_ff, n_embd), dtype=f16))
        w.add_tensor(f"blk.{i}.ffn_down_exps.weight", np.zeros((n_expert, n_embd, n_ff), dtype=f16))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


if __name__ == "__main__":
    main()
