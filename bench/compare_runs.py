"""Kernel times of two GPU runs side by side: every (point, case) that both measured.

    python bench/compare_runs.py BEFORE_DIR AFTER_DIR [--markdown]

For each bench JSON of AFTER_DIR whose name is also in BEFORE_DIR (bench/gpu_all.sh's
files), one row per point and case: both median kernel times, after / before, and the
registers nvcc gave each; then the dispatcher's times. Rows the two runs do not share are
left out. Use it for a generator change measured on a few points (a run of the same kind of
GPU: compare only what ran on the same device model).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def _key(values: dict) -> tuple:
    return tuple(sorted(values.items()))


def rows(before: dict, after: dict) -> list:
    old = {(_key(r["values"]), r["case"], bool(r.get("compile_time"))): r for r in before["results"] if r.get("gpu_s")}
    out = []
    for r in after["results"]:
        fixed = bool(r.get("compile_time"))
        o = old.get((_key(r["values"]), r["case"], fixed))
        if r.get("gpu_s") and o:
            out.append((r["values"], f"case {r['case']}" + (" at compile time" if fixed else ""), o["gpu_s"],
                        r["gpu_s"], o.get("registers"),
                        r.get("registers"), r.get("correct")))
    old_d = {_key(d["values"]): d for d in before.get("dispatcher", []) if d.get("dispatch_s")}
    for d in after.get("dispatcher", []):
        o = old_d.get(_key(d["values"]))
        if d.get("dispatch_s") and o:
            out.append((d["values"], f"dispatcher (case {d.get('case')})", o["dispatch_s"], d["dispatch_s"],
                        None, None, d.get("correct")))
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args(argv)
    for path in sorted(args.after.glob("*.json")):
        twin = args.before / path.name
        if not twin.exists() or path.name in ("RESULTS.json", "references.json"):
            continue
        after, before = json.loads(path.read_text()), json.loads(twin.read_text())
        if "results" not in after or "results" not in before:
            continue
        print(f"\n{path.stem}\n" if not args.markdown else f"\n### {path.stem}\n\n"
              "| point | kernel | before | after | after / before | registers | matches the serial C |\n"
              "|---|---|---|---|---|---|---|")
        for values, what, t0, t1, r0, r1, ok in rows(before, after):
            point = " ".join(f"{n}={v}" for n, v in values.items())
            regs = f"{r0} -> {r1}" if r0 is not None else ""
            cells = [point, what, f"{t0 * 1e6:.1f} us", f"{t1 * 1e6:.1f} us", f"{t1 / t0:.2f}", regs,
                     "yes" if ok else "**no**"]
            print("| " + " | ".join(cells) + " |" if args.markdown else "  ".join(cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
