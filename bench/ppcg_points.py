"""parakern's side of the PPCG comparison (bench/ppcg/run_gpu.sh), found by rule: for each kernel
PPCG was run on, our best point at PPCG's size in a committed GPU run (the fastest correct
kernel of the sample and its cache(...) variants there), and the case today's default dispatcher
launches at that point on this GPU (`dispatch.choose`: the time model's fastest case that fits),
so that no case number is written by hand and a new tree renumbers nothing by mistake.

    python bench/ppcg_points.py [--runs docs/bench/h200] [--profile h100] [--out bench/ppcg/parakern/points.txt]

Writes one line per kernel: `kernel file case options point -DPK_NAME=V ... # why`, what
run_gpu.sh builds (`file`.cu and `file`_fix.cu, the latter with the point's compile-time
instance) and parakern/emit_all.sh emits (with `options`, `-` for none: the variant's options of
emit; `point`: B0=32,ub1=32,s=4, emit's --fix).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gpu_page import sample_of  # noqa: E402
from gpu_tune import detected_profile  # noqa: E402
from paper_gpu import SUITE, variant_file  # noqa: E402

from parakern import dispatch  # noqa: E402
from parakern.machine.devices import get_profile  # noqa: E402
from parakern.pipeline import Options, analyze  # noqa: E402
from parakern.strategies.decisions import strategy_codes  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
# The sizes of bench/ppcg/src/*.c (PPCG's inputs: fixed sizes), in the samples' names
SIZES = {"matmul": {"n": 2048}, "transpose": {"N": 8192}, "matadd": {"N": 8192}, "jacobi1d": {"N": 32770, "T": 4},
         "stencil2d": {"N": 8192}, "matvec": {"m": 8192, "n": 8192}, "saxpy": {"n": 67108864}}


def best_point(runs: Path, kernel: str) -> "tuple | None":
    """(variant, values, seconds, run) of the fastest correct kernel of `kernel` or its variants
    at PPCG's size in the folder's runs; None where none ran there."""
    best = None
    for path in sorted(runs.glob("*.json")):
        try:
            doc = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError):
            continue
        if not isinstance(doc, dict) or "results" not in doc:
            continue
        variant = sample_of(path.stem)
        if variant not in SUITE or SUITE[variant].sample != kernel:
            continue
        for r in doc["results"]:
            if not r.get("correct") or not r.get("gpu_s"):
                continue
            if any(r["values"].get(k) != v for k, v in SIZES[kernel].items()):
                continue
            if best is None or r["gpu_s"] < best[2]:
                best = (variant, r["values"], r["gpu_s"], path.name)
    return best


def line(kernel: str, runs: Path, profile: str, scratch: Path, cases: bool = True) -> str:
    """points.txt's line of a kernel; cases=False: `-` for the case (no analysis: what
    emit_all.sh needs, written first so that the emits run beside the analyses)."""
    found = best_point(runs, kernel)
    if found is None:
        raise SystemExit(f"ppcg_points: {runs} has no correct run of {kernel} at {SIZES[kernel]}")
    variant, values, seconds, run = found
    entry = SUITE[variant]
    file = variant_file(entry, scratch)
    options = [o for o in entry.options if o == "--register-tiles"]   # what emit takes of the bench's options
    if cases:
        strategies = strategy_codes() if options else None
        (result,) = [r for r in analyze(file.read_text(), file.name, Options(strategies=strategies)).results
                     if r.tree is not None][:1]
        choice = dispatch.choose(result.tree, get_profile(profile), values)
        if choice.case is None:
            raise SystemExit(f"ppcg_points: no case of {variant} fits {profile} at {values}: {choice.reason}")
        case, why = choice.case, f"case {choice.case}: today's default dispatcher on {profile} ({choice.by})"
    else:
        case, why = "-", "its case not yet found"
    name = entry.sample + ("_" + "_".join(entry.cache.split("(")[0].split()) if entry.cache else "")
    program = {k: v for k, v in values.items() if k not in SIZES[kernel]}
    defines = " ".join(f"-DPK_{k.upper()}={v}" for k, v in program.items())
    fix = ",".join(f"{k}={v}" for k, v in program.items())
    return (f"{kernel} {name} {case} {' '.join(options) or '-'} {fix} {defines}  # {variant} at "
            f"{' '.join(f'{k}={v}' for k, v in program.items())}: {seconds * 1e3:.4g} ms in {runs.name}/{run}; {why}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=Path, default=ROOT / "docs" / "bench" / "h200")
    parser.add_argument("--profile", default="auto",
                        help="the GPU's profile (machine/devices.py); auto: this machine's GPU's, else h100")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "ppcg" / "parakern" / "points.txt")
    parser.add_argument("--no-cases", action="store_true",
                        help="the points alone (no analysis; the case column `-`): what emit_all.sh reads")
    parser.add_argument("kernels", nargs="*", default=list(SIZES))
    args = parser.parse_args(argv)
    unknown = [k for k in args.kernels if k not in SIZES]
    if unknown:
        parser.error(f"unknown kernel {unknown[0]!r}: choose from {', '.join(SIZES)}")
    if args.profile == "auto":
        args.profile = detected_profile() or "h100"
    scratch = args.out.parent / "variants"
    lines = [line(k, args.runs, args.profile, scratch, not args.no_cases) for k in args.kernels]
    partial = args.out.with_suffix(".part")   # whole or not at all: emit_all.sh may be reading it
    partial.write_text("\n".join(lines) + "\n")
    partial.replace(args.out)
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
