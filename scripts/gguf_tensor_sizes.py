#!/usr/bin/env python3
"""gguf_tensor_sizes.py MODEL.gguf > FIXTURE.json

The `gguf` package's own view of a GGUF file, for the unit tests of abprof's GGUF reader and
decode-bytes arithmetic (src/roofline/): every tensor's name, ggml type, shape (ggml `ne` order)
and n_bytes as gguf.GGUFReader reports them, the architecture's integer metadata, and gguf's block
table (elements, bytes per block) for each KV cache type llama-server accepts.

Made with the test bed's interpreter (PyPI gguf 0.19.0, numpy 2.3.5):
  eval "$(scripts/testbed)"
  $GGUF_PYTHON scripts/gguf_tensor_sizes.py "$TARGET_MODEL" > tests/fixtures/gguf/target-qwen3moe.json
  $GGUF_PYTHON scripts/gguf_tensor_sizes.py "$DRAFT_MODEL" > tests/fixtures/gguf/draft-qwen3moe.json
  $GGUF_PYTHON scripts/gguf_tensor_sizes.py "$SMOLLM2_MODEL" > tests/fixtures/gguf/SmolLM2-135M-Instruct.Q4_1.json
"""

import importlib.metadata
import json
import os
import sys

import gguf

KV_TYPES = ["f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "iq4_nl", "q5_0", "q5_1"]


def main() -> None:
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    path = sys.argv[1]
    r = gguf.GGUFReader(path)
    arch = r.fields["general.architecture"].contents()
    ints = {}
    for key, field in r.fields.items():
        if not key.startswith(arch + "."):
            continue
        value = field.contents()
        values = value if isinstance(value, list) else [value]
        if values and all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            ints[key[len(arch) + 1:]] = values
    tensors = [
        {
            "name": t.name,
            "type": t.tensor_type.name.lower(),
            "dims": [int(d) for d in t.shape],
            "n_bytes": int(t.n_bytes),
        }
        for t in r.tensors
    ]
    blocks = {}
    for name in KV_TYPES:
        qtype = gguf.GGMLQuantizationType[name.upper()]
        elements, nbytes = gguf.GGML_QUANT_SIZES[qtype]
        blocks[name] = [elements, nbytes]
    out = {
        "made_by": f"$GGUF_PYTHON scripts/gguf_tensor_sizes.py {os.path.basename(path)}",
        "gguf_version": importlib.metadata.version("gguf"),
        "file": os.path.basename(path),
        "file_size": os.path.getsize(path),
        "arch": arch,
        "ints": dict(sorted(ints.items())),
        "kv_type_blocks": blocks,
        "tensors": tensors,
    }
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
