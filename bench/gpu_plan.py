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
from paper_gpu import SUITE, sizes_of, unknown_name  # noqa: E402

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
# PPCG's side in two (ppcg-build in the background, then ppcg): our points read, the cases found
# beside the 14 emits, all in parallel (matmul's register-tiled tree takes the longest: about 5
# minutes on 2 busy cores here, so about a minute and a half there), 30 programs built on 16
# cores; then 30 programs run one at a time, 1-3 s each (PPCG's README; not measured on a GPU)
PPCG_BUILD = (120, "points read, cases found beside 14 emits, 30 programs built")
PPCG_RUN = (90, "30 programs run one at a time (1-3 s each: context, inputs, the CPU's check)")
# The register-tiled tree of matmul (--register-tiles): 75 s of CPU for its analysis here (2 cores
# shared); the committed runs had none of it. Each bench or sanitizer run of such a part pays it.
TILES_ANALYSIS = 45.0
WHEELS = 10.0   # seconds before the background parts start: the analysis' wheels installed, before pycuda builds
# Parts no committed file times (seconds, and why that figure)
FIXED = {"setup": (90, "pycuda built from its sdist and the wheels installed: at most 90 s on 16 cores "
                       "(docs/bench/README.md)"),
         "env": (5, "nvidia-smi, nvcc, versions"),
         "refs": (25, "CuPy's import, a copy, SGEMM at n = 1024, 2048, 4096 (not logged; 20 timed runs each)"),
         "ppcg": (150, "parakern's side emitted (in parallel), 30 programs built on every core, each run "
                       "once (PPCG's README: about 2 minutes, not measured)"),
         "page": (5, "bench/gpu_page.py")}


DISPATCHERS = ("dispatcher", "dispatcher_default", "dispatcher_tuned")


class _Names(dict):
    """The data names a WORK or BYTES function reads (it is called on this, which records them)."""

    def __getitem__(self, name):
        self.setdefault(name, 1)
        return 1


def data_names(base: str) -> set:
    """The data parameters of a sample: those its WORK and BYTES read."""
    names = _Names()
    for table in (WORK, BYTES):
        if base in table:
            table[base](names)
    return set(names)


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
        base = variant.split("+")[0]
        data = data_names(base)
        per_point = {}   # the program parameters' values (the data's aside) -> kernel and dispatcher seconds
        for x in doc["results"] + [d for k in DISPATCHERS for d in doc.get(k, ())]:
            point = tuple(sorted((k, v) for k, v in x["values"].items() if k not in data))
            per_point[point] = per_point.get(point, 0.0) + ((x.get("gpu_s") or x.get("dispatch_s") or 0) * 23)
        kernels = sum(per_point.values())    # 3 warm-ups, 20 timed
        jobs = doc.get("serial_jobs") or 1
        serial_wall = math.ceil(n / jobs) * max(serial.values(), default=0.0)
        first = doc["results"][0]["values"]
        out.append({"run": f"{folder.name}/{key}", "points": n, "kernels": kernels / n, "per_point": per_point,
                    "serial": max(serial.values(), default=0.0), "jobs": jobs,
                    "overhead": max(0.0, r["seconds"] - serial_wall - kernels) / n,
                    "work": WORK[base](first) if base in WORK else None,
                    "bytes": BYTES[base](first) if base in BYTES else None})
    return out


def bench_estimate(name, entry, data, sweep, serial_done: set) -> tuple:
    """(seconds on the GPU's side, seconds of serial C, points, what it is made of) of one bench
    part; serial_done: the (program, point) pairs an earlier part ran the serial C of (updated)."""
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
        same = [c["per_point"].get(tuple(sorted(p.items()))) for p in pts]   # these points, where it ran them
        kernels = (sum(same) if None not in same else len(pts) * c["kernels"]) * scale
        serial = math.ceil(len(fresh) / max(1, entry.serial_jobs)) * c["serial"] * scale if fresh else 0.0
        if best is None or overhead + kernels + serial > sum(best[:2]):
            best = (overhead + kernels, serial,
                    f"{overhead:.0f} s compiles, inputs and checks + {kernels:.0f} s kernels + {serial:.0f} s serial C "
                    f"({len(pts) - len(fresh)} points cached), from {c['run']} (x{scale:.3g} the work)")
    if best is None:
        return 15.0 * len(pts), 0.0, len(pts), "no committed run of this sample: 15 s a point"
    return best[0], best[1], len(pts), best[2]


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


def bench_part(suite: dict, part: str, serial_done: set) -> tuple:
    """(seconds on the GPU's side, seconds of serial C, what) of a bench part, every size of it."""
    gpu = serial = 0.0
    what = []
    for name, entry, tag, data, sweep in sizes_of(suite, [part]):
        g, s, n, why = bench_estimate(name, entry, data, sweep, serial_done)
        if "--register-tiles" in entry.options:
            g, why = g + TILES_ANALYSIS, f"{TILES_ANALYSIS:.0f} s the register-tiled analysis + " + why
        gpu, serial = gpu + g, serial + s
        what.append(f"{tag}: {n} points, {why}")
    return gpu, serial, "; ".join(what)


def base_of(part: str) -> str:
    return part.split("@")[0].split("+")[0]


def plan(parts: list) -> list:
    """(part, starts at, seconds, what) per part in gpu_all.sh's order, the real sizes' figures
    (also for a rehearsal: the figures to plan with). Background parts (serial:..., ppcg-build)
    start once the analysis' wheels are in (WHEELS), before pycuda builds, and run beside the
    other parts; a part that needs one waits for it. A name that is no part says so."""
    rows, serial_done, clock = [("setup", 0.0, *FIXED["setup"])], set(), FIXED["setup"][0]
    background = {}   # what waits for it -> when it ends
    for part in parts:
        head = part.split(":", 1)[0]
        waits = 0.0
        if head == "serial":
            names = part.split(":", 1)[1].split(",")
            seconds = sum(bench_part(SUITE, n, serial_done)[1] for n in names if not unknown_name(SUITE, [n]))
            for n in names:
                background[base_of(n)] = WHEELS + seconds
            rows.append((part, WHEELS, seconds, "in the background from the start: serial C ahead of its parts"))
            continue
        if head == "ppcg-build":
            background["ppcg"] = WHEELS + PPCG_BUILD[0]
            rows.append((part, WHEELS, PPCG_BUILD[0], f"in the background from the start: {PPCG_BUILD[1]}"))
            continue
        key = "ppcg" if head == "ppcg" else base_of(part)
        if key in background:
            waits = max(0.0, background.pop(key) - clock)
            clock += waits
        if head == "ppcg":
            seconds, what = PPCG_RUN if any(r[0] == "ppcg-build" for r in rows) else FIXED["ppcg"]
        elif head in FIXED:
            seconds, what = FIXED[head]
        elif head == "sanitize":
            names = part.split(":", 1)[1].split(",") if ":" in part else [n for n, e in SUITE.items() if e.small]
            seconds, what = sanitize_estimate(names)
            if any("--register-tiles" in SUITE[n].options for n in names if n in SUITE):   # the runs analyse at once
                seconds += TILES_ANALYSIS
                what += f" + {TILES_ANALYSIS:.0f} s the register-tiled analysis"
        elif head in ("tune", "profile"):
            seconds, what = 60.0, "not estimated: about a minute a sample"
        elif unknown_name(SUITE, [part]):
            seconds, what = 0.0, unknown_name(SUITE, [part])
        else:
            gpu, serial, what = bench_part(SUITE, part, serial_done)
            seconds = gpu + serial
        if waits:
            what = f"waits {waits:.0f} s for its background part; " + what
        rows.append((part, clock - waits, seconds + waits, what))
        clock += seconds
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("parts", nargs="+")
    parser.add_argument("--deadline", type=float, default=0)
    args = parser.parse_args(argv)
    print("gpu_plan: estimated seconds on an H100/H200 machine (16 cores), from the committed runs "
          "(the real sizes', also for a QUICK=1 rehearsal):")
    end = 0.0
    for part, starts, seconds, what in plan(args.parts):
        end = max(end, starts + seconds)
        late = " (past the deadline: cut)" if args.deadline and starts + seconds > args.deadline \
            and part != "page" else ""   # gpu_all.sh writes the page whatever the time
        print(f"  {part:28s} {seconds:5.0f} s  ends at {starts + seconds:5.0f} s{late}  {what}")
    against = f" against a deadline of {args.deadline:.0f} s" if args.deadline else ""
    print(f"gpu_plan: {end:.0f} s in all{against}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
