#!/usr/bin/env bash
# scripts/telemetry_h200.sh — the telemetry figures of BENCHMARKS.md, on an NVIDIA GPU host.
#
# Runs, in one go:
#   1. the sampler benchmark on the amdgpu sysfs backend (fixture tree on /dev/shm, 1 kHz, 10 s);
#   2. a GPU load (torch fp16 matmuls: 3 s idle, then busy), and during it, side by side for the
#      same 20 s: `abprof monitor --telemetry nvml --hz 1000` and
#      `nvidia-smi --query-gpu=timestamp,power.draw,utilization.gpu -lms 10`, each with its read
#      rate, each value's real update interval and its own CPU cost; then abprof at 100 Hz;
#   3. the NVML integration test against the real library.
# Binaries come prebuilt (the device has no Rust): ABPROF_BIN, SAMPLER_BENCH_BIN, TELEMETRY_TEST_BIN.
# Results go to $OUT (default ./telemetry-out).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${OUT:-$PWD/telemetry-out}
mkdir -p "$out"
abprof=${ABPROF_BIN:?set ABPROF_BIN to an abprof binary}
seconds=${SECONDS_MONITORED:-20}

echo "== host"
nvidia-smi --query-gpu=name,driver_version,power.limit --format=csv,noheader || true
nproc

if [[ -n "${SAMPLER_BENCH_BIN:-}" ]]; then
    echo "== sampler benchmark (amdgpu sysfs fixture on tmpfs)"
    "$SAMPLER_BENCH_BIN" 10 1000 "$here/tests/fixtures/sysfs/dgpu-v1_3"
fi

echo "== GPU load with abprof monitor and nvidia-smi side by side"
python3 - "$((seconds + 18))" >"$out/load.log" 2>&1 <<'EOF' &
import sys, time, torch
a = torch.randn(8192, 8192, device="cuda", dtype=torch.float16)
b = torch.randn_like(a)
time.sleep(3)
end = time.time() + float(sys.argv[1]) - 3
while time.time() < end:
    for _ in range(20):
        c = a @ b
    torch.cuda.synchronize()
print("load done")
EOF
load=$!
sleep 1

python3 - "$seconds" "$out/nvidia-smi.csv" >"$out/nvidia-smi-cost.txt" <<'EOF' &
import os, subprocess, sys, time
seconds, path = float(sys.argv[1]), sys.argv[2]
with open(path, "w") as f:
    t0 = time.time()
    p = subprocess.Popen(["nvidia-smi", "--query-gpu=timestamp,power.draw,utilization.gpu",
                          "--format=csv,noheader,nounits", "-lms", "10"], stdout=f)
    time.sleep(seconds)
    p.terminate()
    _, _, ru = os.wait4(p.pid, 0)
    wall = time.time() - t0
print(f"nvidia-smi cpu_s {ru.ru_utime + ru.ru_stime:.3f} wall_s {wall:.2f} "
      f"share_pct {100 * (ru.ru_utime + ru.ru_stime) / wall:.2f}")
EOF
smi=$!

"$abprof" monitor --telemetry nvml --hz 1000 --duration "${seconds}s" \
    --csv "$out/abprof-nvml.csv" --driver-power-csv "$out/abprof-driver-power.csv" \
    --stats-json "$out/abprof-stats.json" | tee "$out/abprof-monitor.txt"
wait "$smi"

echo "== abprof monitor at nvidia-smi's rate (100 Hz), still under load"
"$abprof" monitor --telemetry nvml --hz 100 --duration 10s | grep -E '^(reads|jitter|read cost|CPU|busy_pct|power_w)[: ]'
wait "$load" || true

echo "== nvidia-smi -lms 10, same window"
cat "$out/nvidia-smi-cost.txt"
python3 - "$out/nvidia-smi.csv" <<'EOF'
import datetime, statistics, sys
rows = []
for line in open(sys.argv[1]):
    parts = [p.strip() for p in line.split(",")]
    if len(parts) != 3:
        continue
    try:
        t = datetime.datetime.strptime(parts[0], "%Y/%m/%d %H:%M:%S.%f").timestamp()
        rows.append((t, float(parts[1]), float(parts[2])))
    except ValueError:
        pass
span = rows[-1][0] - rows[0][0]
print(f"nvidia-smi: {len(rows)} rows in {span:.2f} s = {len(rows) / span:.1f} Hz")
for name, i in (("power.draw", 1), ("utilization.gpu", 2)):
    changes = [rows[k][0] for k in range(1, len(rows)) if rows[k][i] != rows[k - 1][i]]
    gaps = [b - a for a, b in zip(changes, changes[1:])]
    med = statistics.median(gaps) * 1000 if gaps else float("nan")
    peak = max(r[i] for r in rows)
    print(f"  {name}: {len(changes)} changes, real update interval (median) {med:.1f} ms, max {peak}")
EOF

if [[ -n "${TELEMETRY_TEST_BIN:-}" ]]; then
    echo "== NVML integration test against the real library"
    "$TELEMETRY_TEST_BIN" nvml --nocapture 2>&1 | tail -5
fi
