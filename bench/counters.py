"""Evaluates every counter on every sample and prints the time per sample.

    .venv/bin/python bench/counters.py [--target sm_80] [--device a100]

"Warm" means Python and its imports are loaded; the counters' caches are
empty in the first pass and full in the second.
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAPER = ("matadd", "matmul", "jacobi1d", "transpose", "polydiv")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", default="sm_80")
    parser.add_argument("--device", default="a100")
    args = parser.parse_args()

    t0 = time.perf_counter()
    from parakern.counters import default_counters
    from parakern.machine.devices import get_profile
    from parakern.frontend import analyze_file
    from parakern.kernel import Kernel
    import parakern.ir  # noqa: F401  (llvmlite initialisation belongs to the import cost)
    print(f"imports: {time.perf_counter() - t0:.2f} s")

    counters = default_counters(args.target, get_profile(args.device))
    samples = sorted(ROOT.glob("samples/*.c"))
    kernels = {}
    for path in samples:
        (schedule,) = analyze_file(path).schedules
        kernels[path.stem] = Kernel.initial(schedule, args.target)

    for label in ("first pass (cold caches)", "second pass (warm caches)"):
        print(f"\n{label}")
        print(f"{'sample':<11} {'seconds':>8}  " + "  ".join(c.name for c in counters))
        paper_total = 0.0
        for name, kernel in kernels.items():
            start = time.perf_counter()
            measures = [c.measure(kernel) for c in counters]
            elapsed = time.perf_counter() - start
            if name in PAPER:
                paper_total += elapsed
            shown = "  ".join(f"{m.value}" + ("" if m.exact else "~") for m in measures)
            print(f"{name:<11} {elapsed:8.3f}  {shown}")
        print(f"paper samples total: {paper_total:.3f} s (target < 1 s)")
    print(f"\nregisters by {counters[0].measure(next(iter(kernels.values()))).method}; "
          "~ marks an upper bound or estimate")


if __name__ == "__main__":
    main()
