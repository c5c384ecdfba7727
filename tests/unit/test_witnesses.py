"""The witness shown beside each case: a point of the case's region (checked here by exact
substitution, not by z3), small where small values exist (issue 39: `N=2147450882` beside
jacobi1d's second case). That it is the same whatever z3 was asked before in the process:
tests/integration/test_witness_processes.py."""
from __future__ import annotations

from pathlib import Path

import sympy

from parakern.pipeline import Options, analyze

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
PAPER = ["jacobi1d", "matadd", "matmul", "transpose", "polydiv"]


def tree_of(name: str):
    text = (SAMPLES / f"{name}.c").read_text()
    (result,) = analyze(text, f"{name}.c", Options()).results
    return result.tree


def holds(relation, point: dict) -> bool:
    values = {s: sympy.Integer(point[s.name]) for s in relation.free_symbols}
    return bool(relation.xreplace(values) == sympy.true)


def test_jacobi1d_second_case_is_small():
    """It printed N=2147450882, s=65535 at the edge of int's range."""
    witness = tree_of("jacobi1d").cases[1].witness
    assert max(witness[n] for n in ("N", "B", "s", "dim")) <= 64, witness

