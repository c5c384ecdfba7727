"""A case's witness is the same in a fresh process (the CLI) and in one that asked z3 other
questions before (an editor's analysis process after other schedules): it printed other
points from one run to the next (z3's model follows the order its context made terms in,
and the time limits follow the machine's load)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

_CHILD = """
import json, random, sys
import z3
from parakern.pipeline import Options, analyze
if sys.argv[2] == "perturbed":   # questions that have nothing to do with the sample first
    rng = random.Random(1)
    xs = [z3.Int(f"B{i}") for i in range(6)] + [z3.Int("N"), z3.Int("T"), z3.Int("R_B"), z3.Int("s")]
    for _ in range(60):
        a, b, c = rng.sample(xs, 3)
        solver = z3.Then("simplify", "solve-eqs", "smt").solver()
        solver.add(a * b + rng.randint(1, 9) <= c * rng.randint(1, 50), a >= 1, c <= 4096, (a + b) / 3 >= c - 5)
        solver.check()
name = sys.argv[1]
(result,) = analyze(open(f"samples/{name}.c").read(), f"{name}.c", Options()).results
print(json.dumps([case.witness for case in result.tree.cases]))
"""


def witnesses(name: str, mode: str) -> list:
    done = subprocess.run([sys.executable, "-c", _CHILD, name, mode], cwd=ROOT, capture_output=True, text=True,
                          timeout=300, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("name", ["matmul", "transpose"])
def test_witnesses_do_not_depend_on_what_z3_was_asked_before(name: str):
    assert witnesses(name, "perturbed") == witnesses(name, "fresh")
