"""The serial C of bench parts, run ahead into the serial cache that their `parakern bench` runs
read (`--serial-cache`, keyed by the program, the point's scalars and the inputs): on the GPU
machine it runs in the background while other parts use the GPU, so that matmul at n = 4096
(over a minute of serial C a point) costs the run no wall time of its own.

    python bench/serial_prefill.py --out RESULTS [--jobs N] [--quick] PART ...

PART as bench/paper_gpu.py names them (matmul@n4096, ...); every point that can run on an H100
is run, `--jobs` at a time (default: one per core), each timed on its own core as the bench's
--serial-jobs does. Needs no GPU (gcc, the analysis).
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from paper_gpu import QUICK, SUITE, sizes_of, unknown_name, variant_file  # noqa: E402

from parakern.bench import plan as planning  # noqa: E402
from parakern.bench.baseline import Baseline  # noqa: E402
from parakern.machine.devices import get_profile  # noqa: E402
from parakern.pipeline import Options, analyze  # noqa: E402
from parakern.strategies.decisions import strategy_codes  # noqa: E402


def prefill(entry, data, sweep, out: Path, jobs: int) -> int:
    """Runs the serial C of every runnable point of one part into out/serial-cache; the number run."""
    file = variant_file(entry, out)
    here = os.getcwd()
    os.chdir(file.parent)   # as the bench runs: in the file's folder, named by its base name
    try:
        text = file.read_text()
        strategies = strategy_codes() if "--register-tiles" in entry.options else None
        result = analyze(text, file.name, Options(strategies=strategies)).results[0]
        plan = planning.make_plan(result, planning.parse_assignments(data, "--data"),
                                  planning.parse_assignments(sweep), get_profile("h100"), every_case=True)
        with Baseline(text, file.name, result) as base:
            points = {}
            for p in plan.runnable:
                if not base.memory_problem(p.values):
                    points.setdefault(tuple(sorted(base.scalars(p.values).items())), p.values)
            cache = out.resolve() / "serial-cache"

            def one(values):
                scalars, arrays, _ = base.inputs(values)
                return base.run(scalars, arrays, repeat=entry.serial_repeat, cache=cache)

            with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
                list(pool.map(one, points.values()))
            return len(points)
    finally:
        os.chdir(here)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("parts", nargs="+")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    suite = QUICK if args.quick else SUITE
    problem = unknown_name(suite, args.parts)
    if problem:
        parser.error(problem)
    args.out.mkdir(parents=True, exist_ok=True)
    for name, entry, tag, data, sweep in sizes_of(suite, args.parts):
        start = time.monotonic()
        try:
            count = prefill(entry, data, sweep, args.out, args.jobs)
        except planning.PlanError as exc:
            print(f"serial_prefill {name} {tag}: {exc}", file=sys.stderr)
            return 1
        print(f"serial_prefill {name} {tag}: {count} points in {time.monotonic() - start:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
