#!/usr/bin/env python3
"""Cut the last N decode steps out of an Nsight Systems SQLite export, keeping its schema.

The H200 traces abprof captures are ~50 MB; a test needs a few decode steps. This copies the
CREATE statements of CUPTI_ACTIVITY_KIND_KERNEL, StringIds and the export metadata table verbatim
from the source, then the rows of the last N decode steps (the last burst of CUDA-graph kernels,
split into steps at idle gaps longer than --step-gap-us) and the StringIds rows they reference.
Nothing is rewritten: every kept row is byte-for-byte the source's.

  python3 scripts/cut_nsys_fixture.py SRC.sqlite OUT.sqlite --steps 4
"""
import argparse
import os
import sqlite3

BURST_GAP_NS = 100_000_000


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("src")
    ap.add_argument("out")
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--step-gap-us", type=float, default=200.0)
    a = ap.parse_args()

    src = sqlite3.connect(f"file:{a.src}?mode=ro", uri=True)
    rows = src.execute(
        "SELECT rowid, start, end, graphNodeId FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY start"
    ).fetchall()
    burst_start, last_end = None, None
    for _, s, e, g in rows:
        if not g:
            continue
        if last_end is None or s > last_end + BURST_GAP_NS:
            burst_start = s
        last_end = e if last_end is None else max(last_end, e)
    burst = [r for r in rows if r[1] >= burst_start]
    starts, max_end = [0], burst[0][2]
    for i in range(1, len(burst)):
        if burst[i][1] - max_end > a.step_gap_us * 1000:
            starts.append(i)
        max_end = max(max_end, burst[i][2])
    if len(starts) < a.steps + 1:
        raise SystemExit(f"only {len(starts)} steps in the last graph burst")
    # The last step may be cut by the end of tracing; keep the N complete ones before it
    # when the last one is shorter than the others.
    sizes = [b - a_ for a_, b in zip(starts, starts[1:] + [len(burst)])]
    end = len(starts) if sizes[-1] == sizes[-2] else len(starts) - 1
    first = starts[end - a.steps]
    stop = starts[end] if end < len(starts) else len(burst)
    keep = [r[0] for r in burst[first:stop]]

    if os.path.exists(a.out):
        os.remove(a.out)
    dst = sqlite3.connect(a.out)
    tables = ["CUPTI_ACTIVITY_KIND_KERNEL", "StringIds", "META_DATA_EXPORT", "EXPORT_META_DATA"]
    for name, sql in src.execute(
        "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name IN (?, ?, ?, ?)", tables
    ):
        dst.execute(sql)
    cols = [c[1] for c in src.execute("PRAGMA table_info(CUPTI_ACTIVITY_KIND_KERNEL)")]
    marks = ",".join("?" * len(cols))
    names = set()
    for rowid in keep:
        r = src.execute(f"SELECT * FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE rowid = ?", (rowid,)).fetchone()
        dst.execute(f"INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES ({marks})", r)
        for c in ("demangledName", "shortName", "mangledName"):
            v = r[cols.index(c)]
            if v is not None:
                names.add(v)
    for i in sorted(names):
        dst.execute("INSERT INTO StringIds VALUES (?, ?)", src.execute("SELECT id, value FROM StringIds WHERE id = ?", (i,)).fetchone())
    for meta in ("META_DATA_EXPORT", "EXPORT_META_DATA"):
        if src.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (meta,)).fetchone():
            for r in src.execute(f"SELECT * FROM {meta}"):
                dst.execute(f"INSERT INTO {meta} VALUES ({','.join('?' * len(r))})", r)
    dst.commit()
    dst.execute("VACUUM")
    dst.close()
    print(f"{a.out}: {len(keep)} kernels, {a.steps} decode steps of {sizes[end - 1]}, {len(names)} strings")


if __name__ == "__main__":
    main()
