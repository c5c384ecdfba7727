"""The plan of a bench/gpu_all.sh run: each part in the order given, its points and its
estimated seconds, from the committed runs (their RESULTS.json durations, their JSON's kernel,
dispatcher and serial C times, sanitizer.json), scaled to the part's sizes; and whether the
whole fits a deadline.

    python bench/gpu_plan.py [--deadline S] [--quick] PART ...

A bench part's estimate: per point, the committed run's time that is neither kernels nor serial
C (compiles and the analysis: FLOOR; inputs made, copied and compared: scaled by their size,
BYTES), plus its kernel and dispatcher time and its serial C scaled by the work of the sizes
(WORK), the serial C counted once per round of --serial-jobs and not at all for a point an
earlier part (or the serial prefill) ran (the serial cache). Of the committed runs,
those of the smallest size at least as large as the part's (else of the largest: scaling down
errs less than scaling up) give the estimate, the larger of their machines' (h100, h200).
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from paper_gpu import QUICK, SUITE, sizes_of, unknown_name  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
COMMITTED = (ROOT / "docs" / "bench" / "h100", ROOT / "docs" / "bench" / "h200")
# What a sample's kernel and serial times grow with, as a function of its data
WORK = {"matmul": lambda v: v["n"] ** 3, "transpose": lambda v: v["N"] ** 2, "matadd": lambda v: v["N"] ** 2,
        "stencil2d": lambda v: v["N"] ** 2, "jacobi1d": lambda v: v["N"] * v["T"], "saxpy": lambda v: v["n"],
        "polydiv": lambda v: v["M"] * (v["N"] - v["M"] + 1), "matvec": lambda v: v["m"] * v["n"]}
# What its inputs' size (generated, copied, compared at every run of a point) grows with
BYTES = {"matmul": lambda v: v["n"] ** 2, "transpose": lambda v: v["N"] ** 2, "matadd": lambda v: v["N"] ** 2,
         "stencil2d": lambda v: v["N"] ** 2, "jacobi1d": lambda v: v["N"], "saxpy": lambda v: v["n"],
         "polydiv": lambda v: v["N"], "matvec": lambda v: v["m"] * v["n"]}
FLOOR = 1.0   # seconds a point costs whatever its size (jacobi1d's 15 points of 256 KB: 13 s)
# Parts no committed file times (seconds, and why that figure)
FIXED = {"setup": (90, "pycuda built from its sdist and the wheels installed: at most 90 s on 16 cores "
                       "(docs/bench/README.md)"),
         "env": (5, "nvidia-smi, nvcc, versions"),
         "refs": (25, "CuPy's import, a copy, SGEMM at n = 1024, 2048, 4096 (not logged; 20 timed runs each)"),
         "ppcg": (150, "parakern's side emitted (in parallel), 30 programs built on every core, each run "
                       "once (PPCG's README: about 2 minutes, not measured)"),
         "page": (5, "bench/gpu_page.py")}


def values(assignments) -> dict:
    """("n=4096", ...) -> {"n": 4096}."""
    return {k: int(v) for k, v in (a.split("=", 1) for a in assignments)}


def points(sweep) -> list:
    """Every point of a sweep, as dicts."""
    out = [{}]
    for item in sweep:
        name, _, vals = item.partition("=")
        out = [{**p, name: int(v)} for p in out for v in vals.split(",")]
    return out


def committed(name: str) -> list:
    """Per committed run of this sample (its variant where one ran, else its base sample): its
    points, seconds, work, serial jobs, per point seconds of overhead, kernels and serial C."""
    indexes = []
    for folder in COMMITTED:
        try:
            indexes.append((folder, json.loads((folder / "RESULTS.json").read_text())))
        except (OSError, json.JSONDecodeError):
            continue
    for variant in (name, name.split("+")[0]):
        runs = [(folder, k, r) for folder, index in indexes for k, r in index.items()
                if r.get("sample") == variant and r.get("exit") == 0]
        if runs:
            break
    out = []
    for folder, key, r in runs:
        try:
            doc = json.loads((folder / f"{key.replace('+', '_')}.json").read_text())
        except (OSError, json.JSONDecodeError):
            continue
        serial = {}
        for x in doc["results"]:
            serial[tuple(sorted(x["values"].items()))] = x.get("serial_s") or 0.0
        n = max(1, len(serial))
        kernels = sum((x.get("gpu_s") or 0) * 23 for x in doc["results"])    # 3 warm-ups, 20 timed
        kernels += sum((d.get("dispatch_s") or 0) * 23 for k in ("dispatcher", "dispatcher_default",
                                                                  "dispatcher_tuned") for d in doc.get(k, ()))
        jobs = doc.get("serial_jobs") or 1
        serial_wall = math.ceil(n / jobs) * max(serial.values(), default=0.0)
        first = doc["results"][0]["values"]
        base = variant.split("+")[0]
        out.append({"run": f"{folder.name}/{key}", "points": n, "kernels": kernels / n,
                    "serial": max(serial.values(), default=0.0), "jobs": jobs,
                    "overhead": max(0.0, r["seconds"] - serial_wall - kernels) / n,
                    "work": WORK[base](first) if base in WORK else None,
                    "bytes": BYTES[base](first) if base in BYTES else None})
    return out


def bench_estimate(name, entry, data, sweep, serial_done: set) -> tuple:
    """(seconds, points, what it is made of) of one bench part; serial_done: the (program, point)
    pairs an earlier part ran the serial C of (updated)."""
    pts = points(sweep)
    program = (entry.sample, tuple(data))
    fresh = [p for p in pts if (program, tuple(sorted(p.items()))) not in serial_done]
    serial_done.update((program, tuple(sorted(p.items()))) for p in pts)
    base = name.split("+")[0]
    here = {**values(data), **pts[0]}
    runs = committed(name)
    if runs and base in BYTES:   # the smallest size at least as large as this one (else the largest), every machine's
        size = BYTES[base](here)
        larger = [c for c in runs if c["bytes"] >= size]
        near = min(larger, key=lambda c: c["bytes"]) if larger else max(runs, key=lambda c: c["bytes"])
        runs = [c for c in runs if c["bytes"] == near["bytes"]]
    best = None
    for c in runs:
        scale = WORK[base](here) / c["work"] if c["work"] else 1.0
        grown = BYTES[base](here) / c["bytes"] if c["bytes"] else 1.0
        overhead = len(pts) * (min(FLOOR, c["overhead"]) + max(0.0, c["overhead"] - FLOOR) * grown)
        kernels = len(pts) * c["kernels"] * scale
        serial = math.ceil(len(fresh) / max(1, entry.serial_jobs)) * c["serial"] * scale if fresh else 0.0
        total = overhead + kernels + serial
        if best is None or total > best[0]:
            best = (total, f"{overhead:.0f} s compiles, inputs and checks + {kernels:.0f} s kernels + "
                           f"{serial:.0f} s serial C ({len(pts) - len(fresh)} points cached), from {c['run']} "
                           f"(x{scale:.3g} the work)")
    if best is None:
        return 15.0 * len(pts), len(pts), "no committed run of this sample: 15 s a point"
    return best[0], len(pts), best[1]


def sanitize_estimate(names: list, jobs: int = 6) -> tuple:
    """Sanitizer runs (memcheck and racecheck per sample), `jobs` at a time: the committed
    sanitizer.json's seconds of the same sample where there is one, else its slowest run."""
    seconds = {}
    for folder in COMMITTED:
        try:
            for r in json.loads((folder / "sanitizer.json").read_text()):
                seconds[r["sample"]] = max(seconds.get(r["sample"], 0.0), r.get("seconds") or 0.0)
        except (OSError, json.JSONDecodeError, TypeError, KeyError):
            continue
    slowest = max(seconds.values(), default=30.0)
    runs = sorted((seconds.get(n, slowest) for n in names for _ in ("memcheck", "racecheck")), reverse=True)
    return sum(runs[::jobs]) if runs else 0.0, f"{len(runs)} runs, {jobs} at a time (sanitizer.json)"


def plan(parts: list, quick: bool = False) -> list:
    """(part, seconds, what) per part in order; a part that is not one names its problem."""
    suite = QUICK if quick else SUITE
    rows, serial_done = [("setup", *FIXED["setup"])], set()
    for part in parts:
        head = part.split(":", 1)[0]
        if head in FIXED:
            rows.append((part, *FIXED[head]))
        elif head == "sanitize":
            names = part.split(":", 1)[1].split(",") if ":" in part else [n for n, e in SUITE.items() if e.small]
            rows.append((part, *sanitize_estimate(names)))
        elif head in ("tune", "profile"):
            rows.append((part, 60.0, "not estimated: about a minute a sample"))
        elif unknown_name(suite, [part]):
            rows.append((part, 0.0, unknown_name(suite, [part])))
        else:
            total, count, what = 0.0, 0, []
            for name, entry, tag, data, sweep in sizes_of(suite, [part]):
                seconds, n, why = bench_estimate(name, entry, data, sweep, serial_done)
                total, count = total + seconds, count + n
                what.append(f"{tag}: {n} points, {why}")
            rows.append((part, total, "; ".join(what)))
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("parts", nargs="+")
    parser.add_argument("--deadline", type=float, default=0)
    parser.add_argument("--quick", action="store_true", help="QUICK=1's sizes (estimates are the real sizes')")
    args = parser.parse_args(argv)
    rows = plan(args.parts)   # the real sizes' estimates, also for a rehearsal: the figure to plan with
    elapsed = 0.0
    print("gpu_plan: estimated seconds on an H100/H200 machine (16 cores), from the committed runs:")
    for part, seconds, what in rows:
        elapsed += seconds
        late = " (past the deadline: cut)" if args.deadline and elapsed > args.deadline else ""
        print(f"  {part:24s} {seconds:6.0f} s  ends at {elapsed:5.0f} s{late}  {what}")
    against = f" against a deadline of {args.deadline:.0f} s" if args.deadline else ""
    print(f"gpu_plan: {elapsed:.0f} s in all{against}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
