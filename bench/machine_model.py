"""The machine model over the samples and the PolyBench-style corpus, as a table.

    .venv/bin/python bench/machine_model.py [--profiles h100 a100 t4] [--staging]

Per schedule: its cases, on how many of the given GPU profiles each can be picked
(dispatch.reachable), the theoretical ones (no known GPU picks them), the "no kernel fits"
regions and whether z3 proved coverage (launch limits included). The totals line is what
issue 19 asks: no case unreachable on every profile unless it is flagged theoretical.
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

from parakern import dispatch
from parakern.machine.devices import DEFAULT_PROFILES, PROFILES
from parakern.pipeline import Options, analyze

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profiles", nargs="+", default=list(DEFAULT_PROFILES), choices=sorted(PROFILES))
    parser.add_argument("--staging", action="store_true",
                        help="analyse with staging's cost in occupancy judged on --profiles (optimize --staging)")
    args = parser.parse_args()
    options = Options(staging=tuple(args.profiles)) if args.staging else Options()
    programs = sorted((ROOT / "samples").glob("*.c")) + sorted((ROOT / "samples" / "polybench").glob("*.c"))
    totals = dict(schedules=0, cases=0, theoretical=0, reachable_all=0, no_fit=0, proved=0)
    print(f"{'schedule':<28} {'cases':>5} {'on ' + ','.join(args.profiles):>22} {'theoretical':>11} "
          f"{'no-fit':>6} {'coverage':>9} {'s':>6}")
    for path in programs:
        start = time.perf_counter()
        analysis = analyze(path.read_text(), str(path), options)
        for result in analysis.results:
            tree = result.tree
            if tree is None or not tree.cases:
                continue
            every = dispatch.reachable(tree, tuple(sorted(PROFILES)))
            shown = dispatch.reachable(tree, args.profiles)
            theoretical = [k for k, on in every if not on]
            on_shown = sum(1 for _, on in shown if on)
            totals["schedules"] += 1
            totals["cases"] += len(tree.cases)
            totals["theoretical"] += len(theoretical)
            totals["reachable_all"] += sum(1 for _, on in every if on)
            totals["no_fit"] += len(tree.uncovered)
            totals["proved"] += tree.coverage.status == "proved"
            print(f"{result.schedule.id:<28} {len(tree.cases):>5} {on_shown:>22} "
                  f"{','.join(map(str, theoretical)) or '-':>11} {len(tree.uncovered):>6} "
                  f"{tree.coverage.status:>9} {time.perf_counter() - start:6.1f}")
    print(f"\n{totals['schedules']} schedules, {totals['cases']} cases: {totals['reachable_all']} picked on some "
          f"known GPU, {totals['theoretical']} theoretical (flagged in the text, JSON and hover); "
          f"coverage proved (launch limits included) for {totals['proved']} of {totals['schedules']}; "
          f"{totals['no_fit']} 'no kernel fits' regions")


if __name__ == "__main__":
    main()
