"""The dispatcher's relations, compiled to Python arithmetic (dispatch._test), decide exactly
as sympy's substitution does (dispatch.truth), on random points and machines."""
from __future__ import annotations

import random
from pathlib import Path

import pytest
import sympy

from parakern import dispatch
from parakern.pipeline import analyze

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("name", ["jacobi1d", "transpose", "polydiv", "stencil2d"])
def test_compiled_relations_decide_as_sympy(name):
    path = ROOT / "samples" / f"{name}.c"
    (result,) = analyze(path.read_text(), str(path)).results
    relations = [r for c in result.tree.cases for r in c.constraints.relations + c.needs.relations]
    relations += [sympy.Le(sympy.floor(sympy.Symbol("n", integer=True) / 3), sympy.Rational(7, 2)),
                  sympy.Eq(sympy.Mod(sympy.Symbol("n", integer=True), 4), 1)]
    rng = random.Random(7)
    for relation in relations:
        test = dispatch._test(relation)
        symbols = sorted(relation.free_symbols, key=str)
        for _ in range(40):
            env = {s: sympy.Integer(rng.choice([0, 1, 2, 3, 7, 32, 100, 1024, 65536, rng.randint(-50, 5000)]))
                   for s in symbols}
            if rng.random() < 0.2 and symbols:       # a value missing: undecided in both
                env.pop(symbols[0])
            assert test(dispatch._numbers(env), env) == dispatch.truth(relation.xreplace(env)), (relation, env)
