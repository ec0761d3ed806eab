#!/usr/bin/env python3
"""Struct layouts of AMD SMI as AMD's own generated ctypes wrapper states them: a second,
independent statement of what sys/src/amd_smi.rs (bindgen over amdsmi.h) says.

    scripts/amdsmi_layouts.py > tests/fixtures/amdsmi/layout-pypi-amdsmi-7.0.2.json

Downloads the PyPI sdist amdsmi==7.0.2 (pip download --no-deps), loads its amdsmi/amdsmi_wrapper.py
with ctypes.CDLL stubbed (no libamd_smi.so is needed to lay out a struct), and prints the size of
each struct abprof passes to the library and the offset of each field it reads.
"""
import ctypes
import hashlib
import importlib.util
import json
import pathlib
import subprocess
import sys
import tarfile
import tempfile

VERSION = "7.0.2"
STRUCTS = {
    "amdsmi_version_t": ["major", "minor", "release", "build"],
    "amdsmi_power_info_t": ["socket_power", "current_socket_power", "average_socket_power", "power_limit"],
    "amd_metrics_table_header_t": ["structure_size", "format_revision", "content_revision"],
    "amdsmi_gpu_metrics_t": [
        "common_header", "temperature_edge", "temperature_hotspot", "temperature_mem",
        "average_gfx_activity", "average_umc_activity", "average_socket_power", "energy_accumulator",
        "system_clock_counter", "current_gfxclk", "current_uclk", "current_socket_power",
        "xgmi_link_status",
    ],
}


class _Stub:
    """Stands for the library and each of its functions."""

    def __init__(self, *args, **kwargs):
        pass

    def __getattr__(self, name):
        return _Stub()

    def __setattr__(self, name, value):
        pass


def main():
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", ":all:",
                        "--dest", tmp, f"amdsmi=={VERSION}"], check=True)
        sdist = next(pathlib.Path(tmp).glob("amdsmi-*.tar.gz"))
        digest = hashlib.sha256(sdist.read_bytes()).hexdigest()
        with tarfile.open(sdist) as t:
            t.extractall(tmp, filter="data")
        wrapper = next(pathlib.Path(tmp).glob("amdsmi-*/amdsmi/amdsmi_wrapper.py"))
        ctypes.CDLL = _Stub
        spec = importlib.util.spec_from_file_location("amdsmi_wrapper", wrapper)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    out = {
        "source": f"PyPI sdist amdsmi=={VERSION} ({sdist.name}, sha256 {digest}), amdsmi/amdsmi_wrapper.py: "
                  "AMD's ctypes wrapper generated from amdsmi.h",
        "made_by": "scripts/amdsmi_layouts.py",
        "structs": {},
    }
    for name, fields in STRUCTS.items():
        struct = getattr(module, name)
        out["structs"][name] = {
            "size": ctypes.sizeof(struct),
            "offsets": {f: getattr(struct, f).offset for f in fields},
        }
    json.dump(out, sys.stdout, indent=2, sort_keys=True)
    print()


if __name__ == "__main__":
    main()
