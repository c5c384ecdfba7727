"""What the z3 side (symbolic/constraints.py) and the printers (symbolic/printing.py) both do to a sympy relation."""
from __future__ import annotations

import functools
import math

import sympy


def relation_of(item) -> sympy.Basic:
    """A sympy boolean from a relation, a model.Fact or anything sympify reads."""
    return sympy.sympify(getattr(item, "relation", item))


@functools.lru_cache(maxsize=16384)     # the dependence tests translate the same relations again
def integral_sides(lhs, rhs):
    """Both sides times the common denominator of their rational coefficients, so that
    integer relations stay in integer arithmetic (`Z >= 3*B/2` becomes `2*Z >= 3*B`)."""
    terms = sympy.Add.make_args(sympy.expand(lhs)) + sympy.Add.make_args(sympy.expand(rhs))
    dens = [t.as_coeff_Mul()[0] for t in terms]
    if not all(d.is_Rational for d in dens):
        return lhs, rhs
    scale = functools.reduce(math.lcm, (int(d.q) for d in dens), 1)
    if scale == 1:
        return lhs, rhs
    return sympy.expand(lhs * scale), sympy.expand(rhs * scale)
