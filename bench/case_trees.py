"""Whole case-tree time per paper sample, cold (first in a fresh process) and warm.

    .venv/bin/python bench/case_trees.py [--target sm_80]

Each sample runs in its own fresh Python process for the cold figure (imports
excluded, caches empty), then again in that process for the warm one.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAPER = ("matadd", "matmul", "jacobi1d", "transpose", "polydiv")

_CHILD = """
import json, sys, time
from parakern.pipeline import Options, analyze
import parakern.ir, parakern.symbolic.constraints  # imports are not part of the figure
path, target = sys.argv[1], sys.argv[2]
text = open(path).read()
figures = []
for _ in range(2):
    start = time.perf_counter()
    analysis = analyze(text, path, Options(target=target))
    figures.append(time.perf_counter() - start)
tree = analysis.results[0].tree
print(json.dumps({"cold": figures[0], "warm": figures[1], "cases": len(tree.cases),
                  "uncovered": len(tree.uncovered), "height": tree.height,
                  "coverage": tree.coverage.status}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", default="sm_80")
    args = parser.parse_args()
    print(f"{'sample':<10} {'cold s':>7} {'warm s':>7} {'cases':>5} {'holes':>5} {'height':>6}  coverage")
    for name in PAPER:
        out = subprocess.run([sys.executable, "-c", _CHILD, str(ROOT / "samples" / f"{name}.c"), args.target],
                             capture_output=True, text=True, check=True, cwd=ROOT).stdout
        r = json.loads(out.strip().splitlines()[-1])
        print(f"{name:<10} {r['cold']:7.2f} {r['warm']:7.3f} {r['cases']:5d} {r['uncovered']:5d} "
              f"{r['height']:6d}  {r['coverage']}")


if __name__ == "__main__":
    main()
