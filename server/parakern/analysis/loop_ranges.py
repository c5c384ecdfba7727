"""The values loop variables give an expression: its least and greatest over the loops' ranges
(linear facts the z3 questions use where products defeat it), and the starts of a grid-stride
loop (`for (i = b*B + t; i < n; i += G*B)`), whose threads together run each i once."""
from __future__ import annotations

import sympy


def corner_range(index, bounds: dict) -> list:
    """[lo <= L, L <= hi] for the part L of one expression that reads loop variables, where L
    grows with each of them: its values at the loops' first and last iterations (bounds:
    variable -> [its loop], each with lo, hi and a step where it has one); [] where its corners
    are not its extremes."""
    expr = sympy.expand(index)
    loop_vars = [v for v in expr.free_symbols if v.name in bounds and len(bounds[v.name]) == 1]
    if not loop_vars or any(getattr(bounds[v.name][0], "step", 1) != 1 for v in loop_vars):
        return []
    loop_part = sympy.Add(*[t for t in sympy.Add.make_args(expr) if t.free_symbols & set(loop_vars)])
    if not all(_positive_term(t) for t in sympy.Add.make_args(loop_part)):
        return []
    low = {v: bounds[v.name][0].lo for v in loop_vars}
    high = {v: bounds[v.name][0].hi - 1 for v in loop_vars}
    if any(sympy.sympify(x).free_symbols & set(loop_vars) for x in [*low.values(), *high.values()]):
        return []   # a bound that reads another of these loops: not a box, the corners are not the extremes
    return [sympy.Le(sympy.expand(loop_part.xreplace(low)), loop_part),
            sympy.Le(loop_part, sympy.expand(loop_part.xreplace(high)))]


def _positive_term(term) -> bool:
    coeff, rest = term.as_coeff_Mul()
    return coeff > 0 and all(f.is_Symbol or (f.is_Pow and f.base.is_Symbol and f.exp.is_Integer and f.exp > 0)
                             for f in sympy.Mul.make_args(rest))


def start_window(lo, step, schedule) -> "sympy.Expr | None":
    """L0 where the starts `lo` of a serial loop of step `step` fill [L0, L0 + step) as the
    schedule's parallel loops run (lo = b*B + t: [0, G*B) for G blocks of B threads): the
    threads together run each value of [L0, hi) once, whatever B and G. None for any other
    loop (stride_start)."""
    found = _starts(lo, step, schedule)
    return found[0] if found is not None and found[1] == 0 else None


def stride_start(lo, step, schedule) -> "sympy.Expr | None":
    """L0 where the starts `lo` of a serial loop of step `step` lie in [L0, L0 + step) as the
    schedule's parallel loops run: a grid-stride loop, unrolled too (step 2*G*B, two elements an
    iteration). Its average thread runs about (hi - L0) / step iterations (its mean start gives
    none where the grid has more threads than values), and a warp's lanes run its m-th iteration
    together, each at its own start. None for a loop of step 1, a start that reads no parallel
    loop or reads a serial one, or starts that may be a step or more apart."""
    found = _starts(lo, step, schedule)
    return found[0] if found is not None else None


def _starts(lo, step, schedule) -> "tuple | None":
    """(L0, step - the width of the starts' range): the width is at most the step where the
    difference is a polynomial with no negative coefficient (the parameters are >= 0)."""
    bounds = {lp.var: [lp] for lp in schedule.loops}
    names = {x.name for x in sympy.sympify(lo).free_symbols}
    if step == 1 or not names & set(bounds) or names & {lp.var for lp in (*schedule.between, *schedule.serial)}:
        return None
    corners = corner_range(lo, bounds)
    if not corners:
        return None
    low, high = corners[0].lhs, corners[1].rhs
    slack = sympy.expand(step - (high - low + 1))
    if slack.free_symbols:
        if not slack.is_polynomial() or any(c < 0 for c in sympy.Poly(slack, *slack.free_symbols).coeffs()):
            return None
    elif slack < 0:
        return None
    rest = sympy.Add(*[t for t in sympy.Add.make_args(sympy.expand(lo))
                       if not {x.name for x in t.free_symbols} & set(bounds)])
    return sympy.expand(low + rest), slack
