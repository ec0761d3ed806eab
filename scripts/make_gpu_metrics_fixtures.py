#!/usr/bin/env python3
"""Writes the amdgpu test fixtures: binary `gpu_metrics` blobs and three fake sysfs trees.

Layouts follow the kernel's own declarations, field by field, in
  torvalds/linux drivers/gpu/drm/amd/include/kgd_pp_interface.h
  @ 00dedab07b52ca16107e82ce5ca7caaaedf6a417
(struct metrics_table_header, gpu_metrics_v1_3, gpu_metrics_v2_1 … v2_4, gpu_metrics_v3_0).
The structs are not packed, so each field sits at the next multiple of its own size and the whole
struct is padded to its largest member, exactly as the C compiler lays them out on x86-64.
Offsets are computed here from the field list rather than typed in, so that the Rust decoder
(src/telemetry/gpu_metrics.rs), which uses fixed offsets read off the kernel header
kgd_pp_interface.h, is checked against an independent derivation.

Each blob gets a JSON sidecar with every field's value (null where the blob holds the driver's
"not supported" fill of all-ones); the Rust tests compare each decoded field with it.

Usage: python3 scripts/make_gpu_metrics_fixtures.py [OUT_DIR]   (default tests/fixtures)
Stdlib only; output is deterministic, so re-running it changes nothing in git.
"""
import json
import os
import struct
import sys

SIZES = {"B": 1, "H": 2, "I": 4, "Q": 8}
ABSENT = {"B": 0xFF, "H": 0xFFFF, "I": 0xFFFFFFFF, "Q": 0xFFFFFFFFFFFFFFFF}

HEADER = [("structure_size", "H", 1), ("format_revision", "B", 1), ("content_revision", "B", 1)]

V1_3 = HEADER + [
    ("temperature_edge", "H", 1), ("temperature_hotspot", "H", 1), ("temperature_mem", "H", 1),
    ("temperature_vrgfx", "H", 1), ("temperature_vrsoc", "H", 1), ("temperature_vrmem", "H", 1),
    ("average_gfx_activity", "H", 1), ("average_umc_activity", "H", 1),
    ("average_mm_activity", "H", 1),
    ("average_socket_power", "H", 1), ("energy_accumulator", "Q", 1),
    ("system_clock_counter", "Q", 1),
    ("average_gfxclk_frequency", "H", 1), ("average_socclk_frequency", "H", 1),
    ("average_uclk_frequency", "H", 1), ("average_vclk0_frequency", "H", 1),
    ("average_dclk0_frequency", "H", 1), ("average_vclk1_frequency", "H", 1),
    ("average_dclk1_frequency", "H", 1),
    ("current_gfxclk", "H", 1), ("current_socclk", "H", 1), ("current_uclk", "H", 1),
    ("current_vclk0", "H", 1), ("current_dclk0", "H", 1), ("current_vclk1", "H", 1),
    ("current_dclk1", "H", 1),
    ("throttle_status", "I", 1),
    ("current_fan_speed", "H", 1),
    ("pcie_link_width", "H", 1), ("pcie_link_speed", "H", 1),
    ("padding", "H", 1),
    ("gfx_activity_acc", "I", 1), ("mem_activity_acc", "I", 1),
    ("temperature_hbm", "H", 4),
    ("firmware_timestamp", "Q", 1),
    ("voltage_soc", "H", 1), ("voltage_gfx", "H", 1), ("voltage_mem", "H", 1),
    ("padding1", "H", 1),
    ("indep_throttle_status", "Q", 1),
]

V2_1 = HEADER + [
    ("temperature_gfx", "H", 1), ("temperature_soc", "H", 1), ("temperature_core", "H", 8),
    ("temperature_l3", "H", 2),
    ("average_gfx_activity", "H", 1), ("average_mm_activity", "H", 1),
    ("system_clock_counter", "Q", 1),
    ("average_socket_power", "H", 1), ("average_cpu_power", "H", 1),
    ("average_soc_power", "H", 1), ("average_gfx_power", "H", 1),
    ("average_core_power", "H", 8),
    ("average_gfxclk_frequency", "H", 1), ("average_socclk_frequency", "H", 1),
    ("average_uclk_frequency", "H", 1), ("average_fclk_frequency", "H", 1),
    ("average_vclk_frequency", "H", 1), ("average_dclk_frequency", "H", 1),
    ("current_gfxclk", "H", 1), ("current_socclk", "H", 1), ("current_uclk", "H", 1),
    ("current_fclk", "H", 1), ("current_vclk", "H", 1), ("current_dclk", "H", 1),
    ("current_coreclk", "H", 8), ("current_l3clk", "H", 2),
    ("throttle_status", "I", 1),
    ("fan_pwm", "H", 1),
    ("padding", "H", 3),
]
V2_2 = V2_1 + [("indep_throttle_status", "Q", 1)]
V2_3 = V2_2 + [
    ("average_temperature_gfx", "H", 1), ("average_temperature_soc", "H", 1),
    ("average_temperature_core", "H", 8), ("average_temperature_l3", "H", 2),
]
V2_4 = V2_3 + [
    ("average_cpu_voltage", "H", 1), ("average_soc_voltage", "H", 1),
    ("average_gfx_voltage", "H", 1),
    ("average_cpu_current", "H", 1), ("average_soc_current", "H", 1),
    ("average_gfx_current", "H", 1),
]

V3_0 = HEADER + [
    ("temperature_gfx", "H", 1), ("temperature_soc", "H", 1), ("temperature_core", "H", 16),
    ("temperature_skin", "H", 1),
    ("average_gfx_activity", "H", 1), ("average_vcn_activity", "H", 1),
    ("average_ipu_activity", "H", 8), ("average_core_c0_activity", "H", 16),
    ("average_dram_reads", "H", 1), ("average_dram_writes", "H", 1),
    ("average_ipu_reads", "H", 1), ("average_ipu_writes", "H", 1),
    ("system_clock_counter", "Q", 1),
    ("average_socket_power", "I", 1), ("average_ipu_power", "H", 1),
    ("average_apu_power", "I", 1), ("average_gfx_power", "I", 1),
    ("average_dgpu_power", "I", 1), ("average_all_core_power", "I", 1),
    ("average_core_power", "H", 16), ("average_sys_power", "H", 1),
    ("stapm_power_limit", "H", 1), ("current_stapm_power_limit", "H", 1),
    ("average_gfxclk_frequency", "H", 1), ("average_socclk_frequency", "H", 1),
    ("average_vpeclk_frequency", "H", 1), ("average_ipuclk_frequency", "H", 1),
    ("average_fclk_frequency", "H", 1), ("average_vclk_frequency", "H", 1),
    ("average_uclk_frequency", "H", 1), ("average_mpipu_frequency", "H", 1),
    ("current_coreclk", "H", 16), ("current_core_maxfreq", "H", 1),
    ("current_gfx_maxfreq", "H", 1),
    ("throttle_residency_prochot", "I", 1), ("throttle_residency_spl", "I", 1),
    ("throttle_residency_fppt", "I", 1), ("throttle_residency_sppt", "I", 1),
    ("throttle_residency_thm_core", "I", 1), ("throttle_residency_thm_gfx", "I", 1),
    ("throttle_residency_thm_soc", "I", 1),
    ("time_filter_alphavalue", "I", 1),
]


def layout(fields):
    """(name, fmt, count, offset) per field, and the padded struct size (C natural alignment)."""
    out, off, align = [], 0, 1
    for name, fmt, count in fields:
        size = SIZES[fmt]
        off = (off + size - 1) // size * size
        out.append((name, fmt, count, off))
        off += size * count
        align = max(align, size)
    return out, (off + align - 1) // align * align


def build(fields, fmt_rev, content_rev, values, size_override=None):
    """Blob filled with 0xFF first (as smu_cmn_init_soft_gpu_metrics does), then each given field."""
    fields_at, size = layout(fields)
    blob = bytearray(b"\xff" * size)
    hdr = {"structure_size": size_override or size, "format_revision": fmt_rev,
           "content_revision": content_rev}
    sidecar = {}
    for name, fmt, count, off in fields_at:
        if name.startswith("padding"):
            continue
        value = hdr.get(name, values.get(name))
        items = value if isinstance(value, list) else [value] * count if count > 1 else [value]
        assert len(items) == count, name
        for i, item in enumerate(items):
            raw = ABSENT[fmt] if item is None else item
            struct.pack_into("<" + fmt, blob, off + i * SIZES[fmt], raw)
        sidecar[name] = items if count > 1 else items[0]
    return bytes(blob), sidecar


BOOT_NS = 123_456_789_012  # CLOCK_BOOTTIME ns as the driver would stamp it

V1_3_VALUES = {
    # A busy Navi 3x dGPU: plain °C, %, W, MHz; energy in 15.259 µJ ticks.
    "temperature_edge": 61, "temperature_hotspot": 78, "temperature_mem": 70,
    "temperature_vrgfx": 55, "temperature_vrsoc": 52, "temperature_vrmem": 50,
    "average_gfx_activity": 97, "average_umc_activity": 41, "average_mm_activity": None,
    "average_socket_power": 287, "energy_accumulator": 65536 * 1000,
    "system_clock_counter": BOOT_NS,
    "average_gfxclk_frequency": 2480, "average_socclk_frequency": 1200,
    "average_uclk_frequency": 1249, "average_vclk0_frequency": 29, "average_dclk0_frequency": 31,
    "average_vclk1_frequency": None, "average_dclk1_frequency": None,
    "current_gfxclk": 2505, "current_socclk": 1201, "current_uclk": 1250, "current_vclk0": 30,
    "current_dclk0": 32, "current_vclk1": None, "current_dclk1": None,
    "throttle_status": 0, "current_fan_speed": 1830, "pcie_link_width": 16,
    "pcie_link_speed": 160, "gfx_activity_acc": 123456, "mem_activity_acc": 65432,
    "temperature_hbm": [None, None, None, None], "firmware_timestamp": 987_654_321,
    "voltage_soc": 750, "voltage_gfx": 1050, "voltage_mem": 1350, "indep_throttle_status": 0,
}

V2_VALUES = {
    # Phoenix-class APU. v2_4 documents centi-°C and centi-%; the others give no units.
    "temperature_gfx": 5230, "temperature_soc": 5110,
    "temperature_core": [5001, 5002, 5003, 5004, 5005, 5006, 5007, 5008],
    "temperature_l3": [4901, 4902], "average_gfx_activity": 8850, "average_mm_activity": None,
    "system_clock_counter": BOOT_NS,
    "average_socket_power": 41250, "average_cpu_power": 12300, "average_soc_power": 6100,
    "average_gfx_power": 21700,
    "average_core_power": [1101, 1102, 1103, 1104, 1105, 1106, 1107, 1108],
    "average_gfxclk_frequency": 2700, "average_socclk_frequency": 1100,
    "average_uclk_frequency": 2800, "average_fclk_frequency": 2000,
    "average_vclk_frequency": 400, "average_dclk_frequency": 401,
    "current_gfxclk": 2710, "current_socclk": 1101, "current_uclk": 2801, "current_fclk": 2001,
    "current_vclk": 402, "current_dclk": 403,
    "current_coreclk": [4001, 4002, 4003, 4004, 4005, 4006, 4007, 4008],
    "current_l3clk": [3901, 3902], "throttle_status": 4, "fan_pwm": None,
    "indep_throttle_status": 0x20,
    "average_temperature_gfx": 5200, "average_temperature_soc": 5100,
    "average_temperature_core": [4991, 4992, 4993, 4994, 4995, 4996, 4997, 4998],
    "average_temperature_l3": [4891, 4892],
    "average_cpu_voltage": 1100, "average_soc_voltage": 900, "average_gfx_voltage": 1000,
    "average_cpu_current": 11000, "average_soc_current": 6700, "average_gfx_current": 21000,
}

V3_0_VALUES = {
    # Strix Halo (gfx1151) under decode: temperature and activity written in centi-units, as the
    # SMU 14 metrics table documents them (the kernel header's comment says [0-100]).
    "temperature_gfx": 6125, "temperature_soc": 5980,
    "temperature_core": [5500 + i for i in range(16)], "temperature_skin": None,
    "average_gfx_activity": 9312, "average_vcn_activity": 0,
    "average_ipu_activity": [0] * 8, "average_core_c0_activity": [300 + i for i in range(16)],
    "average_dram_reads": 61234, "average_dram_writes": 4321,
    "average_ipu_reads": 0, "average_ipu_writes": 0,
    "system_clock_counter": BOOT_NS,
    "average_socket_power": 118_500, "average_ipu_power": 0,
    "average_apu_power": 116_000, "average_gfx_power": 97_250, "average_dgpu_power": 0,
    "average_all_core_power": 9_800, "average_core_power": [600 + i for i in range(16)],
    "average_sys_power": None, "stapm_power_limit": 120_00, "current_stapm_power_limit": 120_00,
    "average_gfxclk_frequency": 2890, "average_socclk_frequency": 1400,
    "average_vpeclk_frequency": 800, "average_ipuclk_frequency": 1000,
    "average_fclk_frequency": 2000, "average_vclk_frequency": 0,
    "average_uclk_frequency": 2000, "average_mpipu_frequency": 1000,
    "current_coreclk": [5100 - i for i in range(16)], "current_core_maxfreq": 5150,
    "current_gfx_maxfreq": 2900,
    "throttle_residency_prochot": 0, "throttle_residency_spl": 12,
    "throttle_residency_fppt": 3, "throttle_residency_sppt": 4,
    "throttle_residency_thm_core": 0, "throttle_residency_thm_gfx": 0,
    "throttle_residency_thm_soc": 0, "time_filter_alphavalue": 10_000,
}


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    mode = "wb" if isinstance(data, bytes) else "w"
    with open(path, mode) as f:
        f.write(data)


def write_blob(out, name, blob, sidecar):
    write(os.path.join(out, "gpu_metrics", name + ".bin"), blob)
    write(os.path.join(out, "gpu_metrics", name + ".json"),
          json.dumps(sidecar, indent=1, sort_keys=True) + "\n")


def sysfs_tree(root, card, files, hwmon):
    dev = os.path.join(root, "class", "drm", card, "device")
    for name, content in files.items():
        write(os.path.join(dev, name), content)
    for name, content in hwmon.items():
        write(os.path.join(dev, "hwmon", "hwmon3", name), content)
    # Connectors and render nodes sit beside the cards in /sys/class/drm; discovery must skip them.
    write(os.path.join(root, "class", "drm", card + "-DP-1", "status"), "disconnected\n")
    write(os.path.join(root, "class", "drm", "renderD128", "dev"), "226:128\n")
    write(os.path.join(root, "class", "drm", "version"), "drm 1.1.0 20060810\n")


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures")
    blobs = {}
    for name, fields, fmt_rev, content_rev, values in [
        ("v1_3", V1_3, 1, 3, V1_3_VALUES),
        ("v2_1", V2_1, 2, 1, V2_VALUES), ("v2_2", V2_2, 2, 2, V2_VALUES),
        ("v2_3", V2_3, 2, 3, V2_VALUES), ("v2_4", V2_4, 2, 4, V2_VALUES),
        ("v3_0", V3_0, 3, 0, V3_0_VALUES),
    ]:
        values = {k: v for k, v in values.items() if k in {f[0] for f in fields}}
        blob, sidecar = build(fields, fmt_rev, content_rev, values)
        blobs[name] = blob
        write_blob(out, name, blob, sidecar)

    expected_sizes = {"v1_3": 120, "v2_1": 120, "v2_2": 128, "v2_3": 152, "v2_4": 168,
                      "v3_0": 264}
    for name, size in expected_sizes.items():
        assert len(blobs[name]) == size, (name, len(blobs[name]), size)

    gm = os.path.join(out, "gpu_metrics")
    # Cut inside system_clock_counter: a short read must be an error, never a partial decode.
    write(os.path.join(gm, "v3_0_truncated.bin"), blobs["v3_0"][:108])
    # A revision nobody documents yet.
    write(os.path.join(gm, "v9_9_unknown.bin"),
          struct.pack("<HBB", 64, 9, 9) + b"\x00" * 60)
    # The early v3_0 patch's header: (2,1) on a 264-byte v3_0 body.
    write(os.path.join(gm, "v2_1_header_v3_0_body.bin"),
          struct.pack("<HBB", 264, 2, 1) + blobs["v3_0"][4:])

    sysfs = os.path.join(out, "sysfs")
    sysfs_tree(os.path.join(sysfs, "dgpu-v1_3"), "card0", {
        "vendor": "0x1002\n", "device": "0x744c\n",
        "gpu_busy_percent": "97\n", "mem_busy_percent": "41\n",
        "mem_info_vram_used": "8589934592\n", "mem_info_vram_total": "25753026560\n",
        "mem_info_gtt_used": "33554432\n", "mem_info_gtt_total": "33554432000\n",
        "pp_dpm_sclk": "0: 500Mhz \n1: 2505Mhz *\n2: 2700Mhz \n",
        "pp_dpm_mclk": "0: 96Mhz \n1: 456Mhz \n2: 1250Mhz *\n",
        "gpu_metrics": blobs["v1_3"],
    }, {
        "name": "amdgpu\n", "power1_average": "287000000\n", "power1_input": "291000000\n",
        "power1_label": "PPT\n", "temp1_input": "61000\n", "temp2_input": "78000\n",
        "temp3_input": "70000\n", "freq1_input": "2505000000\n", "freq2_input": "1250000000\n",
    })
    sysfs_tree(os.path.join(sysfs, "apu-v2_4"), "card0", {
        "vendor": "0x1002\n", "device": "0x15bf\n",
        "gpu_busy_percent": "88\n",
        "mem_info_vram_used": "536870912\n", "mem_info_vram_total": "536870912\n",
        "mem_info_gtt_used": "2147483648\n", "mem_info_gtt_total": "16777216000\n",
        "pp_dpm_sclk": "0: 800Mhz \n1: 2710Mhz *\n2: 2800Mhz \n",
        "gpu_metrics": blobs["v2_4"],
    }, {
        "name": "amdgpu\n", "power1_average": "41250000\n", "power1_label": "PPT\n",
        "temp1_input": "52000\n", "in0_input": "1000\n",
    })
    # Strix Halo puts its GPU on card1 (card0 is often simpledrm or absent).
    sysfs_tree(os.path.join(sysfs, "apu-v3_0"), "card1", {
        "vendor": "0x1002\n", "device": "0x1586\n",
        "gpu_busy_percent": "93\n",
        "mem_info_vram_used": "1073741824\n", "mem_info_vram_total": "103079215104\n",
        "mem_info_gtt_used": "15032385536\n", "mem_info_gtt_total": "17179869184\n",
        "pp_dpm_sclk": "0: 600Mhz \n1: 2890Mhz *\n2: 2900Mhz \n",
        "gpu_metrics": blobs["v3_0"],
    }, {
        "name": "amdgpu\n", "power1_average": "118500000\n", "power1_input": "121000000\n",
        "power1_label": "PPT\n", "temp1_input": "61250\n", "freq1_input": "2890000000\n",
    })


if __name__ == "__main__":
    main()
