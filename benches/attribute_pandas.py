#!/usr/bin/env python3
"""The baseline `cargo bench --bench attribute` compares abprof with: the same attribution done
the usual Python way, through rocpd's joined `kernels` view with sqlite3 + pandas.

Reads every decode dispatch (the whole trace: the benchmark database has no manifest), sums
calls and ns per kernel name, assigns categories with abprof's rules file (first matching rule
on the function name, see assets/kernel-categories.toml) and prints per-category totals as JSON.

Usage: attribute_pandas.py DB [RULES_TOML]   (needs pandas; Python >= 3.11 for tomllib)
"""
import json
import re
import sqlite3
import sys
import tomllib
from pathlib import Path

import pandas as pd


def base_name(full):
    s = full.strip()
    if s.startswith("void "):
        s = s[5:].lstrip()
    if s.endswith(".kd"):
        s = s[:-3]
    prefix = ""
    if s.startswith("(anonymous namespace)::"):
        prefix, s = "(anonymous namespace)::", s[len("(anonymous namespace)::"):]
    cut = min([i for i in (s.find("<"), s.find("(")) if i >= 0], default=len(s))
    return prefix + s[:cut].rstrip()


def main():
    db = sys.argv[1]
    rules_path = sys.argv[2] if len(sys.argv) > 2 else Path(__file__).resolve().parent.parent / "assets" / "kernel-categories.toml"
    with open(rules_path, "rb") as f:
        rules = [(re.compile(r["regex"]), r["category"], r.get("match", "name")) for r in tomllib.load(f)["rule"]]

    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    df = pd.read_sql_query('SELECT name, start, "end" FROM kernels', con)
    df["duration"] = df["end"] - df["start"]
    per_kernel = df.groupby("name")["duration"].agg(calls="size", total_ns="sum").reset_index()

    def category(name):
        base = base_name(name)
        for regex, cat, on in rules:
            if regex.search(base if on == "name" else name):
                return cat
        return "other"

    per_kernel["category"] = per_kernel["name"].map(category)
    per_category = per_kernel.groupby("category")[["calls", "total_ns"]].sum()
    total = int(per_category["total_ns"].sum())
    out = {
        "dispatches": int(per_category["calls"].sum()),
        "categories": {
            cat: {"calls": int(r.calls), "ns": int(r.total_ns), "share": r.total_ns / total if total else 0.0}
            for cat, r in per_category.sort_values("total_ns", ascending=False).iterrows()
        },
    }
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
