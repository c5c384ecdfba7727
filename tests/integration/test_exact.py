"""Terms and relations compiled to Python arithmetic (parakern.symbolic.exact) give exactly what sympy's
substitution gives: the dispatcher's relations (dispatch._test vs dispatch.truth), and the
launch sizes, facts and time-model quantities the tuner evaluates at every candidate."""
from __future__ import annotations

import random
from pathlib import Path

import pytest
import sympy

from parakern import dispatch
from parakern.launch import launch_of
from parakern.pipeline import analyze
from parakern.symbolic import exact
from parakern.tuning import time_model

ROOT = Path(__file__).resolve().parents[2]


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
            assert test(exact.numbers(env), env) == dispatch.truth(relation.xreplace(env)), (relation, env)


def _points(symbols, rng, count=40):
    for _ in range(count):
        env = {s: sympy.Integer(rng.choice([0, 1, 2, 3, 7, 32, 100, 1024, 65536, rng.randint(-50, 5000)]))
               for s in symbols}
        if rng.random() < 0.2 and symbols:           # a value missing: an expression in both
            env.pop(symbols[0])
        yield env


@pytest.mark.parametrize("name", ["matmul", "jacobi1d", "transpose", "polydiv"])
def test_terms_evaluate_as_sympy_substitutes(name):
    path = ROOT / "samples" / f"{name}.c"
    (result,) = analyze(path.read_text(), str(path)).results
    terms = []
    for case in result.tree.cases:
        launch = launch_of(case)
        terms += [*launch.grid, *launch.block, launch.shared_bytes, launch.threads]
        terms += list(time_model.quantities(case).expressions().values())
    terms += [f.relation for f in result.schedule.facts]
    n = sympy.Symbol("n", integer=True)
    terms += [sympy.ceiling(n * sympy.Rational(5, 3)), sympy.Max(n, 3) / 2, sympy.Mod(n, 7) - n / 4,
              1 / (n - 2), sympy.Float(1.5) * n]
    rng = random.Random(11)
    for term in terms:
        symbols = sorted(sympy.sympify(term).free_symbols, key=str)
        for env in _points(symbols, rng):
            try:
                expected = sympy.sympify(term).xreplace(env)
            except ZeroDivisionError:                # sympy's Mod(x, 0): the same error
                with pytest.raises(ZeroDivisionError):
                    exact.substituted(term, env)
                continue
            assert exact.substituted(term, env) == expected, (term, env)
            if expected.is_Integer:
                assert exact.integer(term, env) == int(expected)
            elif expected.is_Number and expected.is_finite:
                assert exact.ceiling(term, env) == -(-expected.p // expected.q) if expected.is_Rational \
                    else exact.ceiling(term, env) is not None
            else:
                assert exact.integer(term, env) is None and exact.ceiling(term, env) is None
